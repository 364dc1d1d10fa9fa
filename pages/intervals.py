"""Step 4: the interval overlap plot of the top slices under the Slices page's sort and filters."""
from __future__ import annotations

import streamlit as st

import ui_support as ui
from divergence import DivergenceInputError
from divergence.views import format_count, interval_figure
from ui_support import K

ui.page_setup()

st.title("Intervals")
table, rid = ui.result_or_stop("intervals")
metric = ui.metric_choice(table)
st.caption("Compare intervals, not points: a slice whose interval overlaps the whole-dataset band is not a "
           "finding. Open dots are indicative (below the minimum size). Click a slice to open its detail.")
c1, _ = st.columns([1, 4])
with c1:
    n = ui.bound(st.selectbox, "Slices drawn", K.TOP_N, options=[10, 25, 50, 100, 250, 500],
                 format_func=lambda k: f"top {k}")
try:
    view = ui.current_view(table, rid)
    fig = interval_figure(table, view.rows.head(100), metric, level_label=ui.interval_level(table))
except DivergenceInputError as exc:
    st.error(str(exc))
    st.stop()
st.caption(f"The top {format_count(min(len(view.rows), 100))} of {format_count(view.n_matching)} slices under the "
           "Slices page's sort and filters" + (" (at most 100 drawn)." if len(view.rows) > 100 else "."))
event = st.plotly_chart(fig, key="interval_plot", on_select="rerun", selection_mode="points",
                        config={"displayModeBar": False})
points = (event or {}).get("selection", {}).get("points", []) if event else []
if points:
    row_index = points[0].get("customdata")
    if isinstance(row_index, list):
        row_index = row_index[0]
    if row_index is not None:
        ui.set_settings(**{K.SELECTED: str(table.itemsets[int(row_index)])})
        st.switch_page("pages/slices.py")
