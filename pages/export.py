"""Step 6: the slice table as CSV, every figure as HTML or PNG, and the settings as a slice plan."""
from __future__ import annotations

import streamlit as st

from divergence import DivergenceInputError
from divergence.present.export import (
    PNG_EXPORTER,
    export_caption,
    figure_html,
    figure_png,
    png_supported,
    table_csv,
    titled_figure,
    warm_png_exporter,
)
from divergence.present.figures import (
    LATTICE_MAX_ITEMS,
    contribution_figure,
    interval_figure,
    item_values_figure,
    lattice_figure,
    slice_table_figure,
)
from divergence.present.formats import format_count, md_text
from divergence.present.views import display_frame
from divergence.report.plan import dump_plan
from ui import cache, data, render, run, settings, state
from ui.state import K

render.page_setup()

st.title("Export")
st.caption("The slice table, every figure and the settings, to share, to archive, or to re-run later.")

res = run.ensure_result()
render.show_run_status("export")


def results_section(res: dict) -> None:
    """The slice table and every figure of the result."""
    table, rid = res["table"], res["id"]
    metric = render.shown_metric(table.metric_names)
    view = render.current_view(table, rid)
    st.caption(render.result_caption(table, res))

    # ---------------------------------------------------------------- tables
    st.subheader("Slice table")
    t1, t2 = st.columns(2)
    safe = bool(state.get(K.CSV_SAFE))
    t1.download_button(f"Every slice ({format_count(len(table))} rows, CSV)", lambda: cache.full_csv(rid, table, safe),
                       file_name="slices.csv", mime="text/csv", icon=":material/table:", on_click="ignore")
    t2.download_button(f"The {format_count(len(view.rows))} slices shown (CSV)",
                       table_csv(view.rows, neutralise_formulas=safe),
                       file_name="slices_shown.csv", mime="text/csv", icon=":material/filter_list:", on_click="ignore")
    st.caption("Every column at full precision; the whole dataset is the first row (its itemset empty).")
    render.csv_safety_toggle()

    # ---------------------------------------------------------------- report
    st.subheader("Report")
    # the report states the data and settings the result came from (not the settings as they are now),
    # so it is the same report for the same result: built once, then cached
    report_args = (rid, render.result_plan_text(res), res.get("data_label", ""), table)
    st.download_button("Slice report (HTML, works offline)", lambda args=report_args: cache.report_html(*args),
                       file_name="slice_report.html", mime="text/html", icon=":material/summarize:", on_click="ignore")
    st.caption("One self-contained page, stating the data and settings these results came from (and their hash): "
               "the findings in plain words (who, what, how sure, what to do), the whole-dataset intervals, the "
               "minimum-size derivation, the slice table (sortable by clicking a column; hover a column for its "
               "meaning), the interval plot, the rows the findings share, the Shapley chart of each finding and the "
               "verdict legend. The command line writes the same report: "
               "`python -m divergence report PLAN DATA --output report.html`.")

    # ---------------------------------------------------------------- figures
    st.subheader("Figures")
    binary = table.metric(metric).binary
    rows = render.mined_rows(res)
    items, _ = render.open_slice(table, view, metric,
                                 known=set(cache.item_options(rid + f"|{rows is not None}", table, rows)["item"]))
    figures = {"slice_table": ("The slice table (as shown)",
                               lambda: slice_table_figure(display_frame(table, view.rows, metric), height=None)),
               "intervals": ("Interval plot",
                             lambda: interval_figure(table, view.rows.head(100), metric,
                                                     level_label=render.interval_level(table)))}
    if items:
        try:
            ms = cache.measured(rid, tuple(items), table, rows, render.replication_rows(),
                                table.assessment.replication if table.assessment is not None else None)
        except DivergenceInputError as exc:
            st.caption(f"The open slice: {md_text(exc)}")
        else:
            size = table.assessment.min_size.get(metric) if table.assessment is not None else None
            delta = size.delta if size is not None else None
            figures["contributions"] = (
                f"Shapley contributions of {ms.itemset}",
                lambda: contribution_figure(cache.slice_contributions(rid, tuple(items), metric, ms), binary=binary))
            if len(items) <= LATTICE_MAX_ITEMS:
                figures["lattice"] = (f"Lattice of {ms.itemset}",
                                      lambda: lattice_figure(ms.table, ms.itemset, metric=metric, threshold=delta))
    values = cache.item_values(rid, metric, table)
    figures["individual_items"] = ("Individual item divergence",
                                   lambda: item_values_figure(values, value="individual", metric=metric,
                                                              binary=binary))
    figures["global_items"] = ("Global item divergence (Shapley)",
                               lambda: item_values_figure(values, value="global", metric=metric, binary=binary))
    can_png = png_supported()
    if not can_png:
        st.caption("PNG export needs kaleido and Chromium (/usr/bin/chromium); HTML works everywhere.")
    elif not render.in_app_test():
        # Chromium starts in the background: the first PNG needs no wait. While it starts, the line is
        # redrawn every second on its own (a fragment), so it never says "starting" once it is ready
        warming = warm_png_exporter() == "warming"

        @st.fragment(run_every=1.0 if warming else None)
        def exporter_status() -> None:
            st.caption({"warming": "PNG: the image maker is starting in the background (a few seconds, once); a PNG "
                                   "asked for meanwhile is drawn as soon as it is ready.",
                        "ready": "PNG: ready (about a second per figure).",
                        "failed": f"PNG: the image maker did not start ({md_text(PNG_EXPORTER.get('error', ''))}); "
                                  "HTML works."}.get(warm_png_exporter(), ""))

        exporter_status()
    data_label = res.get("data_label", "")

    def exported(build, title: str):
        """The figure titled with what it came from (data, metric, settings) and the time of export."""
        return titled_figure(build(), title, export_caption(table, metric, data_label=data_label))

    for name, (title, build) in figures.items():
        c1, c2, c3 = st.columns([3, 1, 1])
        c1.markdown(md_text(title))
        # built when the button is pressed: a page visit draws no figure it does not show
        c2.download_button("HTML", lambda build=build, title=title: figure_html(exported(build, title), title=title),
                           file_name=f"{name}.html", mime="text/html", key=f"html-{name}",
                           icon=":material/code:", on_click="ignore")
        c3.download_button("PNG", lambda build=build, title=title: figure_png(exported(build, title)),
                           file_name=f"{name}.png", mime="image/png", key=f"png-{name}", disabled=not can_png,
                           icon=":material/image:", on_click="ignore")


