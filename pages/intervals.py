"""Step 4: the interval overlap plot of the top slices under the Slices page's sort and filters,
and the rows the findings among them share."""
from __future__ import annotations

import streamlit as st

from divergence import DivergenceInputError
from divergence.present.figures import interval_figure, overlap_figure
from divergence.present.formats import FINDING_VERDICTS, GLOSSARY, format_count, format_percent, md_text
from ui import cache, render, state
from ui.state import K

render.page_setup()

st.title("Intervals")
table, rid = render.result_or_stop("intervals")
st.caption(render.result_caption(table))
metric = render.metric_choice(table)
st.caption("Compare intervals, not points: a slice whose interval overlaps the whole-dataset band is not a "
           "finding. Open dots are indicative (below the minimum size); stars mark the distinct findings. Click a slice to open it on the Slices page.")
c1, _ = st.columns([1, 4])
with c1:
    state.bound(st.selectbox, "Slices drawn", K.TOP_N, options=[10, 25, 50, 100, 250, 500],
                format_func=lambda k: f"top {k}")
try:
    view = render.current_view(table, rid)
    fig = interval_figure(table, view.rows.head(100), metric, level_label=render.interval_level(table))
except DivergenceInputError as exc:
    st.error(md_text(exc))
    st.stop()
st.caption(f"The top {format_count(min(len(view.rows), 100))} of {format_count(view.n_matching)} slices under the "
           "Slices page's sort and filters" + (" (at most 100 drawn)." if len(view.rows) > 100 else "."))
event = st.plotly_chart(fig, key="interval_plot", on_select="rerun", selection_mode="points",
                        config={"displayModeBar": False})
row_index = render.clicked_point(event)
if row_index is not None:
    render.choose(metric, str(table.itemsets[int(row_index)]))
    st.switch_page("pages/slices.py")

# ---------------------------------------------------------------- overlap of the findings
st.subheader("Rows the findings share")
verdict = table.statistics(metric).verdict  # the view's rows are the table's positions
found = view.rows[[v in FINDING_VERDICTS for v in verdict[view.rows.index]]] if verdict is not None else view.rows
o1, _ = st.columns([1, 4])
with o1:
    k = st.selectbox("Findings compared", [5, 10, 15, 20], index=1, key="w:overlap_n",
                     format_func=lambda n: f"top {n}")
found = found.head(k)
if len(found) < 2:
    st.info("Fewer than two findings in this view: nothing to compare.")
else:
    itemsets = found["itemset"].tolist()
    shared = cache.shared_rows(rid, tuple(itemsets), table)
    covered = cache.covered_rows(rid, tuple(itemsets), table)
    largest = int(shared.to_numpy().diagonal().max())
    if covered is not None:
        st.markdown(f"These {len(itemsets)} findings hold **{format_count(covered)} distinct rows** "
                    f"({format_percent(covered / table.n_rows)} of all); the largest alone holds {format_count(largest)}. "
                    "A dark block is one cohort described several ways.")
    st.plotly_chart(render.themed(overlap_figure(shared, template=None)), key="overlap_chart",
                    config={"displayModeBar": False})
    st.caption(f"{GLOSSARY['overlap']} The findings are the top {len(itemsets)} of the Slices page's table "
               "(verdicts defect, hard cohort, above, below, better).")
