"""What the pages draw alike: each page's frame (the run's status, the result or a stop), captions,
the metric shown, the Slices page's view (sort, filters) and its slice table, the open slice and
its figures, and the built-in data's planted findings in one click.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import pandas as pd
import streamlit as st

import divergence
from divergence import DivergenceInputError, SliceTable, vocabulary
from divergence.budget import TIME_CUT
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, DEMO_TRUTH
from divergence.present.formats import (
    column_help,
    format_count,
    format_number,
    format_percent,
    md_text,
    metric_label,
    rgba,
    verdict_color,
    verdict_legend,
)
from divergence.present.views import (
    SliceView,
    default_ascending,
    display_frame,
    display_sort_columns,
    redundancy_epsilon,
    sort_options,
)
from divergence.stats.min_size import min_size_derivation
from ui import cache, data, job, run, settings, state
from ui.state import BUILT_IN, DEMO_SETTINGS, K

# ----------------------------------------------------------------------------- each page's frame


def page_setup() -> None:
    """First line of every page. A page opened by its URL as the first request after the
    server starts runs without app.py (Streamlit's legacy pages/ mode, until app.py calls
    st.navigation once): send it through app.py instead of failing.

    Takes a scan that finished into the session, and keeps a place at the top of the page for
    the progress of a running one."""
    if K.FRAME not in st.session_state:
        st.switch_page("app.py")
    job.collect_scan()
    job.keep_status_slot()


def in_app_test() -> bool:
    """Whether the script runs under AppTest (no browser: nothing to warm for it)."""
    from streamlit import config

    return bool(config.get_option("global.appTest"))


def _level(confidence: float) -> str:
    """A confidence level as the Outcome page offers it: 95%, 99.9% (never rounded to 100%)."""
    return f"{confidence:.1%}".replace(".0%", "%")


def budget_notes(table: SliceTable) -> list[str]:
    """The result's note that the budget cut the scan short ("complete up to k items; …")."""
    if table.lattice.complete_length is None:
        return []
    return [n for n in table.notes if "budget" in n]


def run_messages() -> None:
    """The last run's error, or its notice (a scan cancelled)."""
    err = state.get(K.RUN_ERROR)
    if err:
        st.error(md_text(err))
    if state.get(K.RUN_NOTICE):
        st.info(md_text(state.get(K.RUN_NOTICE)))


def show_run_status(where: str = "page") -> None:
    """The last run's error or notice (a budget's note too), and a notice (with a run button) when the
    data or the settings in use are not those the results came from: results never pass for another
    data set's."""
    run_messages()
    res = state.result()
    if res is not None:
        for note in budget_notes(res["table"]):
            if note.startswith(TIME_CUT):  # this table depends on the machine's load: said on every page
                st.error(f"**Cut by the time limit, not by the budget.** {md_text(note)}", icon=":material/timer_off:")
            else:
                st.warning(md_text(note), icon=":material/speed:")
    if res is not None and settings.is_stale() and not job.scan_running():
        c1, c2 = st.columns([4, 1])
        if state.data_changed():
            c1.warning(f"These results are from {md_text(res.get('data_label', 'the previous data'))}. The data now in "
                       f"use is {md_text(data.data_label())}: run the scan to see its slices.", icon=":material/history:")
        else:
            c1.info("The settings changed since these results were computed: they show the settings of the last "
                    "run (Export page: the report states them).")
        c2.button("Run again", key=f"rerun-{where}", type="primary", on_click=run.start_scan)


def result_or_stop(where: str):
    """The stored result's table and id, the run status shown, or a note and a stop."""
    res = run.ensure_result()
    show_run_status(where)
    if res is None:
        st.info("No results yet: check the settings on the Data and Outcome pages, then run the scan.")
        st.stop()
    return res["table"], res["id"]


def result_plan_text(res: dict) -> str:
    """The settings a result came from, as slice-plan text stamped with the time of the run."""
    return cache.plan_yaml(res["plan"], res.get("created"))


# ----------------------------------------------------------------------------- words and figures


def metric_name(m: str) -> str:
    """A metric as people read it: 'fpr' -> 'FPR: false-positive rate'."""
    return metric_label(m, long=True)


