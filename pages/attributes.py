"""Step 5: how much each item (attribute=value) moves the metric, alone and across all slices."""
from __future__ import annotations

import streamlit as st

import ui_support as ui
from divergence.figures import item_values_figure
from ui_support import K

ui.page_setup()

st.title("Attributes")
table, rid = ui.result_or_stop("attributes")
st.caption(ui.result_caption(table))
metric = ui.metric_choice(table)
binary = table.metric(metric).binary
values = ui.item_values(rid, metric, table)
c1, _ = st.columns([1, 3])
top = c1.select_slider("Items shown", options=[10, 15, 25, 50, 100], value=15, key="w:items_shown")
left, right = st.columns(2)
with left:
    st.plotly_chart(ui.themed(item_values_figure(values, value="individual", metric=metric, top=top, binary=binary,
                                                       template=None)),
                    key="individual_chart")
    st.caption("Individual divergence: the item's own slice against the whole dataset"
               + (", in percentage points." if binary else "."))
with right:
    st.plotly_chart(ui.themed(item_values_figure(values, value="global", metric=metric, top=top, binary=binary,
                                                       template=None)),
                    key="global_chart")
    st.caption("Global divergence: the item's Shapley value over every slice mined, i.e. its average "
               "contribution wherever it appears" + (", in percentage points." if binary else "."))
