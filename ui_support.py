"""The dashboard's shared layer: session-state keys, the cached calls into the engine, the
settings <-> slice plan mapping, the run with its progress bar, and small render helpers.

The ONLY module with ``st.cache_data`` wrappers and session-state key constants. Pages are
thin: read state, call a wrapper here or a function of ``divergence``, render.

Settings live in plain session-state keys (``K.*``), never only in widget keys: a keyed
widget's state is dropped when another page runs. Each settings widget is drawn through
:func:`bound`, which copies the plain value into the widget before it is drawn and back on
change (Streamlit's documented pattern for widgets that must survive page changes).
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections import OrderedDict
from typing import Any, Callable

import pandas as pd
import streamlit as st

import divergence
from divergence import DivergenceInputError, SliceTable
from divergence.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, DEMO_TRUTH, load_demo
from divergence.duckdb_engine import preview_source, resolve_files
from divergence.io import LoadedTable, load_table
from divergence.assess import min_size_derivation
from divergence.plan import SlicePlan, dump_plan, parse_plan
from divergence.columns import AttributeScreen
from divergence.mining import MAX_SLICES, TIME_LIMIT
from divergence.scan import role_columns
from ui import worker
from divergence.roles import RoleGuess, guess_positive, guess_roles
from divergence.views import (describe_columns, format_count, format_percent, metric_label, distinct_values,
                              parse_bin_spec, slice_view, sort_options, split_rows, table_csv, SliceView)
from divergence.formats import column_help, rgba, verdict_color, verdict_legend
from divergence.views import default_ascending, display_frame, display_sort_columns, findings, redundancy_epsilon
import divergence.adhoc

BUILT_IN = "built-in"
LOCAL_PATH = "path"                 # a local file, folder or glob scanned by DuckDB (large data)
SOURCES = {BUILT_IN: "Built-in dataset (credit applications)", "upload": "Upload a file",
           LOCAL_PATH: "Local path (large data: DuckDB)"}
#: rows read for the preview of a local path (column types, role guesses, the checks on this page)
PREVIEW_ROWS = 1000
ANALYTIC_NOTE = ("Intervals are analytic for DuckDB scans: the scan keeps no rows, so there is nothing to "
                 "bootstrap (and median baselines are not computed).")
TASKS = {"classification": "Classification", "regression": "Regression", "ranking": "Ranking",
         "outcome": "A numeric outcome"}
CORRECTIONS = {"bh": "Benjamini–Hochberg (q-values)", "bonferroni": "Bonferroni", "holm": "Holm"}
CORRECTION_SHORT = {"bh": "BH-adjusted", "bonferroni": "Bonferroni-adjusted", "holm": "Holm-adjusted"}
REPLICATION_KINDS = {"none": "None", "split": "A split or period column", "file": "A second file",
                     "holdout": "A held-out share of the rows"}


class K:
    """Plain session-state keys (settings, data, results, view state)."""

    # data
    SOURCE = "source"                # BUILT_IN, "upload" or LOCAL_PATH (the radio's choice)
    FRAME = "frame"                  # the DataFrame being analysed (a local path: its first rows)
    PATH = "local_path"              # the local path being analysed (None: FRAME holds every row)
    PATH_ROWS = "local_path_rows"    # its total row count
    PATH_TEXT = "local_path_text"    # the path as typed (kept when it is wrong)
    PATH_ERROR = "local_path_error"
    DATA_NAME = "data_name"          # file name or BUILT_IN
    DATA_KEY = "data_key"            # identifies the data's content (cache key)
    UPLOAD_ERROR = "upload_error"
    DATA_NOTES = "data_notes"        # what the reader decided (encoding, delimiter, renamed columns)
    # column roles
    TASK = "task"
    TARGET = "target"
    PRED_KIND = "pred_kind"          # "labels" or "score"
    PREDICTION = "prediction"
    SCORE = "score"
    THRESHOLD = "threshold"
    POSITIVE = "positive"
    RANK_KIND = "rank_kind"          # "rank" or "score"
    RANK = "rank"
    RANK_BY = "rank_by"
    ASCENDING = "ascending"
    GAMMA = "gamma"
    OUTCOME = "outcome"              # list of numeric columns
    ATTRIBUTES = "attributes"        # None: the engine's default choice
    BINS = "bins"                    # {column: int or [edges]}
    BIN_TEXTS = "bin_texts"          # {column: the text typed} (kept when it does not parse)
    BIN_ERRORS = "bin_errors"        # {column: message}
    ROLE_NOTES = "role_notes"        # how a new file's roles were guessed (sentences)
    ROLE_GUESS = "role_guess"        # the roles guessed ({key: column})
    ADDED = "attributes_added"       # columns the default choice left out, added back by the user
    QUANTILE_BINS = "quantile_bins"
    BINNING = "binning"
    REPLICATION = "replication"      # "none", "split", "file", "holdout"
    SPLIT_COLUMN = "split_column"
    SPLIT_VALUES = "split_values"
    HOLDOUT = "holdout"
    REPLICATE_FRAME = "replicate_frame"
    REPLICATE_NAME = "replicate_name"
    REPLICATE_ERROR = "replicate_error"
    REPLICATE_NOTES = "replicate_notes"
    REPLICATE_KEY = "replicate_key"  # the replication file's content (cache key)
    # outcome and thresholds
    METRICS = "metrics"
    MIN_SUPPORT = "min_support"
    SUPPORT_MODE = "support_mode"    # the minimum support typed as a "share" or as "rows"
    MAX_LENGTH = "max_length"        # 0: no limit
    EXHAUSTIVE = "exhaustive"        # every itemset (DivExplorer's listing) instead of each set of rows once
    MAX_SLICES = "max_slices"        # the budget: most slices a scan may list
    TIME_LIMIT = "time_limit"        # the budget: seconds of mining
    DELTA = "delta"                  # None: the engine's default
    CONFIDENCE = "confidence"
    CORRECTION = "correction"
    BOOTSTRAP = "bootstrap"
    REDUNDANCY = "redundancy"
    PLAN_KIND = "plan_kind"
    # results and view
    RESULT = "result"                # dict(table, plan, data_key, seconds, redundant)
    RUN_ERROR = "run_error"
    RUN_NOTICE = "run_notice"        # e.g. a scan cancelled (no automatic run after it)
    JOB = "scan_job"                 # the running scan (ui.run.Job), or None
    VIEW_METRIC = "view_metric"
    SORT_BY = "sort_by"              # people's label of the sort column
    SORT_ASC = "sort_asc"
    F_VERDICTS = "f_verdicts"
    F_MIN_SIZE = "f_min_size"        # "all", "meets", "below"
    F_LENGTHS = "f_lengths"
    F_ATTRIBUTES = "f_attributes"
    F_PRUNE = "f_prune"
    TOP_N = "top_n"
    SELECTED = "selected"            # {metric: itemset} of the row last clicked in the slice table
    TYPED = "typed"                  # items of a slice typed in the slice editor (None: the table's slice)
    GRID_SHOWN = "grid_shown"        # what the slice table showed: its slices and columns (to read a click)
    PLAN_ERROR = "plan_error"


ROLE_DEFAULTS: dict[str, Any] = {
    K.TASK: "classification", K.TARGET: None, K.PRED_KIND: "labels", K.PREDICTION: None, K.SCORE: None,
    K.THRESHOLD: 0.5, K.POSITIVE: None, K.RANK_KIND: "score", K.RANK: None, K.RANK_BY: None,
    K.ASCENDING: False, K.GAMMA: "dcg", K.OUTCOME: [], K.ATTRIBUTES: None, K.BINS: {}, K.BIN_TEXTS: {},
    K.ROLE_NOTES: [], K.ROLE_GUESS: {}, K.ADDED: [],
    K.BIN_ERRORS: {},
    K.QUANTILE_BINS: 3, K.BINNING: "quantile", K.REPLICATION: "none", K.SPLIT_COLUMN: None,
    K.SPLIT_VALUES: [], K.HOLDOUT: 0.3, K.METRICS: ["fpr", "fnr"],
}
DEFAULTS: dict[str, Any] = {
    K.SOURCE: BUILT_IN, K.DATA_NAME: BUILT_IN, K.DATA_KEY: BUILT_IN, K.UPLOAD_ERROR: None, K.DATA_NOTES: [],
    K.PATH: None, K.PATH_ROWS: None, K.PATH_TEXT: "", K.PATH_ERROR: None,
    **ROLE_DEFAULTS,
    K.REPLICATE_FRAME: None, K.REPLICATE_NAME: None, K.REPLICATE_ERROR: None, K.REPLICATE_NOTES: [], K.REPLICATE_KEY: "",
    K.MIN_SUPPORT: 0.02, K.SUPPORT_MODE: "share", K.MAX_LENGTH: 0, K.EXHAUSTIVE: False,
    K.MAX_SLICES: MAX_SLICES, K.TIME_LIMIT: TIME_LIMIT, K.DELTA: None, K.CONFIDENCE: 0.95, K.CORRECTION: "bh",
    K.BOOTSTRAP: 200, K.REDUNDANCY: 0.05, K.PLAN_KIND: "exploratory",
    K.RESULT: None, K.RUN_ERROR: None, K.RUN_NOTICE: None, K.JOB: None, K.VIEW_METRIC: None, K.SORT_BY: None,
    K.SORT_ASC: False,
    K.F_VERDICTS: [], K.F_MIN_SIZE: "all", K.F_LENGTHS: None, K.F_ATTRIBUTES: [], K.F_PRUNE: True,
    K.TOP_N: 25, K.SELECTED: None, K.TYPED: None, K.GRID_SHOWN: None, K.PLAN_ERROR: None,
}
DEMO_SETTINGS = {
    K.TASK: "classification", K.TARGET: "defaulted", K.PREDICTION: "predicted_default",
    K.POSITIVE: "yes", K.METRICS: ["fpr", "fnr"], K.ATTRIBUTES: list(DEMO_ATTRIBUTES),
}
assert DEMO_ROLES["classification"]["target"] == DEMO_SETTINGS[K.TARGET]

#: metrics offered per task
CLASSIFICATION_METRICS = ("fpr", "fnr", "error", "accuracy", "tpr", "tnr", "precision", "fdr", "npv",
                          "for", "positive_rate", "base_rate", "brier")
REGRESSION_METRICS = ("abs_error", "squared_error", "signed_error")


def init_state() -> None:
    """Put every setting's default in session state (first run), on the built-in dataset."""
    ss = st.session_state
    if K.FRAME not in ss:
        ss[K.FRAME] = demo_frame()
        for k, v in DEFAULTS.items():
            ss.setdefault(k, v)
        ss.update(DEMO_SETTINGS)
    for k, v in DEFAULTS.items():
        ss.setdefault(k, v)