def metric_radio(metrics: list[str], key: str, after=None) -> str:
    """The metric chosen among ``metrics``, kept in ``key`` (a radio when there are several; ``after``
    runs when another is chosen)."""
    if len(metrics) > 1:
        state.bound(st.radio, "Metric", key, options=metrics, horizontal=True,
                    format_func=lambda m: md_text(metric_name(m)), after=after)
    return shown_metric(metrics, key)


def shown_metric(metrics: list[str], key: str = K.VIEW_METRIC) -> str:
    """The metric chosen in ``key`` when the result has it, else its first."""
    return state.get(key) if state.get(key) in metrics else metrics[0]


def metric_choice(table: SliceTable) -> str:
    """The metric shown (a radio when there are several); a new one resets the sort."""
    # another metric starts from its default sort; the slice chosen for each metric is kept
    return metric_radio(table.metric_names, K.VIEW_METRIC, after=lambda: st.session_state.update({K.SORT_BY: None}))


def result_caption(table: SliceTable, res: dict | None = None) -> str:
    """One line on what the result came from: its data (as it was when the scan ran), the kind
    of search, the support, confidence, correction and replication."""
    a = table.assessment
    res = res if res is not None else state.result()
    kind = "an exploratory search" if a is None or a.exploratory else "a pre-registered slice plan"
    rep = f"; replicated on {md_text(a.replication)}" if a is not None and a.replication else "; no replication data"
    engine = "; scanned by DuckDB, intervals analytic" if table.engine == "duckdb" else ""
    caption = (res or {}).get("data_caption", "").removeprefix("Data: ").rstrip(".")
    where = f"Results of {caption}: " if caption else ""
    return (f"{where}{kind}, {len(table) - 1:,} slices with support ≥ {table.support_text}; "
            f"{_level(a.confidence if a else 0.95)} confidence, "
            f"{vocabulary.CORRECTION_CHOICES.get(a.correction if a else None, '')}{rep}"
            f"{engine}.")


def interval_level(table: SliceTable) -> str:
    """The level of the intervals drawn, named for the axis of the interval plot."""
    a = table.assessment
    return (f"{_level(a.confidence if a else 0.95)} intervals per slice (not adjusted); significance uses "
            f"{vocabulary.CORRECTION_SHORT.get(a.correction if a else None, '')} q-values")


def score_note(df: pd.DataFrame, column: str | None, threshold: float | None) -> str | None:
    """A score column's range, and the share of rows the threshold predicts positive."""
    if column is None or column not in df.columns or not pd.api.types.is_numeric_dtype(df[column]):
        return None
    values = df[column].dropna()
    if not len(values):
        return None
    text = f"`{column}` ranges from {values.min():g} to {values.max():g}"
    if threshold is None:
        if 0 <= values.min() and values.max() <= 1:
            share = float((values >= 0.5).mean())
            return text + (f", within [0, 1]: without a threshold, rows at or above 0.5 are predicted positive "
                           f"({format_percent(share)} of the rows), and the result's notes say so.")
        return text + ": set the threshold (a score at or above it predicts positive)."
    share = float((values >= threshold).mean())
    return text + f"; at {threshold:g}, {format_percent(share)} of the rows are predicted positive."


def min_size_sentences() -> list[str]:
    """How the minimum slice size follows from δ and the confidence, for each metric of the
    last result, under the settings as they are now (the engine's derivation)."""
    res = state.result()
    if res is None or state.data_changed():  # n_min is derived from a result of the data in use
        return []
    table = res["table"]
    out = []
    for m in table.metrics:
        info = table.assessment.min_size.get(m.name) if table.assessment is not None else None
        if info is None:
            continue
        try:
            now = min_size_derivation(table.overall(m.name), info.sigma, m.binary, state.get(K.DELTA),
                                      float(state.get(K.CONFIDENCE)), m.name, n_total=info.n_total,
                                      tests=info.tests, correction=str(state.get(K.CORRECTION) or info.correction),
                                      skew=float(getattr(m, "skew", 0.0)) if not m.binary else 0.0)
        except DivergenceInputError as exc:
            out.append(str(exc))
            continue
        out.append(f"**{m.name}**: {now.text} {now.power_text}".rstrip())
    return out


