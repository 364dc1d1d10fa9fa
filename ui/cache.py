"""Cached calls into the engine, and the scan results the server keeps.

Each function is keyed on its arguments alone (a data key, settings as JSON, a result's id;
an argument named with a leading underscore is not hashed) and reads no session state, so the
same question gets the same answer from any page. ``st.cache_data`` hands out a copy per call,
``st.cache_resource`` the object itself (large results, kept and never copied). Finished scans
are kept in two :class:`LRU` shared by the sessions: :func:`mined_results` and
:func:`assessed_results`. (The open slice's figures are cached where they are drawn:
``ui.render.slice_figures``.)
"""
from __future__ import annotations

import dataclasses
import json
import os
import threading
from collections import OrderedDict

import pandas as pd
import streamlit as st

import divergence
import divergence.explain.adhoc
from divergence import Settings, SliceTable
from divergence.data.columns import AttributeScreen
from divergence.data.datasets import load_demo
from divergence.data.roles import distinct_values
from divergence.present.cards import findings
from divergence.present.columns import describe_columns
from divergence.present.export import table_csv
from divergence.present.views import SliceView, slice_view
from divergence.report.plan import dump_plan, parse_plan

# ----------------------------------------------------------------------------- work kept off the server

#: a table with more columns than this is described and screened in a worker process: on 100,000
#: columns the screen took minutes, which in the server froze every session
WIDE_COLUMNS = 2_000


def session_alive():
    """Whether this browser session is still connected (a closed tab's work is stopped); None
    outside a server (AppTest)."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not Runtime.exists():
        return None
    runtime, session = Runtime.instance(), ctx.session_id
    return lambda: runtime.is_active_session(session)


def off_server(task: str, *args, label: str = "", **kwargs):
    """A task done in a worker process, this session waiting for it (the server keeps answering
    every other session and its health endpoint meanwhile)."""
    from ui import worker

    with st.spinner(f"{label[:1].upper()}{label[1:]} (in a worker process)…" if label else None):
        return worker.run_task(task, *args, label=label, owner_alive=session_alive(), **kwargs)


def wide(df: pd.DataFrame) -> bool:
    return df.shape[1] > WIDE_COLUMNS


# ----------------------------------------------------------------------------- data and its columns


@st.cache_data(show_spinner=False)
def demo_frame() -> pd.DataFrame:
    """The built-in dataset."""
    return load_demo()


@st.cache_data(show_spinner=False)
def demo_models_frame() -> pd.DataFrame:
    """The built-in dataset with the previous models' predictions, for comparisons."""
    from divergence.data.datasets import load_demo_models

    return load_demo_models()


@st.cache_data(show_spinner=False, max_entries=8)
def column_summary(data_key: str, _df: pd.DataFrame) -> pd.DataFrame:
    """Type, distinct and missing values of each column (a wide table's in a worker)."""
    known = SUMMARIES.get(data_key)
    if known is not None:
        return known
    if wide(_df):
        return off_server("describe", _df, label=f"describing {_df.shape[1]:,} columns")
    return describe_columns(_df)


#: column summaries computed with an upload, in the worker that read it (data key -> summary)
SUMMARIES: dict[str, pd.DataFrame] = {}


@st.cache_data(show_spinner=False, max_entries=64)
def target_values(data_key: str, column: str | None, _df: pd.DataFrame) -> list | None:
    """A column's distinct values (None when it has more than 50, or no column is chosen)."""
    if column is None or column not in _df.columns:
        return None
    return distinct_values(_df[column])


@st.cache_data(show_spinner=False, max_entries=32)
def screen(data_key: str, roles_json: str, _df: pd.DataFrame) -> AttributeScreen:
    """``divergence.screen_attributes`` for the roles given as JSON (``used``: the role columns)."""
    r = json.loads(roles_json)
    if wide(_df):
        return off_server("screen", _df, r.pop("used"), label=f"screening {_df.shape[1]:,} columns", **r)
    return divergence.screen_attributes(_df, r.pop("used"), **r)


@st.cache_data(show_spinner=False, max_entries=64)
def check_roles(data_key: str, roles_json: str, _df: pd.DataFrame) -> list[tuple[str, str, int, bool]]:
    """Build the outcomes for the roles (raises DivergenceInputError naming what is wrong):
    (metric, description, defined rows, binary) for each."""
    outcomes = divergence.build_outcomes(_df, **json.loads(roles_json))
    return [(o.name, o.description, o.defined, o.binary) for o in outcomes]