def page_setup() -> None:
    """First line of every page. A page opened by its URL as the first request after the
    server starts runs without app.py (Streamlit's legacy pages/ mode, until app.py calls
    st.navigation once): send it through app.py instead of failing.

    Takes a scan that finished into the session, and keeps a place at the top of the page for
    the progress of a running one."""
    if K.FRAME not in st.session_state:
        st.switch_page("app.py")
    collect_scan()
    st.session_state["_scan_status_drawn"] = False
    st.session_state["_scan_slot"] = st.empty()


def state(key: str) -> Any:
    return st.session_state.get(key, DEFAULTS.get(key))


# ----------------------------------------------------------------------------- widgets bound to plain keys


def _widget_key(key: str) -> str:
    return f"w:{key}"


def _copy_back(key: str, after: Callable[[], None] | None) -> None:
    st.session_state[key] = st.session_state[_widget_key(key)]
    if after is not None:
        after()


def bound(widget: Callable, label: str, key: str, *, after: Callable[[], None] | None = None,
          options=None, **kwargs):
    """Draw ``widget`` with its value kept in the plain key ``key`` (survives page changes).

    For widgets with ``options``, a stored value that is not an option (a column a plan or
    an earlier file named) is dropped from the widget and reported beside it.
    """
    wkey = _widget_key(key)
    value = st.session_state.get(key)
    if value is None and widget is st.multiselect:
        value = []
    if options is not None:
        options = list(options)
        if isinstance(value, list):
            stray = [v for v in value if v not in options]
            value = [v for v in value if v in options]
        else:
            stray = [value] if value is not None and value not in options else []
            value = None if stray else value
        if stray:
            st.error(f"{label}: {', '.join(map(repr, stray))} is not available in this data; choose again.")
        kwargs["options"] = options
    st.session_state[wkey] = value
    return widget(label, key=wkey, on_change=_copy_back, args=(key, after), **kwargs)


def set_settings(**values: Any) -> None:
    """Change settings from code (a callback, a plan): plain keys are the truth."""
    for k, v in values.items():
        st.session_state[k] = v


# ----------------------------------------------------------------------------- data


@st.cache_data(show_spinner=False)
def demo_frame() -> pd.DataFrame:
    """The built-in dataset."""
    return load_demo()


def read_uploaded(name: str, buffer) -> LoadedTable:
    """Read an uploaded CSV or Parquet file with the engine's one reader (the command line's and
    DuckDB's too): delimiter, encoding, byte-order mark and repeated column names, each said in
    its notes. Not cached: the frame is kept in session state, and a cached copy of a 1 GB file
    would double the memory."""
    return load_table(bytes(buffer), name=name)


def content_key(name: str, buffer) -> str:
    """A cache key naming the file and its content."""
    return f"{name}:{len(buffer)}:{hashlib.blake2b(buffer, digest_size=12).hexdigest()}"


def use_built_in() -> None:
    """Switch to the built-in dataset with its column roles."""
    cancel_scan(quiet=True)
    ss = st.session_state
    ss[K.FRAME] = demo_frame()
    ss.update({K.SOURCE: BUILT_IN, K.DATA_NAME: BUILT_IN, K.DATA_KEY: BUILT_IN, K.UPLOAD_ERROR: None,
               K.PATH: None, K.PATH_ROWS: None, K.DATA_NOTES: [], K.RUN_ERROR: None, K.RUN_NOTICE: None})
    ss.update(ROLE_DEFAULTS)
    ss.update(DEMO_SETTINGS)
    ss.update({K.SELECTED: None, K.TYPED: None})


def use_frame(df: pd.DataFrame, name: str, key: str, *, path: str | None = None, rows: int | None = None,
              notes: list[str] | None = None) -> None:
    """Analyse a new table: guess its roles (the user confirms them), default attributes.

    With ``path``, ``df`` is the first rows of that local path and ``rows`` its row count;
    ``notes`` are the reader's (shown on the Data page).
    """
    cancel_scan(quiet=True)
    ss = st.session_state
    ss[K.FRAME] = df
    ss.update({K.SOURCE: LOCAL_PATH if path is not None else "upload", K.DATA_NAME: name, K.DATA_KEY: key,
               K.UPLOAD_ERROR: None, K.PATH: path, K.PATH_ROWS: rows, K.PATH_ERROR: None,
               K.DATA_NOTES: list(notes or []),
               K.RUN_ERROR: None, K.RUN_NOTICE: None})  # the previous data's run error says nothing about this data
    ss.update(ROLE_DEFAULTS)
    apply_role_guess(guess_roles(df))
    ss.update({K.SELECTED: None, K.TYPED: None})
    ss[K.VIEW_METRIC] = None


def apply_role_guess(guess: RoleGuess) -> None:
    """Set the column roles from a guess; a role the guess left empty stays empty (the Data page asks)."""
    labels = guess.prediction is not None or (guess.score is None and "score" not in guess.candidates)
    set_settings(**{
        K.TASK: guess.task, K.TARGET: guess.target, K.PREDICTION: guess.prediction, K.SCORE: guess.score,
        K.PRED_KIND: "labels" if labels else "score", K.THRESHOLD: guess.threshold, K.POSITIVE: guess.positive,
        K.OUTCOME: [guess.outcome] if guess.outcome else [],
        K.METRICS: {"classification": ["fpr", "fnr"], "regression": ["abs_error"]}.get(guess.task, []),
        K.ROLE_NOTES: guess.notes(),
        K.ROLE_GUESS: {K.TASK: guess.task, K.TARGET: guess.target, K.PREDICTION: guess.prediction, K.SCORE: guess.score},
    })


def role_notes() -> list[str]:
    """How the roles were guessed, while that still describes the page: a role is missing, or the
    roles are the ones guessed (once the user has chosen others, the guess is history)."""
    guessed = state(K.ROLE_GUESS) or {}
    if missing_roles() or all(state(k) == v for k, v in guessed.items()):
        return list(state(K.ROLE_NOTES) or [])
    return []


def missing_roles() -> list[str]:
    """The roles still to choose for the task (a new file's guess may leave some empty)."""
    task, out = state(K.TASK), []
    if task in ("classification", "regression"):
        if state(K.TARGET) is None:
            out.append("the target")
        if task == "classification" and state(K.PRED_KIND) == "score":
            if state(K.SCORE) is None:
                out.append("the score column")
            if state(K.THRESHOLD) is None:
                out.append("the threshold")
        elif state(K.PREDICTION) is None:
            out.append("the prediction column")
        if task == "classification" and state(K.POSITIVE) in (None, ""):
            out.append("the positive label")
    elif task == "ranking":
        if state(K.RANK if state(K.RANK_KIND) == "rank" else K.RANK_BY) is None:
            out.append("the rank column" if state(K.RANK_KIND) == "rank" else "the score to rank by")
    elif not state(K.OUTCOME):
        out.append("the outcome column(s)")
    return out


def and_list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def score_note(df: pd.DataFrame, column: str | None, threshold: float | None) -> str | None:
    """A score column's range, and the share of rows the threshold predicts positive."""
    if column is None or column not in df.columns or not pd.api.types.is_numeric_dtype(df[column]):
        return None
    values = df[column].dropna()
    if not len(values):
        return None
    text = f"`{column}` ranges from {values.min():g} to {values.max():g}"
    if threshold is None:
        return text + ": set the threshold (a score at or above it predicts positive)."
    share = float((values >= threshold).mean())
    return text + f"; at {threshold:g}, {format_percent(share)} of the rows are predicted positive."


def on_upload() -> None:
    """Callback of the file uploader: read the file, keep every setting when it fails."""
    up = st.session_state.get("w:upload")
    if up is None:
        return
    buffer = up.getbuffer()
    try:
        loaded = read_uploaded(up.name, buffer)
    except DivergenceInputError as exc:
        st.session_state[K.UPLOAD_ERROR] = str(exc)
        return
    use_frame(loaded.frame, up.name, content_key(up.name, buffer), notes=loaded.notes)


def is_large() -> bool:
    """Whether the data in use is a local path scanned by DuckDB (no rows in memory)."""
    return state(K.PATH) is not None


def n_rows() -> int:
    """Rows of the data in use (a local path: all its rows, not the preview's)."""
    return int(state(K.PATH_ROWS)) if is_large() else len(state(K.FRAME))


def path_fingerprint(path: str) -> str:
    """A cache key for a local path: the files it names with their sizes and modification
    times, so a changed, added or removed file gives a new key (and a new scan)."""
    files, _ = resolve_files(os.path.expanduser(path))
    parts = []
    for f in files:
        st_ = os.stat(f)
        parts.append(f"{f}:{st_.st_size}:{st_.st_mtime_ns}")
    digest = hashlib.blake2b("\n".join(parts).encode(), digest_size=12).hexdigest()
    return f"path:{path}:{len(files)} files:{digest}"