def support_offers(table: SliceTable) -> list[tuple[str, str, float]]:
    """Per metric and size (``n_min``, ``n_power``), the support at which a typical slice holds that
    many measured rows (engine's rule)."""
    out = []
    for name in table.metric_names:
        for size in ("n_min", "n_power"):
            try:
                out.append((name, size, divergence.support_for_min_size(table, name, size)))
            except (KeyError, TypeError, DivergenceInputError):
                continue
    return out


def themed(fig):
    """Drop a figure's fixed template so Streamlit's light or dark theme styles it."""
    fig.update_layout(template=None)
    return fig


def clicked_point(event) -> int | None:
    """The row index (a point's customdata) of the point clicked on a chart drawn with
    ``on_select="rerun"``, or None."""
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    index = points[0].get("customdata") if points else None
    if isinstance(index, list):
        index = index[0]
    return index


# ----------------------------------------------------------------------------- the view: sort, filters, top N


def current_view(table: SliceTable, result_id: str, top_n: int | None = None) -> SliceView:
    """The Slices page's view (sort, filters, top N) of a result, as the settings say."""
    metric = state.get(K.VIEW_METRIC) or table.metric_names[0]
    options = sort_options(table, metric)
    column = options.get(state.get(K.SORT_BY))
    ascending = bool(state.get(K.SORT_ASC))
    if column is None:  # no sort chosen for this result: the default order, from its first entry
        column = table.default_sort_column(metric)
        ascending = default_ascending(column)
    lengths = length_filter()
    # filters naming verdicts or columns this result does not have (set on another result) do not apply
    present = cache.verdicts_in(result_id, metric, table)
    verdicts = [v for v in (state.get(K.F_VERDICTS) or []) if v in present] or None  # none: every verdict
    attributes = tuple(a for a in (state.get(K.F_ATTRIBUTES) or ()) if a in table.attributes)
    meets = {"meets": True, "below": False}.get(state.get(K.F_MIN_SIZE))
    # ε is set in units of the metric's spread: the same setting hides as much for any metric
    eps = redundancy_epsilon(table, metric, float(state.get(K.REDUNDANCY))) if state.get(K.F_PRUNE) else 0.0
    return cache.view_of(result_id, metric, column, ascending,
                         tuple(verdicts) if verdicts is not None else None, meets,
                         tuple(lengths) if lengths else None, attributes,
                         int(top_n or state.get(K.TOP_N)), eps, table)


def length_filter() -> tuple[int, int] | None:
    """The items-per-slice filter as (fewest, most), or None for every length. The most is
    stored as None when the user left the slider at its right end: a later result with longer
    slices shows them all (the slider never shrinks a filter to the longest slice seen)."""
    lengths = state.get(K.F_LENGTHS)
    if not lengths:
        return None
    lo, hi = lengths
    if int(lo) <= 1 and hi is None:
        return None
    return int(lo), int(hi) if hi is not None else 10 ** 6


def length_slider(longest: int) -> None:
    """The items-per-slice slider over 1..longest of this result (the filter stays open-ended at its right end)."""
    lo, hi = state.get(K.F_LENGTHS) or (1, None)
    lo = max(1, min(int(lo), longest))
    hi = longest if hi is None else max(lo, min(int(hi), longest))

    def changed(value: tuple[int, int]) -> None:
        a, b = value
        st.session_state[K.F_LENGTHS] = (int(a), None if int(b) >= longest else int(b))

    state.keyed_widget(st.slider, "Items per slice", "w:f_lengths", (lo, hi), min_value=1, max_value=longest, step=1,
                       on_change=changed)


# ----------------------------------------------------------------------------- the slice table and the open slice

#: widget key of the slice table: its selection state says which row or header was clicked. A
#: header click that sorts gives the next table a new key (``grid_key``): the browser leaves a
#: clicked column selected, and a click on a selected column sends nothing, so the table drawn
#: after a sort starts with no column selected and a second click on the same header reaches the app
GRID = "slice_grid"
GRID_EPOCH = "slice_grid_epoch"


def grid_key() -> str:
    """The slice table's current widget key (see :data:`GRID`)."""
    return f"{GRID}-{int(st.session_state.get(GRID_EPOCH, 0))}"


def chosen(metric: str) -> str | None:
    """The slice last clicked in the table for ``metric`` (kept when another metric is shown)."""
    sel = state.get(K.SELECTED)
    return sel.get(metric) if isinstance(sel, dict) else None