if res is None:
    st.info("No results to export yet: run the scan first (the slice plan below works without one).")
else:
    results_section(res)

# ---------------------------------------------------------------- slice plan (works without a result)
st.subheader("Slice plan")
st.caption("The settings (column roles, attributes and bins, thresholds, statistics, replication) as a file: "
           "load it here on a later visit to re-run the same analysis on the next evaluation file.")
try:
    plan = settings.current_plan()
except DivergenceInputError as exc:
    st.error(md_text(exc))
    plan = None
p1, p2, p3 = st.columns([1, 1, 2])
if plan is not None:
    # written when the button is pressed: the plan's creation time is the time it is saved
    p1.download_button("Slice plan (YAML)", lambda: dump_plan(plan, stamp=True), file_name="slice_plan.yaml",
                       mime="application/x-yaml", icon=":material/description:", on_click="ignore")
    p2.download_button("Slice plan (JSON)", lambda: dump_plan(plan, format="json", stamp=True),
                       file_name="slice_plan.json", mime="application/json",
                       icon=":material/data_object:", on_click="ignore")
with p3:
    st.file_uploader("Load a slice plan", type=["yaml", "yml", "json"], key="w:plan_upload",
                     on_change=data.on_plan_upload)
    if state.get(K.PLAN_ERROR):
        st.error(md_text(state.get(K.PLAN_ERROR)))
        st.caption("Every setting is unchanged.")
if plan is not None:
    with st.expander("The plan as it stands"):
        st.code(cache.plan_yaml(dump_plan(plan, format="json")), language="yaml")
