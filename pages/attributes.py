"""Step 5: how much each item (attribute=value) moves the metric, alone and across all slices."""
from __future__ import annotations

import streamlit as st

from divergence.present.figures import item_values_figure
from ui import cache, render

render.page_setup()

st.title("Attributes")
table, rid = render.result_or_stop("attributes")
st.caption(render.result_caption(table))
left = [n.removeprefix("Left out ") for n in table.notes if n.startswith("Left out ")]
if left:
    with st.expander(f"Not sliced by: {len(left)} note{'s' if len(left) != 1 else ''} on the columns left out of the "
                     "default attributes (add any back on the Data page)"):
        st.markdown("\n".join(f"- {n[0].upper() + n[1:]}" for n in left))
metric = render.metric_choice(table)
binary = table.metric(metric).binary
values = cache.item_values(rid, metric, table)
c1, _ = st.columns([1, 3])
top = c1.select_slider("Items shown", options=[10, 15, 25, 50, 100], value=15, key="w:items_shown")
charts = {"individual": "Individual divergence: the item's own slice against the whole dataset",
          "global": "Global divergence: the item's Shapley value over every slice mined, i.e. its average "
                    "contribution wherever it appears"}
for col, (value, caption) in zip(st.columns(2), charts.items()):
    with col:
        st.plotly_chart(render.themed(item_values_figure(values, value=value, metric=metric, top=top, binary=binary,
                                                         template=None)),
                        key=f"{value}_chart")
        st.caption(caption + (", in percentage points." if binary else "."))