def choose(metric: str, itemset: str | None) -> None:
    """Open a slice from the table (or a page that shows the table's slices); the editor follows."""
    sel = dict(state.get(K.SELECTED)) if isinstance(state.get(K.SELECTED), dict) else {}
    sel[metric] = itemset
    st.session_state.update({K.SELECTED: sel, K.TYPED: None})


def type_slice(items: list[str] | None) -> None:
    """Open a slice typed by hand (a list of 'attr=value'); None: back to the table's slice."""
    st.session_state[K.TYPED] = list(items) if items else None


def _selection(value) -> dict:
    """A slice-table selection as plain lists: {'rows': [...], 'columns': [...], 'cells': [...]}."""
    sel = (value["selection"] if value is not None and "selection" in value else {}) or {}
    return {k: [list(c) if isinstance(c, (list, tuple)) else c for c in (sel.get(k) or [])]
            for k in ("rows", "columns", "cells")}


def read_table_click(table: SliceTable, metric: str) -> None:
    """Apply the last click on the slice table, before anything is drawn: a cell or a row opens
    that slice; a column header sorts every slice of the result by that column (a click on the
    sorted column reverses the order). A click is what changed since the selection the table had."""
    ss = st.session_state
    shown = state.get(K.GRID_SHOWN)
    key = (shown or {}).get("key") or grid_key()
    if (not shown or key not in ss or shown.get("metric") != metric
            or shown.get("result") != (state.result() or {}).get("id")):
        return
    now, seen = _selection(ss[key]), shown.get("seen") or _selection(None)
    if now["columns"] != seen["columns"]:
        clicked = (now["columns"] or seen["columns"])[0]  # a click on a selected header deselects it
        frame_col = display_sort_columns(table, metric).get(clicked)
        label = {v: k for k, v in sort_options(table, metric).items()}.get(frame_col)
        if label is not None:
            if label == state.get(K.SORT_BY):
                ss[K.SORT_ASC] = not bool(state.get(K.SORT_ASC))
            else:
                ss.update({K.SORT_BY: label, K.SORT_ASC: default_ascending(frame_col)})
        ss[GRID_EPOCH] = int(ss.get(GRID_EPOCH, 0)) + 1  # the next table: no column selected
        return
    r = None
    if now["cells"] and now["cells"] != seen["cells"]:
        r = now["cells"][-1][0]
    elif now["rows"] and now["rows"] != seen["rows"]:
        r = now["rows"][0]
    itemsets = shown.get("itemsets", [])
    if r is not None and 0 <= int(r) < len(itemsets):
        choose(metric, itemsets[int(r)])


def items_of(table: SliceTable, itemset: str) -> list[str]:
    """A slice's items ('attr=value'), read with the result's own parser (values may hold commas)."""
    codes = table.parse_itemset(itemset)
    return [table.item_labels[a][v] for a, v in enumerate(codes) if v >= 0]


def open_slice(table: SliceTable, view: SliceView, metric: str, known: set[str] | None = None
               ) -> tuple[list[str], str]:
    """The slice the detail shows, as items, and where it comes from: 'typed' (the slice editor,
    whatever the table shows) or 'table': the row clicked for this metric while the table still
    shows it, else the table's first distinct finding, else its first row (a sort, a filter or a new
    scan never leaves a slice open that the table no longer holds). ``known``: the items a slice may use (default: the
    result's); a typed slice using any other (a new scan of other columns) is dropped."""
    typed = state.get(K.TYPED)
    if typed:
        if known is None:
            known = {f"{b.name}={lab}" for b in table.bins for lab in b.labels}
        from divergence.prepare.typed_cuts import looks_like_cut

        if all(i in known or looks_like_cut(i) for i in typed):  # a cut typed by hand: measured from the rows
            return list(typed), "typed"
        type_slice(None)  # items the new result does not have
    itemsets = view.rows["itemset"].tolist()
    pick = chosen(metric)
    if pick not in itemsets:  # nothing clicked: the table's first distinct finding, else its first row
        col = f"{metric}_finding"
        found = view.rows.loc[view.rows[col].fillna(False).astype(bool), "itemset"] if col in view.rows else []
        pick = found.iloc[0] if len(found) else (itemsets[0] if itemsets else None)
    return (items_of(table, pick) if pick else []), "table"


def _split_side(side: int) -> pd.DataFrame | None:
    try:
        return settings.split_frames()[side]
    except DivergenceInputError:
        return None