@st.cache_data(show_spinner=False, max_entries=64)
def bins_of(data_key: str, attributes: tuple[str, ...], bins_json: str, quantile_bins: int, binning: str,
            _df: pd.DataFrame):
    """The items each attribute becomes, and the notes on them (fewer bins than asked: tied quantile
    edges); raises DivergenceInputError for bad bins."""
    d = divergence.discretize(_df, list(attributes), bins=json.loads(bins_json), quantile_bins=quantile_bins,
                              binning=binning)
    return d.bins, d.notes


# ----------------------------------------------------------------------------- the results the server keeps


class LRU:
    """Finished results shared by the sessions of this server, the least recently used dropped
    first: at most ``size`` of them and ``max_bytes`` together (the newest is always kept)."""

    def __init__(self, size: int, max_bytes: int) -> None:
        self.size, self.max_bytes, self._items, self._lock = size, max_bytes, OrderedDict(), threading.Lock()
        self.evictions = 0

    def get(self, key: tuple):
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
            return item[0]

    def put(self, key: tuple, value, nbytes: int = 0) -> None:
        with self._lock:
            self._items[key] = (value, int(nbytes))
            self._items.move_to_end(key)
            evicted = False
            while len(self._items) > 1 and (len(self._items) > self.size
                                            or sum(n for _, n in self._items.values()) > self.max_bytes):
                self._items.popitem(last=False)
                evicted = True
            self.evictions += evicted
        if evicted:  # what the views of a dropped result keep is dropped too (rebuilt when asked again)
            _forget_views()

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


#: memory for the results kept by the server (each kind), in MiB
RESULTS_MIB = int(os.environ.get("DIVERGENCE_RESULTS_MIB", "1024"))


@st.cache_resource(show_spinner=False)
def mined_results() -> LRU:
    """Mining results by (data, scan settings): a statistics setting changed re-assesses only."""
    return LRU(8, RESULTS_MIB << 20)


@st.cache_resource(show_spinner=False)
def assessed_results() -> LRU:
    """Assessed results by (data, scan settings, statistics, replication): a sort, a filter or a
    page change never re-mines, and a setting changed back is answered at once."""
    return LRU(16, RESULTS_MIB << 20)


def _forget_views() -> None:
    """Clear the caches that hold a result's table or its parts (a dropped result is then freed:
    sessions hold their results weakly, see ``ui.state.HeldResult``)."""
    for fn in (verdicts_in, card_findings, shared_rows, covered_rows, item_options, measured):
        fn.clear()


# ----------------------------------------------------------------------------- views of a result


@st.cache_data(show_spinner=False, max_entries=64)
def view_of(result_id: str, metric: str, sort_by: str, ascending: bool, verdicts: tuple | None,
            meets: bool | None, lengths: tuple[int, int] | None, attributes: tuple, top_n: int,
            redundancy: float, _table: SliceTable) -> SliceView:
    """The sorted, filtered top rows (cached: switching pages or widgets never re-sorts)."""
    exclude = redundant_mask(result_id, redundancy, metric, _table) if redundancy > 0 else None
    return slice_view(_table, metric=metric, sort_by=sort_by, ascending=ascending,
                      verdicts=list(verdicts) if verdicts is not None else None, meets_min_size=meets,
                      lengths=lengths, attributes=list(attributes), top_n=top_n, exclude=exclude)


@st.cache_data(show_spinner=False, max_entries=16)
def redundant_mask(result_id: str, eps: float, metric: str, _table: SliceTable):
    """Slices whose divergence one of their subsets already explains within ε."""
    return divergence.redundant_itemsets(_table, eps, metric=metric)


@st.cache_resource(show_spinner=False, max_entries=32)
def verdicts_in(result_id: str, metric: str, _table: SliceTable) -> frozenset:
    """The verdicts a result gives for a metric."""
    verdict = _table.statistics(metric).verdict
    return frozenset(pd.unique(verdict[1:])) if verdict is not None else frozenset()


@st.cache_resource(show_spinner=False, max_entries=16)
def card_findings(result_id: str, metric: str, _table: SliceTable):
    """The findings summary of a result: (cards, how many findings in all)."""
    return findings(_table, metric)


@st.cache_data(show_spinner=False, max_entries=32)
def item_values(result_id: str, metric: str, _table: SliceTable) -> pd.DataFrame:
    """Each item's global Shapley value and individual divergence."""
    return divergence.global_divergence(_table, metric=metric)


@st.cache_data(show_spinner="Computing AUC, F1… on the slice's rows", max_entries=64)
def evaluated(result_id: str, itemset: str, names: tuple[str, ...], seed: int, _table: SliceTable) -> pd.DataFrame:
    """``SliceTable.evaluate`` of the known ``names`` on one mined slice (the whole dataset first)."""
    return _table.evaluate({n: n for n in names}, slices=[itemset], bootstrap=200, seed=seed)