def load_path(text: str, *, keep_roles: bool = False) -> bool:
    """Preview a local path (first rows and row count, read by DuckDB) and analyse it.

    A bad path raises DivergenceInputError naming the problem; nothing is changed then.
    ``keep_roles`` keeps the settings when the columns are unchanged (the same path re-read);
    the return value says whether they were kept.
    """
    text = text.strip()
    if not text:
        raise DivergenceInputError("Type the path of a CSV or Parquet file, a folder of them, or a glob.")
    key = path_fingerprint(text)
    head, total = preview_source(os.path.expanduser(text), rows=PREVIEW_ROWS)
    old = state(K.FRAME)
    if keep_roles and old is not None and list(old.columns) == list(head.columns):
        st.session_state.update({K.FRAME: head, K.DATA_KEY: key, K.PATH_ROWS: total, K.PATH_ERROR: None})
        return True
    use_frame(head, text, key, path=text, rows=total)
    return False


def on_path() -> None:
    """Callback of the local-path box: preview the path; keep every setting when it fails."""
    text = state(K.PATH_TEXT) or ""
    try:
        load_path(text, keep_roles=text.strip() == state(K.PATH))
    except DivergenceInputError as exc:
        st.session_state[K.PATH_ERROR] = str(exc)


def on_source() -> None:
    """Callback of the source radio: the built-in data at once; a path typed before is re-read."""
    source = state(K.SOURCE)
    if source == BUILT_IN:
        use_built_in()
    elif source == LOCAL_PATH and state(K.PATH_TEXT) and not is_large():
        on_path()


def on_replicate_upload() -> None:
    """Callback of the second-file uploader (replication data)."""
    up = st.session_state.get("w:replicate_upload")
    if up is None:
        return
    try:
        loaded = read_uploaded(up.name, up.getbuffer())
    except DivergenceInputError as exc:
        st.session_state[K.REPLICATE_ERROR] = str(exc)
        return
    st.session_state.update({K.REPLICATE_FRAME: loaded.frame, K.REPLICATE_NAME: up.name, K.REPLICATE_ERROR: None,
                             K.REPLICATE_NOTES: loaded.notes, K.REPLICATE_KEY: content_key(up.name, up.getbuffer())})


# ----------------------------------------------------------------------------- settings -> engine arguments


def role_kwargs() -> dict:
    """The column-role keyword arguments of ``divergence.scan`` from the settings."""
    task = state(K.TASK)
    if task == "classification":
        kw: dict = dict(target=state(K.TARGET), positive=state(K.POSITIVE), metrics=list(state(K.METRICS)))
        if state(K.PRED_KIND) == "score":
            threshold = state(K.THRESHOLD)
            kw.update(score=state(K.SCORE), threshold=None if threshold is None else float(threshold))
        else:
            kw.update(prediction=state(K.PREDICTION))
        return kw
    if task == "regression":
        return dict(target=state(K.TARGET), prediction=state(K.PREDICTION), regression=True,
                    metrics=list(state(K.METRICS)))
    if task == "ranking":
        if state(K.RANK_KIND) == "rank":
            return dict(rank=state(K.RANK), gamma=state(K.GAMMA))
        return dict(rank_by=state(K.RANK_BY), ascending=bool(state(K.ASCENDING)), gamma=state(K.GAMMA))
    return dict(outcome=list(state(K.OUTCOME)))


def used_columns() -> list[str]:
    """Columns taken by a role (never attributes), the split column included."""
    cols = role_columns(**{k: v for k, v in role_kwargs().items() if k in
                           ("target", "prediction", "score", "outcome", "rank", "rank_by")})
    if state(K.REPLICATION) == "split" and state(K.SPLIT_COLUMN):
        cols.append(state(K.SPLIT_COLUMN))
    cols += [c for c in reference_columns() if c not in cols]  # a reference model (Compare models)
    return cols


@st.cache_data(show_spinner=False, max_entries=32)
def _screen(data_key: str, roles_json: str, _df: pd.DataFrame) -> AttributeScreen:
    r = json.loads(roles_json)
    return divergence.screen_attributes(_df, r.pop("used"), **r)


def attribute_screen(df: pd.DataFrame) -> AttributeScreen:
    """The engine's default attributes for the roles chosen, and the columns left out with why
    (leakage is checked against the target, the prediction and the score)."""
    roles = role_kwargs()
    r = dict(used=used_columns(), target=roles.get("target"), prediction=roles.get("prediction"),
             score=roles.get("score"))
    if roles.get("score") is not None and roles.get("threshold") is not None:
        r["threshold"] = roles["threshold"]
    return _screen(state(K.DATA_KEY), json.dumps(r, sort_keys=True, default=str), df)