def mined_rows(res: dict) -> pd.DataFrame | None:
    """The rows the result mined (for items of columns left out of the scan), when the data in
    use is still the result's: every row (the result knows which it measured: a held-out share and
    rows that chose tree cut points are set aside), or the mined side of a split; None for a local path."""
    if state.data_changed() or state.is_large() or settings.is_stale():
        return None
    kind = state.get(K.REPLICATION)
    if kind == "split":
        return _split_side(0)
    return state.get(K.FRAME)


def replication_rows() -> pd.DataFrame | None:
    """The rows the result's slices were confirmed on (a second file or a split), when known."""
    if state.data_changed() or settings.is_stale():
        return None
    kind = state.get(K.REPLICATION)
    if kind == "file":
        return state.get(K.REPLICATE_FRAME)
    if kind == "split":
        return _split_side(1)
    return None


def slice_grid(table: SliceTable, view: SliceView, metric: str, open_itemset: str | None, *,
               height: int | None = None) -> None:
    """The slice table: click a header to sort every slice by it, click a row to open it. The
    open slice's row stays selected across reruns; headers explain their column on hover."""
    shown = display_frame(table, view.rows, metric, also=[view.sort_by])
    itemsets = view.rows["itemset"].tolist()
    sorted_col = next((c for c, f in display_sort_columns(table, metric).items() if f == view.sort_by), None)
    arrow = " ▲" if view.ascending else " ▼"
    widths = {"Slice": 300, "Verdict": 150, "Interval": 112, "Bootstrap": 112, "Replication": 160, "Finding": 280}
    # a column without a set width is as wide as its header, the sort arrow and the column menu need
    # (left to the grid, a 4-digit column cut 'Rows ▼' to 'Ro' and put the menu where a click sorts)
    config = {c: st.column_config.TextColumn(c + (arrow if c == sorted_col else ""), help=column_help(c),
                                             width=widths.get(c) or 8 * len(c + arrow) + 44, pinned=c == "Slice",
                                             alignment="left" if c in ("Slice", "Verdict", "Finding") else "right")
              for c in shown.columns}
    # the verdict and whether the slice is a finding or explained by one beside the slice: what a reader
    # needs first, never scrolled out of view at 1280 px (a spillover row's 'above' with its 'explained by')
    order = ["Slice"] + [c for c in ("Verdict", "Finding") if c in shown.columns] + [
        c for c in shown.columns if c not in ("Slice", "Verdict", "Finding", "Order")] + (
        ["Order"] if "Order" in shown.columns else [])
    # the open slice's row selected; no column (the sorted one carries the arrow: a selected column
    # would swallow the next click on it). The table takes a selection from here only when it differs
    # from the one sent before; otherwise it keeps its own (what the browser reported)
    key = grid_key()
    desired = {"rows": [itemsets.index(open_itemset)] if open_itemset in itemsets else [], "columns": [],
               "cells": []}
    previous = state.get(K.GRID_SHOWN) or {}
    reported = _selection(st.session_state.get(key)) if key in st.session_state else desired
    seen = reported if desired == previous.get("sent") and key == previous.get("key") else desired
    st.session_state[key] = {"selection": desired}
    st.session_state[K.GRID_SHOWN] = dict(itemsets=itemsets, sent=desired, seen=seen, metric=metric, key=key,
                                          result=(state.result() or {}).get("id"))
    styled = shown.style.map(lambda v: f"background-color: {rgba(verdict_color(str(v).split(' ·')[0]), 0.28)}",
                             subset=["Verdict"]) if "Verdict" in shown.columns else shown
    st.dataframe(styled, key=key, on_select="rerun", selection_mode=["single-row", "single-column", "single-cell"],
                 hide_index=True, column_config=config, column_order=order,
                 height=height or min(38 + 35 * max(len(shown), 1), 460), placeholder="–")


def verdict_legend_row(present) -> None:
    """The verdicts of the result, right under the table: a colour chip and a sentence each."""
    legend = verdict_legend(present)
    if not legend:
        return
    for col, (v, colour, text) in zip(st.columns(len(legend)), legend):
        col.caption(f"<span style='display:inline-block;width:.8em;height:.8em;border-radius:.2em;"
                    f"background:{colour};margin-right:.35em'></span>**{v}**: {text}", unsafe_allow_html=True)