@st.cache_resource(show_spinner=False, max_entries=32)
def shared_rows(result_id: str, itemsets: tuple[str, ...], _table: SliceTable) -> pd.DataFrame:
    """Rows each pair of slices shares (``divergence.overlap``)."""
    return divergence.overlap(_table, list(itemsets))


@st.cache_resource(show_spinner=False, max_entries=32)
def covered_rows(result_id: str, itemsets: tuple[str, ...], _table: SliceTable) -> int | None:
    """Distinct rows the slices hold together."""
    return divergence.explain.adhoc.rows_covered(_table, list(itemsets))


# ----------------------------------------------------------------------------- one slice


@st.cache_resource(show_spinner=False, max_entries=16)
def item_options(result_id: str, _table: SliceTable, _data: pd.DataFrame | None) -> pd.DataFrame:
    """Every item a slice can be built from (the scanned attributes', then the left-out columns')."""
    return divergence.explain.adhoc.item_catalog(_table, _data)


@st.cache_resource(show_spinner="Measuring the slice…", max_entries=64)
def measured(result_id: str, items: tuple[str, ...], _table: SliceTable, _data: pd.DataFrame | None,
             _replicate: pd.DataFrame | None, replication_label: str | None):
    """``divergence.measure_slice``: a mined slice read from the result, any other measured
    from the rows (kept in memory, not copied: cache_resource)."""
    return divergence.measure_slice(_table, list(items), data=_data, replicate=_replicate,
                                    replication_label=replication_label)


@st.cache_resource(show_spinner=False, max_entries=256)
def slice_contributions(result_id: str, items: tuple[str, ...], metric: str, _measured) -> pd.DataFrame:
    """Shapley contributions of a measured slice's items."""
    return divergence.item_contributions(_measured.table, _measured.itemset, metric=metric)


# ----------------------------------------------------------------------------- files: CSV, plans, reports


@st.cache_data(show_spinner=False, max_entries=4)
def full_csv(result_id: str, _table: SliceTable, neutralise_formulas: bool = True) -> bytes:
    """Every slice of a result as CSV (built once per result, on the first download)."""
    return table_csv(_table.frame, neutralise_formulas=neutralise_formulas)


@st.cache_data(show_spinner=False, max_entries=16)
def plan_yaml(key: str, created: str | None = None) -> str:
    """A plan (given by its JSON key) as YAML text, stamped with the time ``created`` when given;
    written once per plan (YAML is slow to write)."""
    plan = parse_plan(key)
    return dump_plan(plan if created is None else dataclasses.replace(plan, created=created))


def _report(plan_text: str, data_label: str, table: SliceTable, comparison=None) -> str:
    from divergence.report.page import build_report

    return build_report(table, plan=parse_plan(plan_text), plan_label="the dashboard's settings",
                        data_label=data_label, comparison=comparison)


@st.cache_data(show_spinner="Writing the report…", max_entries=8)
def report_html(result_id: str, plan_text: str, data_label: str, _table: SliceTable) -> str:
    """The standing report of the current result (the same HTML as `python -m divergence report`)."""
    return _report(plan_text, data_label, _table)


@st.cache_data(show_spinner="Writing the report…", max_entries=4)
def comparison_report_html(result_id: str, scan_id: str, plan_text: str, data_label: str, _comparison,
                           _table: SliceTable) -> str:
    """The standing report with the comparison first (the same HTML as `python -m divergence report`)."""
    return _report(plan_text, data_label, _table, comparison=_comparison)


# ----------------------------------------------------------------------------- comparing two models


@st.cache_data(show_spinner=False, max_entries=32)
def check_comparison(data_key: str, compare_key: str, _compare: Settings, _df: pd.DataFrame) -> dict:
    """The models' columns checked without mining (``divergence.comparison.compare.check_models``);
    keyed on the comparison's Settings by ``compare_key`` (``ui.settings.compare_key``, derived from it)."""
    from divergence.comparison.compare import check_models

    return check_models(_df, _compare)


@st.cache_data(show_spinner=False, max_entries=8)
def compare_cached(data_key: str, compare_key: str, _compare: Settings, _df: pd.DataFrame):
    """``divergence.compare`` cached on the data and the comparison's Settings (keyed by
    ``compare_key``, derived from them), computed in a worker process as a scan is (it mines): the
    server keeps answering every session meanwhile."""
    from ui import worker

    return worker.run_task("compare", _df, _compare, label="comparison of the models", owner_alive=session_alive())


@st.cache_data(show_spinner=False, max_entries=256)
def change_contributions(result_id: str, itemset: str, metric: str, _comparison) -> pd.DataFrame:
    """Shapley contributions of a slice's items to its change beyond the whole dataset's."""
    return _comparison.contributions(itemset, metric)