def attribute_choice(df: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The attributes to slice by (explicit, or the engine's default plus the columns added back)
    and the engine's notes on what the default left out."""
    used = used_columns()
    chosen = state(K.ATTRIBUTES)
    if chosen is None:
        screen = attribute_screen(df)
        added = set(state(K.ADDED) or ()) & set(screen.left_out)
        return [c for c in df.columns if c in screen.attributes or c in added], list(screen.notes)
    return [a for a in chosen if a in df.columns and a not in used], []


def on_add_back(left_out: list[str]) -> None:
    """Callback of the 'add back' choice: left-out columns the user slices by after all."""
    picked = list(st.session_state["w:add_back"])
    chosen = state(K.ATTRIBUTES)
    if chosen is None:
        set_settings(**{K.ADDED: picked})
    else:
        set_settings(**{K.ATTRIBUTES: [a for a in chosen if a not in left_out] + picked})


def on_period(column: str) -> None:
    """Callback of a date attribute's period: month, quarter, year, or the engine's choice."""
    period = st.session_state[f"w:period:{column}"]
    bins = dict(state(K.BINS) or {})
    if period == "auto":
        bins.pop(column, None)
    else:
        bins[column] = period
    set_settings(**{K.BINS: bins})


def scan_kwargs() -> dict:
    """Every keyword argument of ``divergence.scan`` from the settings."""
    df = state(K.FRAME)
    attrs, _ = attribute_choice(df)
    bins = {c: v for c, v in (state(K.BINS) or {}).items() if c in attrs}
    max_length = int(state(K.MAX_LENGTH) or 0)
    if is_large() and state(K.ATTRIBUTES) is None and not state(K.ADDED):
        # a local path's default attributes are screened on every row by the engine, not on the preview
        attrs = None
    kw = dict(role_kwargs(), attributes=attrs, bins=bins, quantile_bins=int(state(K.QUANTILE_BINS)),
              binning=state(K.BINNING), min_support=float(state(K.MIN_SUPPORT)), max_length=max_length or None)
    if state(K.EXHAUSTIVE):  # only when asked: the default leaves the plan as it was
        kw["exhaustive"] = True
    if int(state(K.MAX_SLICES)) != MAX_SLICES:  # the budget, when it is not the engine's
        kw["max_slices"] = int(state(K.MAX_SLICES))
    if float(state(K.TIME_LIMIT)) != TIME_LIMIT:
        kw["time_limit"] = float(state(K.TIME_LIMIT))
    return kw


def statistics_kwargs() -> dict:
    """The statistics settings of the plan (keyword arguments of ``divergence.assess``)."""
    kw = dict(confidence=float(state(K.CONFIDENCE)), correction=state(K.CORRECTION),
              bootstrap=int(state(K.BOOTSTRAP)), seed=0)
    if state(K.DELTA) is not None:
        kw["delta"] = float(state(K.DELTA))
    return kw


def replication_settings() -> dict:
    kind = state(K.REPLICATION)
    if kind == "split":
        return dict(kind="split", column=state(K.SPLIT_COLUMN), confirm_values=list(state(K.SPLIT_VALUES)))
    if kind == "file":
        return dict(kind="file", name=state(K.REPLICATE_NAME))
    if kind == "holdout":
        return dict(kind="holdout", share=float(state(K.HOLDOUT)))
    return {}


def current_plan() -> SlicePlan:
    """The settings as a slice plan (what the Export page saves and a later visit loads)."""
    data = {"source": BUILT_IN} if state(K.DATA_NAME) == BUILT_IN else {"file": state(K.DATA_NAME)}
    data["rows"] = n_rows()
    explain = {"redundancy": float(state(K.REDUNDANCY))} if state(K.REDUNDANCY) else {}
    return SlicePlan(scan=scan_kwargs(), statistics=statistics_kwargs(), explain=explain,
                     replication=replication_settings(), data=data, kind=state(K.PLAN_KIND),
                     compare=compare_section_settings())


def apply_plan(plan: SlicePlan) -> None:
    """Set every setting from a plan (on the data loaded now; columns it lacks are reported)."""
    s = dict(plan.scan)
    upd: dict = dict(ROLE_DEFAULTS)
    if s.get("rank") is not None or s.get("rank_by") is not None:
        upd.update({K.TASK: "ranking", K.RANK_KIND: "rank" if s.get("rank") else "score",
                    K.RANK: s.get("rank"), K.RANK_BY: s.get("rank_by"),
                    K.ASCENDING: bool(s.get("ascending", False)), K.GAMMA: s.get("gamma") or "dcg"})
    elif s.get("outcome") is not None:
        out = s["outcome"]
        upd.update({K.TASK: "outcome", K.OUTCOME: [out] if isinstance(out, str) else list(out)})
    else:
        metrics = s.get("metrics") or []
        metrics = [metrics] if isinstance(metrics, str) else list(metrics)
        regression = bool(s.get("regression")) or (metrics and all(m in REGRESSION_METRICS for m in metrics))
        upd.update({K.TASK: "regression" if regression else "classification", K.TARGET: s.get("target"),
                    K.PREDICTION: s.get("prediction"), K.SCORE: s.get("score"),
                    K.PRED_KIND: "score" if s.get("score") and not s.get("prediction") else "labels",
                    K.THRESHOLD: float(s.get("threshold", 0.5)), K.POSITIVE: s.get("positive"),
                    K.METRICS: metrics})
    upd.update({K.ATTRIBUTES: s.get("attributes"), K.BINS: dict(s.get("bins") or {}), K.BIN_TEXTS: {},
                K.BIN_ERRORS: {},
                K.QUANTILE_BINS: int(s.get("quantile_bins", 3)), K.BINNING: s.get("binning", "quantile"),
                K.MIN_SUPPORT: float(s.get("min_support", 0.05)), K.MAX_LENGTH: int(s.get("max_length") or 0),
                K.EXHAUSTIVE: bool(s.get("exhaustive", False)), K.MAX_SLICES: int(s.get("max_slices") or MAX_SLICES),
                K.TIME_LIMIT: float(s.get("time_limit") or TIME_LIMIT)})
    st_ = plan.statistics
    upd.update({K.DELTA: st_.get("delta"), K.CONFIDENCE: float(st_.get("confidence", 0.95)),
                K.CORRECTION: st_.get("correction", "bh"), K.BOOTSTRAP: int(st_.get("bootstrap", 0)),
                K.REDUNDANCY: float(plan.explain.get("redundancy", 0.0)), K.PLAN_KIND: plan.kind})
    rep = plan.replication or {}
    kind = rep.get("kind", "none")
    upd[K.REPLICATION] = kind
    if kind == "split":
        upd.update({K.SPLIT_COLUMN: rep.get("column"), K.SPLIT_VALUES: list(rep.get("confirm_values") or [])})
    elif kind == "holdout":
        upd[K.HOLDOUT] = float(rep.get("share", 0.3))
    cmp = dict(getattr(plan, "compare", None) or {})  # a comparison with a reference model
    if cmp:
        upd.update({KC.ON: True, KC.REF_KIND: "score" if cmp.get("reference_score") else "labels",
                    KC.REFERENCE: cmp.get("reference"), KC.REF_SCORE: cmp.get("reference_score"),
                    KC.REF_THRESHOLD: float(cmp.get("reference_threshold", 0.5))})
    set_settings(**upd)
    if cmp:
        on_compare_toggle()  # the built-in data: its previous models


def load_plan_text(text: bytes | str) -> None:
    """Read a plan file's text and apply it; a bad file leaves every setting as it was."""
    try:
        plan = parse_plan(text)
    except DivergenceInputError as exc:
        st.session_state[K.PLAN_ERROR] = str(exc)
        return
    st.session_state[K.PLAN_ERROR] = None
    apply_plan(plan)


def on_plan_upload() -> None:
    up = st.session_state.get("w:plan_upload")
    if up is not None:
        load_plan_text(up.getvalue())


def plan_key(plan: SlicePlan) -> str:
    import dataclasses

    # the comparison (Compare page) does not change the scan: it has its own result and key
    return dump_plan(dataclasses.replace(plan, compare={}), format="json")


# ----------------------------------------------------------------------------- cached engine calls


@st.cache_data(show_spinner=False, max_entries=8)
def column_summary(data_key: str, _df: pd.DataFrame) -> pd.DataFrame:
    """Type, distinct and missing values of each column."""
    return describe_columns(_df)


@st.cache_data(show_spinner=False, max_entries=64)
def target_values(data_key: str, column: str | None, _df: pd.DataFrame) -> list | None:
    """A column's distinct values (None when it has more than 50, or no column is chosen)."""
    if column is None or column not in _df.columns:
        return None
    return distinct_values(_df[column])


def positive_guess(df: pd.DataFrame, column: str | None) -> object:
    if column is None or column not in df.columns:
        return None
    return guess_positive(df[column])


def on_bin_text(column: str) -> None:
    """Callback of a column's bin text: keep the text; store the spec, or the error."""
    text = st.session_state[f"w:bins:{column}"]
    texts = dict(state(K.BIN_TEXTS) or {})
    errors = dict(state(K.BIN_ERRORS) or {})
    bins = dict(state(K.BINS) or {})
    texts[column] = text
    try:
        spec = parse_bin_spec(text, column)
    except DivergenceInputError as exc:
        errors[column] = str(exc)
    else:
        errors.pop(column, None)
        if spec is None:
            bins.pop(column, None)
        else:
            bins[column] = spec
    set_settings(**{K.BIN_TEXTS: texts, K.BIN_ERRORS: errors, K.BINS: bins})


def bin_text(column: str) -> str:
    """What a column's bin box shows: the text typed, else the stored spec."""
    texts = state(K.BIN_TEXTS) or {}
    if column in texts:
        return texts[column]
    spec = (state(K.BINS) or {}).get(column)
    if spec is None:
        return ""
    return str(spec) if isinstance(spec, int) else ", ".join(f"{e:g}" for e in spec)


@st.cache_data(show_spinner=False, max_entries=64)
def check_roles(data_key: str, roles_json: str, _df: pd.DataFrame) -> list[tuple[str, str, int, bool]]:
    """Build the outcomes for the roles (raises DivergenceInputError naming what is wrong):
    (metric, description, defined rows, binary) for each."""
    outcomes = divergence.build_outcomes(_df, **json.loads(roles_json))
    return [(o.name, o.description, o.defined, o.binary) for o in outcomes]


@st.cache_data(show_spinner=False, max_entries=64)
def bins_of(data_key: str, attributes: tuple[str, ...], bins_json: str, quantile_bins: int, binning: str,
            _df: pd.DataFrame):
    """The items each attribute becomes (raises DivergenceInputError for bad bins)."""
    return divergence.discretize(_df, list(attributes), bins=json.loads(bins_json),
                                 quantile_bins=quantile_bins, binning=binning).bins


# ----------------------------------------------------------------------------- running a scan (a worker process)


class _LRU:
    """Finished results shared by the sessions of this server, the least recently used dropped
    first: at most ``size`` of them and ``max_bytes`` together (the newest is always kept)."""

    def __init__(self, size: int, max_bytes: int) -> None:
        self.size, self.max_bytes, self._items, self._lock = size, max_bytes, OrderedDict(), threading.Lock()

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
            while len(self._items) > 1 and (len(self._items) > self.size
                                            or sum(n for _, n in self._items.values()) > self.max_bytes):
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


#: memory for the results kept by the server (each kind), in MiB
RESULTS_MIB = int(os.environ.get("DIVERGENCE_RESULTS_MIB", "1024"))


@st.cache_resource(show_spinner=False)
def _mined_cache() -> _LRU:
    """Mining results by (data, scan settings): a statistics setting changed re-assesses only."""
    return _LRU(8, RESULTS_MIB << 20)


@st.cache_resource(show_spinner=False)
def _result_cache() -> _LRU:
    """Assessed results by (data, scan settings, statistics, replication): a sort, a filter or a
    page change never re-mines, and a setting changed back is answered at once."""
    return _LRU(16, RESULTS_MIB << 20)


def clear_results() -> None:
    """Forget every cached result (tests)."""
    _mined_cache().clear()
    _result_cache().clear()


def _session_alive() -> Callable[[], bool] | None:
    """Whether the browser session starting a scan is still connected (a closed tab's scan is
    stopped after a grace period); None outside a server (AppTest)."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not Runtime.exists():
        return None
    runtime, session = Runtime.instance(), ctx.session_id
    return lambda: runtime.is_active_session(session)


def _scan_spec() -> dict:
    """The current settings as a worker request with its cache keys (raises DivergenceInputError)."""
    missing = missing_roles()
    if missing:
        raise DivergenceInputError(f"Choose {and_list(missing)} on the Data page first.")
    path = state(K.PATH)
    if path is not None and path_fingerprint(path) != state(K.DATA_KEY):
        # the files changed since they were read: read them again, keeping the roles
        if not load_path(path, keep_roles=True):
            raise DivergenceInputError(f"The columns of {path} changed since it was read: check the column "
                                       "roles on the Data page, then run again.")
    plan = current_plan()
    df = state(K.FRAME)
    scan_json = json.dumps(plan.scan, sort_keys=True, default=str)
    stats = dict(plan.statistics, exploratory=plan.kind == "exploratory")
    stats_json = json.dumps(stats, sort_keys=True)
    data_key = state(K.DATA_KEY)
    replicate, label = None, ""
    kind = state(K.REPLICATION)
    if path is not None and kind in ("split", "holdout"):
        raise DivergenceInputError(
            f"Replication on {'a split column' if kind == 'split' else 'a held-out share'} needs the rows in "
            "memory, and a local path is scanned by DuckDB without loading them: confirm on a second file "
            "(Data page), or choose none.")
    if kind == "split":
        column, values = state(K.SPLIT_COLUMN), list(state(K.SPLIT_VALUES))
        df, replicate = split_rows(df, column, values)
        label = f"rows with {column} in {', '.join(map(str, values))} ({len(replicate):,})"
        data_key += f"|split:{label}"
    elif kind == "file":
        replicate = state(K.REPLICATE_FRAME)
        if replicate is None:
            raise DivergenceInputError("Replication: upload the second file on the Data page, or choose none.")
        label = f"second file {state(K.REPLICATE_NAME)} ({len(replicate):,} rows)"
    holdout = float(state(K.HOLDOUT)) if kind == "holdout" else None
    # a corrected replication file of the same name and length is another file
    assess_key = data_key + (f"|replicate:{replicate_key()}" if kind == "file" else "")
    scan = json.loads(scan_json)
    request = worker.ScanRequest(scan=scan, statistics=stats, frame=None if path else df, path=path,
                                 replicate=replicate, replication_label=label, holdout=holdout)
    mined_key = None if holdout is not None else (data_key, "duckdb" if path else "pandas", scan_json)
    what = ("every slice" if path is None else
            f"{format_count(n_rows())} rows of {path} with DuckDB (binning, measuring, grouping identical rows), "
            "then every slice")
    return dict(request=request, mined_key=mined_key, plan_key=plan_key(plan), data_key=state(K.DATA_KEY),
                replicate_key=replicate_key(), labels=result_labels(),
                key=(assess_key, scan_json, stats_json, label, holdout, path is not None),
                what=f"{what} with support ≥ {plan.scan['min_support']:g}")


def start_scan(auto: bool = False) -> None:
    """Mine and assess with the current settings in a worker process (returns at once; the pages
    follow its progress). A result computed before with the same settings is taken at once.

    A bad setting is kept in ``K.RUN_ERROR`` and shown beside the run button; the previous
    result and every setting stay.
    """
    ss = st.session_state
    cancel_scan(quiet=True)
    ss[K.RUN_ERROR] = ss[K.RUN_NOTICE] = None
    try:
        spec = _scan_spec()
    except DivergenceInputError as exc:
        ss[K.RUN_ERROR] = str(exc)
        return
    cached = _result_cache().get(spec["key"])
    if cached is not None:
        _store_result(cached, spec, seconds=0.0, cached=True)
        return
    request = spec.pop("request")
    mined = _mined_cache().get(spec["mined_key"]) if spec["mined_key"] else None
    if mined is not None:  # only the statistics changed: assess the cached mining result
        request.mined, request.frame, request.path = mined, None, None
    ss[K.JOB] = worker.start(request, label=spec["what"], auto=auto, owner_alive=_session_alive(), meta=spec)


def scan_job() -> worker.Job | None:
    """The scan this session is running, if any."""
    return st.session_state.get(K.JOB)


def scan_running() -> bool:
    job = scan_job()
    return job is not None and job.running


def cancel_scan(quiet: bool = False) -> None:
    """Stop this session's running scan (its worker is terminated); the previous result and every
    setting stay. A scan that has just finished is collected instead."""
    ss = st.session_state
    job = scan_job()
    if job is None:
        return
    if not job.running:
        collect_scan()
        return
    job.cancel()
    ss[K.JOB] = None
    if not quiet:
        kept = "the previous result and every setting are kept" if result() is not None else "every setting is kept"
        ss[K.RUN_NOTICE] = f"Scan cancelled after {job.elapsed:.0f} s; {kept}."


def collect_scan() -> None:
    """Take a finished scan into the session: its result (cached), or its error beside Run."""
    ss = st.session_state
    job = scan_job()
    if job is None or job.running:
        return
    ss[K.JOB] = None
    if job.state == "done":
        mined, table = job.result
        spec = job.meta
        if mined is not None:  # the two share most of their arrays: half the size each
            _mined_cache().put(spec["mined_key"], mined, job.result_bytes // 2)
        _result_cache().put(spec["key"], table, job.result_bytes // (2 if mined is not None else 1))
        _store_result(table, spec, seconds=job.elapsed)
    elif job.state == "error":
        ss[K.RUN_ERROR] = job.error


def _store_result(table: SliceTable, spec: dict, seconds: float, cached: bool = False) -> None:
    ss = st.session_state
    key = spec["plan_key"]
    ss[K.RUN_ERROR] = None
    ss[K.RESULT] = dict(table=table, plan=key, data_key=spec["data_key"], seconds=seconds, cached=cached,
                        id=hashlib.blake2b((spec["data_key"] + key + spec["replicate_key"]).encode(),
                                           digest_size=8).hexdigest(),
                        **spec["labels"])
    if state(K.VIEW_METRIC) not in table.metric_names:
        # other metrics: the view starts again from their default sort, every verdict
        ss.update({K.VIEW_METRIC: table.metric_names[0], K.SORT_BY: None, K.F_VERDICTS: []})


def progress_text(job: worker.Job) -> tuple[float | None, str]:
    """A running scan's progress in words (what the engine reported), with the share done when known."""
    p = job.progress or {}
    stage = str(p.get("stage") or "working")
    slices, length, fraction = p.get("slices"), p.get("length"), p.get("fraction")
    if stage == "starting the worker":
        text = f"Starting: mining {job.label}…"
    elif stage == "statistics":
        text = f"{format_count(slices or 0)} slices mined; computing their statistics…"
    elif stage in ("done", "sending the result"):
        text = f"{format_count(slices or 0)} slices: receiving the result…"
    else:
        parts = [stage[:1].upper() + stage[1:]]
        if slices is not None:
            parts.append(f"{format_count(slices)} slices so far")
        if length is not None:
            parts.append(f"slices of up to {length} item{'s' if length != 1 else ''}")
        text = ": ".join([parts[0], ", ".join(parts[1:])]) if len(parts) > 1 else parts[0] + "…"
    text += f" ({job.elapsed:.0f} s)"
    if fraction is not None:
        fraction = min(max(float(fraction), 0.0), 1.0)
    return fraction, text


def _draw_progress(job: worker.Job, where) -> None:
    fraction, text = progress_text(job)
    if fraction is None:
        where.info(text, icon=":material/hourglass_top:")
    else:
        where.progress(fraction, text=text)


def _cancel_button() -> None:
    st.button("Cancel", key="cancel-scan", icon=":material/stop:", on_click=cancel_scan, width="stretch",
              help="Stops the scan at once; the previous result and every setting are kept.")


@st.fragment(run_every=0.5)
def _scan_status() -> None:
    """A running scan's progress and its Cancel button, redrawn twice a second; the whole page
    is drawn again when the scan ends."""
    job = scan_job()
    if job is None or not job.running:
        st.rerun(scope="app")
    c1, c2 = st.columns([5, 1], vertical_alignment="center")
    _draw_progress(job, c1)
    with c2:
        _cancel_button()


def _slot():
    return st.session_state.get("_scan_slot")


def show_scan_status(here: bool = False) -> None:
    """Draw the running scan's progress once per run: ``here`` (the run button's column), else at
    the top of the page."""
    ss = st.session_state
    if ss.get("_scan_status_drawn") or not scan_running():
        return
    ss["_scan_status_drawn"] = True
    if here or _slot() is None:
        _scan_status()
    else:
        with _slot().container():
            _scan_status()


def wait_for_scan() -> None:
    """Follow the running scan here until it ends (the first visit: nothing to show before it)."""
    ss = st.session_state
    job = scan_job()
    if job is None:
        return
    slot = _slot() or st.empty()
    ss["_scan_status_drawn"] = True
    with slot.container():
        c1, c2 = st.columns([5, 1], vertical_alignment="center")
        bar = c1.empty()
        with c2:
            _cancel_button()
    seen = -1
    while job.running:
        seen = job.updates
        _draw_progress(job, bar)  # also where a click (Cancel) interrupts this run
        job.wait(0.25, seen=seen)
    slot.empty()
    collect_scan()


def run_analysis() -> None:
    """Mine and assess with the current settings and wait here for the result, its progress and
    Cancel at the top of the page (a one-click view that needs the result at once)."""
    start_scan()
    wait_for_scan()


def budget_notes(table: SliceTable) -> list[str]:
    """The result's note that the budget cut the scan short ("complete up to k items; …")."""
    if getattr(table, "complete_length", None) is None:
        return []
    return [n for n in table.notes if "budget" in n]


def result() -> dict | None:
    """The stored result, or None."""
    return st.session_state.get(K.RESULT)


def replicate_key() -> str:
    """The replication file's content key ('' when none was uploaded)."""
    return str(state(K.REPLICATE_KEY) or "") if state(K.REPLICATION) == "file" else ""


def result_labels() -> dict:
    """What a result must carry to be labelled with the data and settings it came from, read
    when it is computed: the data in words (for captions and reports) and the time."""
    import datetime

    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    return dict(data_label=data_label(), data_caption=data_caption(), data_name=state(K.DATA_NAME),
                created=now.isoformat().replace("+00:00", "Z"))


def result_plan_text(res: dict) -> str:
    """The settings a result came from, as slice-plan text stamped with the time of the run."""
    return _stamped_plan(res["plan"], res.get("created"))


@st.cache_data(show_spinner=False, max_entries=16)
def _stamped_plan(key: str, created: str | None) -> str:
    import dataclasses

    return dump_plan(dataclasses.replace(parse_plan(key), created=created))


def data_changed() -> bool:
    """Whether the data in use is not the data the stored result came from."""
    res = result()
    return res is not None and res["data_key"] != state(K.DATA_KEY)


def is_stale() -> bool:
    """Whether the settings changed since the stored result was computed."""
    res = result()
    if res is None:
        return True
    try:
        return res["plan"] != plan_key(current_plan()) or res["data_key"] != state(K.DATA_KEY)
    except DivergenceInputError:
        return True


def ensure_result() -> dict | None:
    """The result to show: the first visit runs the defaults (a finding with no setting touched)
    and waits for them; a scan started by a click is followed without blocking the page."""
    if result() is None and scan_job() is None and state(K.RUN_ERROR) is None and state(K.RUN_NOTICE) is None:
        start_scan(auto=True)
    job = scan_job()
    if job is not None and job.auto and result() is None:
        wait_for_scan()
    else:
        show_scan_status()
    return result()


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


@st.cache_data(show_spinner=False, max_entries=256)
def contributions(result_id: str, itemset: str, metric: str, n_boot: int, _table: SliceTable) -> pd.DataFrame:
    """Shapley contributions of a slice's items (with bootstrap intervals when n_boot > 0)."""
    return divergence.item_contributions(_table, itemset, metric=metric, n_boot=n_boot, seed=0)


@st.cache_data(show_spinner=False, max_entries=32)
def item_values(result_id: str, metric: str, _table: SliceTable) -> pd.DataFrame:
    """Each item's global Shapley value and individual divergence."""
    return divergence.global_divergence(_table, metric=metric)


def current_view(table: SliceTable, result_id: str, top_n: int | None = None) -> SliceView:
    """The Slices page's view (sort, filters, top N) of a result, as the settings say."""
    metric = state(K.VIEW_METRIC) or table.metric_names[0]
    options = sort_options(table, metric)
    column = options.get(state(K.SORT_BY)) or next(iter(options.values()))
    lengths = length_filter()
    # filters naming verdicts or columns this result does not have (set on another result) do not apply
    present = verdicts_in(result_id, metric, table)
    verdicts = [v for v in (state(K.F_VERDICTS) or []) if v in present] or None  # none: every verdict
    attributes = tuple(a for a in (state(K.F_ATTRIBUTES) or ()) if a in table.attributes)
    meets = {"meets": True, "below": False}.get(state(K.F_MIN_SIZE))
    # ε is set in units of the metric's spread: the same setting hides as much for any metric
    eps = redundancy_epsilon(table, metric, float(state(K.REDUNDANCY))) if state(K.F_PRUNE) else 0.0
    return view_of(result_id, metric, column, bool(state(K.SORT_ASC)),
                   tuple(verdicts) if verdicts is not None else None, meets,
                   tuple(lengths) if lengths else None, attributes,
                   int(top_n or state(K.TOP_N)), eps, table)


@st.cache_resource(show_spinner=False, max_entries=32)
def verdicts_in(result_id: str, metric: str, _table: SliceTable) -> frozenset:
    """The verdicts a result gives for a metric."""
    col = f"{metric}_verdict"
    return frozenset(_table.frame[col].iloc[1:].unique()) if col in _table.frame.columns else frozenset()


def length_filter() -> tuple[int, int] | None:
    """The items-per-slice filter as (fewest, most), or None for every length. The most is
    stored as None when the user left the slider at its right end: a later result with longer
    slices shows them all (the slider never shrinks a filter to the longest slice seen)."""
    lengths = state(K.F_LENGTHS)
    if not lengths:
        return None
    lo, hi = lengths
    if int(lo) <= 1 and hi is None:
        return None
    return int(lo), int(hi) if hi is not None else 10 ** 6


def length_slider(longest: int) -> None:
    """The items-per-slice slider over 1..longest of this result (the filter stays open-ended at its right end)."""
    lo, hi = state(K.F_LENGTHS) or (1, None)
    lo = max(1, min(int(lo), longest))
    hi = longest if hi is None else max(lo, min(int(hi), longest))
    wkey = "w:f_lengths"
    st.session_state[wkey] = (lo, hi)

    def changed() -> None:
        a, b = st.session_state[wkey]
        st.session_state[K.F_LENGTHS] = (int(a), None if int(b) >= longest else int(b))

    st.slider("Items per slice", min_value=1, max_value=longest, step=1, key=wkey, on_change=changed)


# ----------------------------------------------------------------------------- render helpers


def show_run_status(where: str = "page") -> None:
    """The last run's error or notice (a budget's note too), and a notice (with a run button) when the
    data or the settings in use are not those the results came from: results never pass for another
    data set's."""
    err = state(K.RUN_ERROR)
    if err:
        st.error(err)
    if state(K.RUN_NOTICE):
        st.info(state(K.RUN_NOTICE))
    res = result()
    if res is not None:
        for note in budget_notes(res["table"]):
            st.warning(note, icon=":material/speed:")
    if res is not None and is_stale() and not scan_running():
        c1, c2 = st.columns([4, 1])
        if data_changed():
            c1.warning(f"These results are from {res.get('data_label', 'the previous data')}. The data now in use is "
                       f"{data_label()}: run the scan to see its slices.", icon=":material/history:")
        else:
            c1.info("The settings changed since these results were computed: they show the settings of the last "
                    "run (Export page: the report states them).")
        c2.button("Run again", key=f"rerun-{where}", type="primary", on_click=start_scan)


@st.cache_data(show_spinner="Writing the report…", max_entries=8)
def report_html(result_id: str, plan_text: str, data_label: str, _table: SliceTable) -> str:
    """The standing report of the current result (the same HTML as `python -m divergence report`)."""
    from divergence.plan import parse_plan
    from divergence.report import build_report

    return build_report(_table, plan=parse_plan(plan_text), plan_label="the dashboard's settings",
                        data_label=data_label)


def data_label() -> str:
    """The data in use in plain words (for reports and notices)."""
    name = "the built-in dataset (credit applications)" if state(K.DATA_NAME) == BUILT_IN else str(state(K.DATA_NAME))
    return f"{name}, {n_rows():,} rows" + (" (scanned by DuckDB)" if is_large() else "")


def result_or_stop(where: str):
    """The stored result's table and id, the run status shown, or a note and a stop."""
    res = ensure_result()
    show_run_status(where)
    if res is None:
        st.info("No results yet: check the settings on the Data and Outcome pages, then run the scan.")
        st.stop()
    return res["table"], res["id"]


def metric_choice(table: SliceTable) -> str:
    """The metric shown (a radio when there are several); a new one resets the sort."""
    metrics = table.metric_names
    if len(metrics) > 1:
        # another metric starts from its default sort; the slice chosen for each metric is kept
        bound(st.radio, "Metric", K.VIEW_METRIC, options=metrics, horizontal=True, format_func=metric_name,
              after=lambda: st.session_state.update({K.SORT_BY: None}))
    return state(K.VIEW_METRIC) if state(K.VIEW_METRIC) in metrics else metrics[0]


def data_caption() -> str:
    df = state(K.FRAME)
    # the data in use, not the source radio (which may point at a source not read yet)
    name = "the built-in dataset (credit applications)" if state(K.DATA_NAME) == BUILT_IN else f"`{state(K.DATA_NAME)}`"
    where = " (a local path, scanned by DuckDB)" if is_large() else ""
    return f"Data: {name}{where}, {n_rows():,} rows × {df.shape[1]} columns."


def metric_name(m: str) -> str:
    """A metric as people read it: 'fpr' -> 'FPR: false-positive rate'."""
    return metric_label(m, long=True)


def gamma_parts(gamma: str | None) -> tuple[str, float | None]:
    """'topk:10' -> ('topk', 10.0); 'dcg' -> ('dcg', None)."""
    kind, _, param = (gamma or "dcg").partition(":")
    try:
        return (kind if kind in ("dcg", "topk", "power") else "dcg"), (float(param) if param else None)
    except ValueError:
        return kind, None


def min_size_sentences() -> list[str]:
    """How the minimum slice size follows from δ and the confidence, for each metric of the
    last result, under the settings as they are now (the engine's derivation)."""
    res = result()
    if res is None or data_changed():  # n_min is derived from a result of the data in use
        return []
    table = res["table"]
    out = []
    for m in table.metrics:
        info = (table.assessment or {}).get("min_size", {}).get(m.name)
        if info is None:
            continue
        try:
            now = min_size_derivation(table.overall(m.name), info["sigma"], m.binary, state(K.DELTA),
                                      float(state(K.CONFIDENCE)), m.name)
        except DivergenceInputError as exc:
            out.append(str(exc))
            continue
        out.append(f"**{m.name}**: {now['text']}")
    return out


def result_caption(table: SliceTable, res: dict | None = None) -> str:
    """One line on what the result came from: its data (as it was when the scan ran), the kind
    of search, the support, confidence, correction and replication."""
    a = table.assessment or {}
    res = res if res is not None else result()
    kind = "an exploratory search" if a.get("exploratory", True) else "a pre-registered slice plan"
    rep = f"; replicated on {a['replication']}" if a.get("replication") else "; no replication data"
    engine = "; scanned by DuckDB, intervals analytic" if table.engine == "duckdb" else ""
    data = (res or {}).get("data_caption", "").removeprefix("Data: ").rstrip(".")
    where = f"Results of {data}: " if data else ""
    return (f"{where}{kind}, {len(table) - 1:,} slices with support ≥ {table.min_support:g}; "
            f"{a.get('confidence', 0.95):.0%} confidence, {CORRECTIONS.get(a.get('correction'), '')}{rep}{engine}.")


def interval_level(table: SliceTable) -> str:
    """The level of the intervals drawn, named for the axis of the interval plot."""
    a = table.assessment or {}
    label = a.get("interval_label")
    if label:
        return label
    return (f"{a.get('confidence', 0.95):.0%} intervals per slice (not adjusted); significance uses "
            f"{CORRECTION_SHORT.get(a.get('correction'), '')} q-values")


def themed(fig):
    """Drop a figure's fixed template so Streamlit's light or dark theme styles it."""
    fig.update_layout(template=None)
    return fig


@st.cache_data(show_spinner=False, max_entries=4)
def full_csv(result_id: str, _table: SliceTable) -> bytes:
    """Every slice of a result as CSV (built once per result, on the first download)."""
    return table_csv(_table.frame)


def support_offers(table: SliceTable) -> list[tuple[str, float]]:
    """Per metric, the support at which a typical slice holds n_min measured rows (engine's rule)."""
    out = []
    for name in table.metric_names:
        try:
            out.append((name, divergence.support_for_min_size(table, name)))
        except (KeyError, TypeError, DivergenceInputError):
            continue
    return out


# ----------------------------------------------------------------------------- the slice table and the open slice

#: widget key of the slice table: its selection state says which row or header was clicked
GRID = "slice_grid"


def chosen(metric: str) -> str | None:
    """The slice last clicked in the table for ``metric`` (kept when another metric is shown)."""
    sel = state(K.SELECTED)
    return sel.get(metric) if isinstance(sel, dict) else None


def choose(metric: str, itemset: str | None) -> None:
    """Open a slice from the table (or a page that shows the table's slices); the editor follows."""
    sel = dict(state(K.SELECTED)) if isinstance(state(K.SELECTED), dict) else {}
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
    shown = state(K.GRID_SHOWN)
    if not shown or GRID not in ss or shown.get("metric") != metric or shown.get("result") != (result() or {}).get("id"):
        return
    now, seen = _selection(ss[GRID]), shown.get("seen") or _selection(None)
    if now["columns"] != seen["columns"]:
        clicked = (now["columns"] or seen["columns"])[0]  # a click on a selected header deselects it
        frame_col = display_sort_columns(table, metric).get(clicked)
        label = {v: k for k, v in sort_options(table, metric).items()}.get(frame_col)
        if label is not None:
            if label == state(K.SORT_BY):
                ss[K.SORT_ASC] = not bool(state(K.SORT_ASC))
            else:
                ss.update({K.SORT_BY: label, K.SORT_ASC: default_ascending(frame_col)})
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
    shows it, else the table's first row (a sort, a filter or a new scan never leaves a slice
    open that the table no longer holds). ``known``: the items a slice may use (default: the
    result's); a typed slice using any other (a new scan of other columns) is dropped."""
    typed = state(K.TYPED)
    if typed:
        if known is None:
            known = {f"{b.name}={lab}" for b in table.bins for lab in b.labels}
        if all(i in known for i in typed):
            return list(typed), "typed"
        type_slice(None)  # items the new result does not have
    itemsets = view.rows["itemset"].tolist()
    pick = chosen(metric)
    if pick not in itemsets:
        pick = itemsets[0] if itemsets else None
    return (items_of(table, pick) if pick else []), "table"


def mined_rows(res: dict) -> pd.DataFrame | None:
    """The rows the result mined (for items of columns left out of the scan), when the data in
    use is still the result's: every row, or the mined side of a split; None for a held-out
    share or a local path."""
    if data_changed() or is_large() or is_stale():
        return None
    kind = state(K.REPLICATION)
    df = state(K.FRAME)
    if kind == "holdout":
        return None
    if kind == "split":
        try:
            return split_rows(df, state(K.SPLIT_COLUMN), list(state(K.SPLIT_VALUES)))[0]
        except DivergenceInputError:
            return None
    return df


def replication_rows() -> pd.DataFrame | None:
    """The rows the result's slices were confirmed on (a second file or a split), when known."""
    if data_changed() or is_stale():
        return None
    kind = state(K.REPLICATION)
    if kind == "file":
        return state(K.REPLICATE_FRAME)
    if kind == "split":
        try:
            return split_rows(state(K.FRAME), state(K.SPLIT_COLUMN), list(state(K.SPLIT_VALUES)))[1]
        except DivergenceInputError:
            return None
    return None


@st.cache_resource(show_spinner=False, max_entries=16)
def item_options(result_id: str, _table: SliceTable, _data: pd.DataFrame | None) -> pd.DataFrame:
    """Every item a slice can be built from (the scanned attributes', then the left-out columns')."""
    return divergence.adhoc.item_catalog(_table, _data)


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


@st.cache_resource(show_spinner=False, max_entries=16)
def card_findings(result_id: str, metric: str, _table: SliceTable):
    """The findings summary of a result: (cards, how many findings in all)."""
    return findings(_table, metric)


def slice_grid(table: SliceTable, view: SliceView, metric: str, open_itemset: str | None, *,
               height: int | None = None) -> None:
    """The slice table: click a header to sort every slice by it, click a row to open it. The
    open slice's row stays selected across reruns; headers explain their column on hover."""
    shown = display_frame(table, view.rows, metric, also=[view.sort_by])
    itemsets = view.rows["itemset"].tolist()
    sorted_col = next((c for c, f in display_sort_columns(table, metric).items() if f == view.sort_by), None)
    arrow = " ▲" if view.ascending else " ▼"
    widths = {"Slice": 350, "Verdict": 200, "Interval": 112, "Bootstrap": 112, "Replication": 160}
    config = {c: st.column_config.TextColumn(c + (arrow if c == sorted_col else ""), help=column_help(c),
                                             width=widths.get(c), pinned=c == "Slice",
                                             alignment="left" if c in ("Slice", "Verdict") else "right")
              for c in shown.columns}
    # the verdict beside the slice: what a reader needs first, never scrolled out of view
    order = ["Slice"] + (["Verdict"] if "Verdict" in shown.columns else []) + [
        c for c in shown.columns if c not in ("Slice", "Verdict")]
    # the open slice's row selected, the sorted column highlighted. The table takes a selection from here
    # only when it differs from the one sent before; otherwise it keeps its own (what the browser reported)
    desired = {"rows": [itemsets.index(open_itemset)] if open_itemset in itemsets else [],
               "columns": [sorted_col] if sorted_col in shown.columns else [], "cells": []}
    previous = state(K.GRID_SHOWN) or {}
    reported = _selection(st.session_state.get(GRID)) if GRID in st.session_state else desired
    seen = reported if desired == previous.get("sent") else desired
    st.session_state[GRID] = {"selection": desired}
    st.session_state[K.GRID_SHOWN] = dict(itemsets=itemsets, sent=desired, seen=seen, metric=metric,
                                          result=(result() or {}).get("id"))
    styled = shown.style.map(lambda v: f"background-color: {rgba(verdict_color(str(v).split(' ·')[0]), 0.28)}",
                             subset=["Verdict"]) if "Verdict" in shown.columns else shown
    st.dataframe(styled, key=GRID, on_select="rerun", selection_mode=["single-row", "single-column", "single-cell"],
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


# ----------------------------------------------------------------------------- the built-in data's planted findings

#: what was planted in the built-in dataset (divergence.datasets), each reachable in one click
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
    if state(K.TASK) != c["task"] or c["metric"] not in (state(K.METRICS) or []):
        ss.update(dict(ROLE_DEFAULTS))
        ss.update(DEMO_SETTINGS if c["task"] == "classification" else _DEMO_REGRESSION)
    if is_stale():
        run_analysis()
    if result() is None or c["metric"] not in result()["table"].metric_names:
        return  # the run failed: its error shows on the page
    ss.update({K.VIEW_METRIC: c["metric"], K.SORT_BY: None, K.F_VERDICTS: [], K.F_ATTRIBUTES: [],
               K.F_MIN_SIZE: "all", K.F_LENGTHS: None})
    type_slice(c["itemset"].split(", "))
    st.rerun()


def demo_strip() -> None:
    """On the built-in data: one button per planted finding (what was planted on hover)."""
    if state(K.DATA_NAME) != BUILT_IN or (result() or {}).get("data_name", BUILT_IN) != BUILT_IN:
        return
    cols = st.columns([1, 2.2, 1.5, 2.1])
    cols[0].markdown("**Planted findings**", help=DEMO_STORY)
    for col, (case, c) in zip(cols[1:], DEMO_CASES.items()):
        if col.button(c["label"], key=f"demo-{case}", width="stretch", help=DEMO_STORY):
            open_demo_case(case)


@st.cache_resource(show_spinner=False, max_entries=32)
def shared_rows(result_id: str, itemsets: tuple[str, ...], _table: SliceTable) -> pd.DataFrame:
    """Rows each pair of slices shares (``divergence.overlap``)."""
    return divergence.overlap(_table, list(itemsets))


@st.cache_resource(show_spinner=False, max_entries=32)
def covered_rows(result_id: str, itemsets: tuple[str, ...], _table: SliceTable) -> int | None:
    """Distinct rows the slices hold together."""
    return divergence.adhoc.rows_covered(_table, list(itemsets))


@st.cache_resource(show_spinner=False, max_entries=64)
def slice_figures(result_id: str, items: tuple[str, ...], metric: str, delta: float | None, _measured):
    """The open slice's Shapley chart and lattice (the lattice None with the reason when it cannot be
    drawn), built once per slice and metric: a sort or a filter that keeps the slice open redraws nothing."""
    from divergence.figures import contribution_figure, lattice_figure

    binary = _measured.table.metric(metric).binary
    contrib = slice_contributions(result_id, items, metric, _measured)
    bars = themed(contribution_figure(contrib, binary=binary, template=None))
    try:
        lattice = themed(lattice_figure(_measured.table, _measured.itemset, metric=metric, threshold=delta,
                                        template=None))
    except DivergenceInputError as exc:
        return bars, None, str(exc)
    return bars, lattice, ""


@st.cache_data(show_spinner=False, max_entries=16)
def plan_yaml(key: str) -> str:
    """A plan (given by its JSON key) as YAML text, written once per plan (YAML is slow to write)."""
    return dump_plan(parse_plan(key))


def in_app_test() -> bool:
    """Whether the script runs under AppTest (no browser: nothing to warm for it)."""
    from streamlit import config

    return bool(config.get_option("global.appTest"))


# ----------------------------------------------------------------------------- comparing two models
# (divergence.compare: the model in the roles above against a reference model on the same rows)


class KC:
    """Plain session-state keys of the comparison (settings, result, view)."""

    ON = "compare_on"                  # compare the model with a reference model
    REF_KIND = "compare_ref_kind"      # "labels" or "score" (classification)
    REFERENCE = "compare_reference"    # the reference's predicted labels or values
    REF_SCORE = "compare_ref_score"
    REF_THRESHOLD = "compare_ref_threshold"
    RESULT = "compare_result"          # dict(comparison, key, data_key, seconds, id)
    RUN_ERROR = "compare_run_error"
    METRIC = "compare_metric"
    VERDICTS = "compare_verdicts"
    TOP_N = "compare_top_n"
    SELECTED = "compare_selected"


COMPARE_ROLE_DEFAULTS: dict[str, Any] = {KC.ON: False, KC.REF_KIND: "labels", KC.REFERENCE: None,
                                         KC.REF_SCORE: None, KC.REF_THRESHOLD: 0.5}
ROLE_DEFAULTS.update(COMPARE_ROLE_DEFAULTS)  # new data: no comparison until one is chosen
DEFAULTS.update(COMPARE_ROLE_DEFAULTS)
DEFAULTS.update({KC.RESULT: None, KC.RUN_ERROR: None, KC.METRIC: None, KC.VERDICTS: [], KC.TOP_N: 25,
                 KC.SELECTED: None})


@st.cache_data(show_spinner=False)
def demo_models_frame() -> pd.DataFrame:
    """The built-in dataset with the previous models' predictions, for comparisons."""
    from divergence.datasets import load_demo_models

    return load_demo_models()


def comparing() -> bool:
    """Whether a comparison is set up (classification or regression on rows in memory)."""
    return bool(state(KC.ON)) and state(K.TASK) in ("classification", "regression") and not is_large()


def reference_columns() -> list[str]:
    """The reference model's columns (never attributes)."""
    if not comparing():
        return []
    if state(K.TASK) == "classification" and state(KC.REF_KIND) == "score":
        return [c for c in [state(KC.REF_SCORE)] if c]
    return [c for c in [state(KC.REFERENCE)] if c]


def on_compare_toggle() -> None:
    """Turning the comparison on for the built-in data brings in its previous models."""
    if not state(KC.ON) or state(K.DATA_NAME) != BUILT_IN:
        return
    ss = st.session_state
    if "previous_default" not in state(K.FRAME).columns:
        # the same rows and columns plus three: every result cached on the built-in data stays valid
        ss[K.FRAME] = demo_models_frame()
        column_summary.clear()
    if not state(KC.REFERENCE) and not state(KC.REF_SCORE):
        task = state(K.TASK)
        ss[KC.REFERENCE] = {"classification": "previous_default", "regression": "previous_spend"}.get(task)
        ss[KC.REF_SCORE] = "previous_score"


def compare_section(df: pd.DataFrame) -> None:
    """The Data page's choice of a reference model to compare with (drawn under the roles)."""
    st.subheader("Compare models")
    if is_large():
        st.caption("Comparing two models needs the rows in memory: not offered for a local path scanned by DuckDB.")
        return
    task = state(K.TASK)
    if task not in ("classification", "regression"):
        st.caption("A comparison needs a classifier or a regressor (choose the task above).")
        return
    bound(st.toggle, "Compare the model with a reference model (e.g. the one in production) on the same rows",
          KC.ON, after=on_compare_toggle)
    if not state(KC.ON):
        st.caption("Where is the model worse than the one it replaces? Each slice's change is tested as a paired "
                   "comparison: both models are scored on the same rows.")
        return
    columns = list(df.columns)
    taken = {state(K.TARGET), state(K.PREDICTION), state(K.SCORE)}
    candidates = [c for c in columns if c not in taken]
    c1, c2 = st.columns(2)
    if task == "classification":
        with c1:
            bound(st.radio, "The reference's output", KC.REF_KIND, options=["labels", "score"], horizontal=True,
                  format_func={"labels": "Predicted labels", "score": "A score and a threshold"}.get)
        with c2:
            if state(KC.REF_KIND) == "score":
                bound(st.selectbox, "Reference score column", KC.REF_SCORE, options=candidates, index=None,
                      placeholder="Choose a column")
                bound(st.number_input, "Reference threshold (score ≥ threshold predicts positive)", KC.REF_THRESHOLD,
                      step=0.05, format="%.3f")
            else:
                bound(st.selectbox, "Reference prediction column", KC.REFERENCE, options=candidates, index=None,
                      placeholder="Choose a column")
    else:
        with c1:
            bound(st.selectbox, "Reference prediction column", KC.REFERENCE, options=candidates, index=None,
                  placeholder="Choose a column")
    try:
        checked = check_comparison(state(K.DATA_KEY), compare_key(), df)
    except DivergenceInputError as exc:
        st.error(str(exc))
        return
    st.caption(f"Compared on the Compare page: {', '.join(checked['metrics'])}, model '{checked['model']}' against "
               f"reference '{checked['reference']}' on {format_count(checked['rows_compared'])} rows"
               + (f" ({format_count(checked['rows_left_out'])} left out: a prediction or the target is missing)"
                  if checked["rows_left_out"] else "") + ".")
    st.page_link("pages/compare.py", label="Compare the models", icon=":material/compare_arrows:")


@st.cache_data(show_spinner=False, max_entries=32)
def check_comparison(data_key: str, compare_json: str, _df: pd.DataFrame) -> dict:
    """The models' columns checked without mining (``divergence.compare.check_models``)."""
    from divergence.compare import check_models

    return check_models(_df, **json.loads(compare_json))


def compare_metrics() -> list[str]:
    """The Outcome page's metrics that a comparison measures, else the comparison's defaults."""
    from divergence.compare import COMPARE_CLASSIFICATION_METRICS, COMPARE_REGRESSION_METRICS

    regression = state(K.TASK) == "regression"
    allowed = COMPARE_REGRESSION_METRICS if regression else COMPARE_CLASSIFICATION_METRICS
    if not regression and state(KC.REF_KIND) == "score" and state(K.PRED_KIND) == "score":
        pass  # Brier is comparable with two scores
    else:
        allowed = tuple(m for m in allowed if m != "brier")
    chosen = [m for m in (state(K.METRICS) or []) if m in allowed]
    return chosen or (["abs_error"] if regression else ["error", "fpr", "fnr"])


def compare_section_settings() -> dict:
    """The plan's compare section from the settings (empty when no comparison is set up)."""
    if not comparing():
        return {}
    if state(K.TASK) == "classification" and state(KC.REF_KIND) == "score":
        return {"reference_score": state(KC.REF_SCORE), "reference_threshold": float(state(KC.REF_THRESHOLD))}
    return {"reference": state(KC.REFERENCE)}


def compare_kwargs() -> dict:
    """Every keyword argument of ``divergence.compare`` from the settings."""
    section = compare_section_settings()
    if not section or not (section.get("reference") or section.get("reference_score")):
        raise DivergenceInputError("Choose the reference model's column (Data page, Compare models).")
    kw = {k: v for k, v in scan_kwargs().items() if k != "metrics"}
    kw.update(section, metrics=compare_metrics())
    stats = statistics_kwargs()
    kw.update({k: stats[k] for k in ("delta", "confidence", "correction") if k in stats})
    return kw


@st.cache_data(show_spinner=False, max_entries=8)
def compare_cached(data_key: str, compare_json: str, _df: pd.DataFrame):
    """``divergence.compare`` cached on the data and the settings."""
    c = divergence.compare(_df, **json.loads(compare_json))
    c.frame  # build the readable frame once, inside the cache
    return c


def compare_key() -> str:
    return json.dumps(compare_kwargs(), sort_keys=True, default=str)


def run_comparison() -> None:
    """Compare the models with the current settings, with a progress bar; store the result
    (a DivergenceInputError is kept for the page to show; the previous result stays)."""
    ss = st.session_state
    bar = st.progress(0, text="Checking the settings…")
    t0 = time.perf_counter()
    try:
        key = compare_key()
        bar.progress(10, text=f"Mining every slice with support ≥ {float(state(K.MIN_SUPPORT)):g} with both "
                              "models' tallies, then testing each slice's change…")
        c = compare_cached(state(K.DATA_KEY), key, state(K.FRAME))
        bar.progress(100, text="Done.")
    except DivergenceInputError as exc:
        bar.empty()
        ss[KC.RUN_ERROR] = str(exc)
        return
    bar.empty()
    ss[KC.RUN_ERROR] = None
    ss[KC.RESULT] = dict(comparison=c, key=key, data_key=state(K.DATA_KEY), seconds=time.perf_counter() - t0,
                         id=hashlib.blake2b((state(K.DATA_KEY) + key).encode(), digest_size=8).hexdigest())
    if state(KC.METRIC) not in c.metric_names:
        ss[KC.METRIC] = c.metric_names[0]
    if state(KC.SELECTED) is not None:
        try:
            c.lookup(state(KC.SELECTED))
        except DivergenceInputError:
            ss[KC.SELECTED] = None


def comparison_result() -> dict | None:
    return st.session_state.get(KC.RESULT)


def comparison_is_stale() -> bool:
    res = comparison_result()
    if res is None:
        return True
    try:
        return res["key"] != compare_key() or res["data_key"] != state(K.DATA_KEY)
    except DivergenceInputError:
        return True


@st.cache_data(show_spinner=False, max_entries=256)
def change_contributions(result_id: str, itemset: str, metric: str, _comparison) -> pd.DataFrame:
    """Shapley contributions of a slice's items to its change beyond the whole dataset's."""
    return _comparison.contributions(itemset, metric)


@st.cache_data(show_spinner="Writing the report…", max_entries=4)
def comparison_report_html(result_id: str, scan_id: str, plan_text: str, data_label: str, _comparison,
                           _table: SliceTable) -> str:
    """The standing report with the comparison first (the same HTML as `python -m divergence report`)."""
    from divergence.plan import parse_plan
    from divergence.report import build_report

    return build_report(_table, plan=parse_plan(plan_text), plan_label="the dashboard's settings",
                        data_label=data_label, comparison=_comparison)