@st.cache_resource(show_spinner=False, max_entries=64)
def slice_figures(result_id: str, items: tuple[str, ...], metric: str, delta: float | None, _measured):
    """The open slice's Shapley chart and lattice (the lattice None with the reason when it cannot be
    drawn), built once per slice and metric: a sort or a filter that keeps the slice open redraws nothing."""
    from divergence.present.figures import contribution_figure, lattice_figure

    binary = _measured.table.metric(metric).binary
    contrib = cache.slice_contributions(result_id, items, metric, _measured)
    bars = themed(contribution_figure(contrib, binary=binary, template=None))
    try:
        lattice = themed(lattice_figure(_measured.table, _measured.itemset, metric=metric, threshold=delta,
                                        template=None))
    except DivergenceInputError as exc:
        return bars, None, str(exc)
    return bars, lattice, ""


#: session-state key: the open slice's charts were drawn once in this session (its browser holds Plotly's code)
_CHARTS_DRAWN = "_charts_drawn"
#: a component with no look of its own that sends ``painted`` once the browser has painted the page showing it (one
#: requestAnimationFrame runs before that frame, the timeout after it), and then only when no script run is going
#: on or asked for and its page is not on its way out: a rerun asked for after a click elsewhere (a link to
#: another page) would take the place of that click's. It says nothing once its page is gone (another one asked for)
_PAINTED_JS = """
export default function ({ parentElement, setTriggerValue }) {
    const idle = () => {
        const app = document.querySelector('[data-testid="stApp"]');
        const state = app && app.getAttribute("data-test-script-state");
        return !state || state === "notRunning";
    };
    const here = parentElement.host || parentElement;  // a shadow root's element, or the element itself
    const look = () => {
        if (!here.isConnected) return;
        if (idle() && !here.closest('[data-stale="true"]')) {
            setTriggerValue("painted", true);
            return;
        }
        setTimeout(look, 100);
    };
    requestAnimationFrame(() => setTimeout(look, 0));
}
"""


@functools.cache
def _painted_signal():
    """The mounting command of the ``painted`` component (registered once per process)."""
    return st.components.v2.component("divergence_painted", js=_PAINTED_JS)


def _charts_drawn() -> None:
    st.session_state[_CHARTS_DRAWN] = True


def charts_after_paint(draw: Callable[[], None], waiting: str) -> None:
    """Plotly charts drawn by ``draw``: at once, except the first time in a session, where ``waiting`` (a caption)
    holds their place until the browser has painted the page, and ``draw`` then runs in a rerun of this fragment
    alone. The browser runs Plotly's code (4.7 MB) the first time a chart comes: 1-1.5 s of its main thread on a
    loaded 2-core machine, during which nothing else it had not drawn yet appeared (the first finding card's
    button among them: issue 49's first card)."""
    if st.session_state.get(_CHARTS_DRAWN) or in_app_test():  # AppTest has no browser to wait for
        draw()
        return

    @st.fragment
    def charts() -> None:
        if st.session_state.get(_CHARTS_DRAWN):
            draw()
            return
        st.caption(md_text(waiting))
        _painted_signal()(key="charts-painted", on_painted_change=_charts_drawn)

    charts()


def evaluation_panel(result_id: str, table: SliceTable, itemset: str | None, seed: int) -> None:
    """The known metrics (AUC, average precision, F1, balanced accuracy) computed on the open slice's own
    rows, with their bootstrap intervals, beside the whole dataset's (``SliceTable.evaluate``)."""
    from divergence.stats.evaluate import known_names

    names = known_names(table)
    if not names or itemset is None:
        return
    frame = cache.evaluated(result_id, itemset, tuple(names), int(seed), table)
    whole, here = frame.iloc[0], frame.iloc[-1]
    labels = {"auc": "AUC", "average_precision": "Average precision", "f1": "F1", "balanced_accuracy": "Balanced accuracy"}
    st.markdown("**The model on the slice's own rows**")
    cols = st.columns(4)  # as wide as four, whatever the number shown: the figures line up with the ones above
    for col, n in zip(cols, names):
        d = here[f"{n}_divergence"]
        col.metric(labels[n], format_number(here[n]), delta=None if d != d else f"{d:+.3f} vs whole dataset",
                   delta_color="off", help=f"On the slice's {format_count(here['rows'])} rows with its target and the "
                                           "model's output; the whole dataset's beside it.")
        col.caption(f"{frame.attrs['confidence']:.0%} bootstrap [{format_number(here[f'{n}_low'])}, {format_number(here[f'{n}_high'])}]; whole "
                    f"dataset {format_number(whole[n])}")
    st.caption(f"Computed on the slice's own rows (not from the tallies), {frame.attrs['bootstrap']} bootstrap "
               f"resamples (seed {frame.attrs['seed']}); in Python: table.evaluate({{{', '.join(repr(n) + ': ' + repr(n) for n in names)}}}), "
               "or any scikit-learn metric.")


# ----------------------------------------------------------------------------- the built-in data's planted findings

#: what was planted in the built-in dataset (divergence.data.datasets), each reachable in one click
DEMO_CASES = {
    "elevated_fpr": dict(task="classification", metric="fpr", itemset=DEMO_TRUTH["elevated_fpr"],
                         label="FPR: region=South, education=Primary"),
    "defect": dict(task="regression", metric="abs_error", itemset=DEMO_TRUTH["defect"],
                   label="Defect: channel=App"),
    "hard_cohort": dict(task="regression", metric="abs_error", itemset=DEMO_TRUTH["hard_cohort"],
                        label="Hard cohort: employment=Self-employed"),
}
DEMO_STORY = ("The built-in data (10,000 credit applications) has three planted effects: the classifier's "
              "false-positive rate is 35% for region=South, education=Primary (8% elsewhere); the spend "
              "regressor's predictions for channel=App carry a unit bug (+70: a model defect); and the spend of "
              "the self-employed varies three times as much (a hard cohort: the error is high, and so is the best "
              "constant guess).")
_DEMO_REGRESSION = {K.TASK: "regression", K.TARGET: DEMO_ROLES["regression"]["target"],
                    K.PREDICTION: DEMO_ROLES["regression"]["prediction"], K.PRED_KIND: "labels",
                    K.METRICS: list(DEMO_ROLES["regression"]["metrics"]), K.ATTRIBUTES: list(DEMO_ATTRIBUTES)}


def open_demo_case(case: str) -> None:
    """Show one planted finding of the built-in data: its task's settings (scanned if the result
    is not of them), its metric, every filter off, and the slice open."""
    c = DEMO_CASES[case]
    ss = st.session_state
    if state.get(K.TASK) != c["task"] or c["metric"] not in (state.get(K.METRICS) or []):
        state.update(**state.role_defaults())
        state.update(**(DEMO_SETTINGS if c["task"] == "classification" else _DEMO_REGRESSION))
    if settings.is_stale():
        run.run_analysis()
    if state.result() is None or c["metric"] not in state.result()["table"].metric_names:
        return  # the run failed: its error shows on the page
    ss.update({K.VIEW_METRIC: c["metric"], K.SORT_BY: None, K.F_VERDICTS: [], K.F_ATTRIBUTES: [],
               K.F_MIN_SIZE: "all", K.F_LENGTHS: None})
    type_slice(c["itemset"].split(", "))
    st.rerun()


def demo_strip() -> None:
    """On the built-in data: one button per planted finding (what was planted on hover)."""
    if state.get(K.DATA_NAME) != BUILT_IN or (state.result() or {}).get("data_name", BUILT_IN) != BUILT_IN:
        return
    cols = st.columns([1, 2.2, 1.5, 2.1])
    cols[0].markdown("**Planted findings**", help=DEMO_STORY)
    for col, (case, c) in zip(cols[1:], DEMO_CASES.items()):
        if col.button(c["label"], key=f"demo-{case}", width="stretch", help=DEMO_STORY):
            open_demo_case(case)


def csv_safety_toggle() -> None:
    """The CSV downloads' formula guard (on by default): text a spreadsheet would run as a formula
    gets a leading apostrophe; numbers never change."""
    state.bound(st.checkbox, "Guard against spreadsheet formulas", K.CSV_SAFE,
                help="Text cells and column names starting with = + - @, a tab or a carriage return (which a "
                     "spreadsheet would run as a formula, e.g. a column named =HYPERLINK(...)) get a leading "
                     "apostrophe, so the spreadsheet shows them as text. Numbers are never changed. The command "
                     "line does the same unless given --allow-formulas.")
