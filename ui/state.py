"""Session state: the session's one :class:`divergence.Settings` (``K.SETTINGS``), the plain keys of
the form and view state around it (``K``, ``KC``), their defaults, widgets bound to them (drawn from
the settings fields' kinds), and the few facts read straight from them (the data's size, the result).

Every setting with a field in the settings model lives in the session's ``Settings``: a page reads
and writes it by its key (``get(K.TARGET)``, ``update(target=...)``, a bound widget), and
:data:`SETTING_FIELDS` says which field each key is. A value the model refuses (a bootstrap of 10,
a threshold cleared) is kept as entered in ``K.DRAFTS`` with the model's message: the widget
shows it and says why, and Run refuses in the same words, so nothing typed is lost. What is not a
field stays a plain key: the form's choices that say which fields a run reads (the task, labels or
a score, a rank or a score, per row or per query, the support as a share or as rows), the
replication's and the comparison's sections while they are being chosen (a split needs its column
before it is a ``Replication``), the data, the results and the view.

State lives in plain session-state keys, never only in widget keys: a keyed widget's state is
dropped when another page runs. Each settings widget is drawn through :func:`bound`, which copies
the value into the widget before it is drawn and back on change (Streamlit's documented pattern for
widgets that must survive page changes). A widget whose value the app sets is drawn under a new
key (:func:`widget_key`), so a browser that has not drawn that value yet cannot send the old one
back as the user's choice.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import streamlit as st

from divergence import DivergenceInputError, Settings
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES
from divergence.errors import shown
from divergence.present.formats import md_text
from divergence.settings import (
    Columns,
    Flag,
    Integer,
    Kind,
    Names,
    OneOf,
    PerMetric,
    Real,
    Replication,
    Support,
    Text,
    section,
    section_keys,
    setting_field,
)
from ui import cache

BUILT_IN = "built-in"
LOCAL_PATH = "path"                 # a local file, folder or glob scanned by DuckDB (large data)


class K:
    """Session-state keys: the settings' (fields of ``K.SETTINGS``, :data:`SETTING_FIELDS`), the
    form's, the data's, the results' and the view's."""

    SETTINGS = "settings"            # the session's divergence.Settings: every setting with a field
    DRAFTS = "setting_drafts"        # {key: (value, message)}: values the settings model refused, as entered

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
    RANK_LEVEL = "rank_level"        # ranking quality "row" (gamma of the rank) or per "query"
    QUERY = "query"                  # the query column (RANK_LEVEL "query")
    RELEVANCE = "relevance"          # graded relevance of each row (RANK_LEVEL "query")
    QUERY_METRICS = "query_metrics"  # ndcg@10, mrr, precision@5, ...
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
    HOLDOUT_SEED = "holdout_seed"    # the held-out rows' draw (the replication's own seed)
    REPLICATE_FRAME = "replicate_frame"
    REPLICATE_NAME = "replicate_name"
    REPLICATE_ERROR = "replicate_error"
    REPLICATE_NOTES = "replicate_notes"
    REPLICATE_KEY = "replicate_key"  # the replication file's content (cache key)
    # outcome and thresholds
    METRICS = "metrics"
    MIN_SUPPORT = "min_support"
    SUPPORT_MODE = "support_mode"    # the minimum support typed as a "share" or as "rows"
    SUPPORT_ROWS = "support_rows"    # the minimum support as a row count (SUPPORT_MODE "rows")
    MAX_LENGTH = "max_length"        # 0: no limit
    EXHAUSTIVE = "exhaustive"        # every itemset (DivExplorer's listing) instead of each set of rows once
    MAX_SLICES = "max_slices"        # the budget: most slices a scan may list
    TIME_LIMIT = "time_limit"        # the safety net: seconds of mining
    MAX_WORK = "max_work"            # the budget: units of mining work (the same table on any machine)
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
    JOB = "scan_job"                 # the running scan (ui.worker.Job), or None
    READ_JOB = "read_job"            # an upload being read by a worker: dict(job, kind, name, key, path)
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
    CSV_SAFE = "csv_safe"            # CSV downloads: formula-like text gets a leading apostrophe


class KC:
    """Plain session-state keys of the comparison of two models (settings, result, view)."""

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


#: the sections of the Settings whose fields the session holds (the replication and the comparison are
#: built from the Data page's choices when a run reads them: ``ui.settings.run_replication``, ``run_compare``)
SESSION_SECTIONS = ("roles", "slicing", "mining", "statistics", "explain")
#: the keys whose values are fields of the session's Settings (every field of those sections, by its
#: name; ``sort_by`` is the slice table's sort here, a view key): key -> the field's name
SETTING_FIELDS: dict[str, str] = {name: name for sec in SESSION_SECTIONS for name in section_keys(sec)
                                  if name != K.SORT_BY}
#: each field's section of the Settings (roles, slicing, mining, statistics, explain)
_SECTION: dict[str, str] = {name: sec for sec in SESSION_SECTIONS for name in section_keys(sec)}
#: where the dashboard opens on another value than the setting's field (every other setting opens on its
#: field's own default, read from the settings model: one default per setting, tests/app/test_session_settings.py):
#: the classification metrics shown first, no outcome column as the page's empty list, the ranking's first gain,
#: and redundant slices pruned at 0.05 σ (the library and the command line prune only when asked: --prune)
DASHBOARD_OPENS_ON: dict[str, Any] = {K.METRICS: ["fpr", "fnr"], K.OUTCOME: [], K.GAMMA: "dcg", K.REDUNDANCY: 0.05}


def field_default(key: str) -> Any:
    """The value a setting's key opens on: its field's default, unless DASHBOARD_OPENS_ON says otherwise."""
    if key in DASHBOARD_OPENS_ON:
        return DASHBOARD_OPENS_ON[key]
    return _to_page(key, _field(_MODEL, key))


#: the held-out share the dashboard opens on (0.3), with the seed the model draws it from when not given
_HOLDOUT = Replication(kind="holdout", share=0.3)
#: the column roles and what depends on them, reset for new data (no comparison until one is chosen): the
#: form's choices, and every field of the roles and the slicing at its default (:func:`field_default`)
ROLE_CHOICES: dict[str, Any] = {
    K.TASK: "classification", K.PRED_KIND: "labels", K.RANK_KIND: "score", K.RANK_LEVEL: "row",
    K.QUERY_METRICS: ["ndcg@10", "mrr", "precision@5"], K.BIN_TEXTS: {}, K.ROLE_NOTES: [], K.ROLE_GUESS: {}, K.ADDED: [],
    K.BIN_ERRORS: {}, K.REPLICATION: "none", K.SPLIT_COLUMN: None, K.SPLIT_VALUES: [], K.HOLDOUT: _HOLDOUT.share,
    K.HOLDOUT_SEED: _HOLDOUT.seed,
    KC.ON: False, KC.REF_KIND: "labels", KC.REFERENCE: None, KC.REF_SCORE: None, KC.REF_THRESHOLD: 0.5,
}
#: the keys of state that are not fields, and the value each opens on
DEFAULTS: dict[str, Any] = {
    K.SOURCE: BUILT_IN, K.DATA_NAME: BUILT_IN, K.DATA_KEY: BUILT_IN, K.UPLOAD_ERROR: None, K.DATA_NOTES: [],
    K.PATH: None, K.PATH_ROWS: None, K.PATH_TEXT: "", K.PATH_ERROR: None,
    **ROLE_CHOICES,
    K.REPLICATE_FRAME: None, K.REPLICATE_NAME: None, K.REPLICATE_ERROR: None, K.REPLICATE_NOTES: [], K.REPLICATE_KEY: "",
    K.SUPPORT_MODE: "share", K.SUPPORT_ROWS: 100, K.PLAN_KIND: "exploratory",
    K.RESULT: None, K.RUN_ERROR: None, K.RUN_NOTICE: None, K.JOB: None, K.READ_JOB: None, K.VIEW_METRIC: None, K.SORT_BY: None,
    K.SORT_ASC: False,
    K.F_VERDICTS: [], K.F_MIN_SIZE: "all", K.F_LENGTHS: None, K.F_ATTRIBUTES: [], K.F_PRUNE: True,
    K.TOP_N: 25, K.SELECTED: None, K.TYPED: None, K.GRID_SHOWN: None, K.PLAN_ERROR: None, K.CSV_SAFE: True,
    KC.RESULT: None, KC.RUN_ERROR: None, KC.METRIC: None, KC.VERDICTS: [], KC.TOP_N: 25, KC.SELECTED: None,
}
#: the built-in dataset's column roles (its classification task)
DEMO_SETTINGS = {
    K.TASK: "classification", K.TARGET: "defaulted", K.PREDICTION: "predicted_default",
    K.POSITIVE: "yes", K.METRICS: ["fpr", "fnr"], K.ATTRIBUTES: list(DEMO_ATTRIBUTES),
}
assert DEMO_ROLES["classification"]["target"] == DEMO_SETTINGS[K.TARGET]


_MODEL = Settings()  # the fields' defaults


def _to_field(key: str, value: Any) -> Any:
    """A page's value as the field takes it: no limit on the items per slice is 0 on the page."""
    if key == K.MAX_LENGTH:
        return int(value) if value else None
    return value


def _to_page(key: str, value: Any) -> Any:
    """A field's value as the pages use it: lists, not tuples; no limit on the items is 0."""
    if key == K.MAX_LENGTH:
        return value or 0
    return list(value) if isinstance(value, tuple) else value


def section_of(name: str) -> str:
    """The section of the Settings that holds a field (roles, slicing, mining, statistics, explain)."""
    return _SECTION[name]


def session_settings() -> Settings:
    """The session's one Settings (what a run sends: ``ui.settings.run_settings``)."""
    return st.session_state[K.SETTINGS]


def _field(settings: Settings, key: str) -> Any:
    name = SETTING_FIELDS[key]
    return getattr(getattr(settings, _SECTION[name]), name)


def _changed(settings: Settings, values: dict[str, Any]) -> Settings:
    """``settings`` with some fields changed, each section validated again (DivergenceInputError
    names the field at fault)."""
    by_section: dict[str, dict] = {}
    for k, v in values.items():
        name = SETTING_FIELDS[k]
        by_section.setdefault(_SECTION[name], {})[name] = _to_field(k, v)
    return dataclasses.replace(settings, **{sec: section(type(getattr(settings, sec)), getattr(settings, sec), vals)
                                            for sec, vals in by_section.items()})


def _set_fields(values: dict[str, Any]) -> None:
    """Change fields of the session's Settings; a value the model refuses is kept as a draft with
    the model's message (the field keeps its last value the model took)."""
    ss = st.session_state
    settings, drafts = ss[K.SETTINGS], dict(ss.get(K.DRAFTS) or {})
    try:
        settings = _changed(settings, values)
        for k in values:
            drafts.pop(k, None)
    except DivergenceInputError:
        for k, v in values.items():  # one at a time: keep each value the model takes
            try:
                settings = _changed(settings, {k: v})
                drafts.pop(k, None)
            except DivergenceInputError as exc:
                drafts[k] = (v, str(exc))
    ss[K.SETTINGS], ss[K.DRAFTS] = settings, drafts


def role_defaults() -> dict[str, Any]:
    """What new data resets: the form's choices (ROLE_CHOICES) and every field of the roles and the
    slicing at the value it opens on."""
    fields = {key: field_default(key) for key, name in SETTING_FIELDS.items() if _SECTION[name] in ("roles", "slicing")}
    return {**fields, **ROLE_CHOICES}


def init_state() -> None:
    """Put every setting's default in session state (first run), on the built-in dataset."""
    ss = st.session_state
    if K.SETTINGS not in ss:
        ss[K.SETTINGS], ss[K.DRAFTS] = Settings(), {}
        _set_fields(dict(DASHBOARD_OPENS_ON))  # every other field opens on its default
    if K.FRAME not in ss:
        ss[K.FRAME] = cache.demo_frame()
        update(**DEMO_SETTINGS)
    for k, v in DEFAULTS.items():
        ss.setdefault(k, v)


def get(key: str) -> Any:
    """A setting's (or result's) value: a field of the session's Settings (or its draft, a value
    the model refused as entered), else session state, else its default."""
    return read(st.session_state, key)


def read(ss: Any, key: str) -> Any:
    """:func:`get` from a given session state (a test's ``AppTest.session_state``)."""
    if key in SETTING_FIELDS and K.SETTINGS in ss:
        drafts = (ss[K.DRAFTS] if K.DRAFTS in ss else None) or {}
        return drafts[key][0] if key in drafts else _to_page(key, _field(ss[K.SETTINGS], key))
    if key in SETTING_FIELDS:
        return field_default(key)
    return ss[key] if key in ss else DEFAULTS.get(key)


def update(**values: Any) -> None:
    """Change settings from code (a callback, a plan): fields go to the session's Settings, other
    keys to session state."""
    fields = {k: v for k, v in values.items() if k in SETTING_FIELDS}
    if fields:
        _set_fields(fields)
    for k, v in values.items():
        if k not in SETTING_FIELDS:
            st.session_state[k] = v


def refused() -> dict[str, tuple[Any, str]]:
    """The values the settings model refused, as entered, with its message ({key: (value, message)})."""
    return dict(st.session_state.get(K.DRAFTS) or {})


def is_large() -> bool:
    """Whether the data in use is a local path scanned by DuckDB (no rows in memory)."""
    return get(K.PATH) is not None


def n_rows() -> int:
    """Rows of the data in use (a local path: all its rows, not the preview's)."""
    return int(get(K.PATH_ROWS)) if is_large() else len(get(K.FRAME))


class HeldResult(dict):
    """A session's result: its labels, and its table held by the results the server keeps
    (``ui.cache.assessed_results``, within their memory budget), not by the session. Six sessions
    that each scanned a large table hold the server's budget, not six tables: a table the server
    dropped is gone for the session too (``result()`` then says so and offers to run again)."""

    def __init__(self, table, key, **labels) -> None:
        super().__init__(key=key, **labels)
        cache.assessed_results().put(key, table) if cache.assessed_results().get(key) is None else None

    def table(self):
        """The table, while the server keeps it (the results kept are the one place that holds it)."""
        return cache.assessed_results().get(self["key"])

    def __getitem__(self, key):
        return self.table() if key == "table" else super().__getitem__(key)

    def get(self, key, default=None):
        return self.table() if key == "table" else super().get(key, default)


DROPPED = ("The last result was dropped from the server's memory to make room for other scans (the server "
           "keeps its results within a memory budget, shared by every session): run the scan again.")


def result() -> dict | None:
    """The stored result, or None (also when the server dropped its table: a notice says so)."""
    res = st.session_state.get(K.RESULT)
    if isinstance(res, HeldResult) and res.table() is None:
        st.session_state[K.RESULT] = None
        st.session_state[K.RUN_NOTICE] = DROPPED
        return None
    return res


def data_changed() -> bool:
    """Whether the data in use is not the data the stored result came from."""
    res = result()
    return res is not None and res["data_key"] != get(K.DATA_KEY)


# ----------------------------------------------------------------------------- widgets bound to plain keys


def _widget_key(key: str) -> str:
    return f"w:{key}"


#: plain key: the key each setting's widget is drawn under now ({base key: key})
WIDGET_KEYS = "widget_keys"


def widget_key(base: str, value: Any) -> str:
    """The key to draw a widget under so that it shows ``value``, with ``value`` put there.

    The key stays while the widget already holds ``value`` (the user's own change); when the
    app sets a value the widget does not hold (a default that follows the roles, a plan, another
    widget's callback), the widget is drawn under a new key (``base#1``, ``base#2``, ...). A
    browser that has not drawn the new value yet (the user clicked again before it arrived) still
    sends the old widget's value; that widget's callback must then do nothing (:func:`current`),
    or the old value would come back as the user's choice and undo the app's.
    """
    ss = st.session_state
    keys = ss.setdefault(WIDGET_KEYS, {})
    key = keys.get(base, base)
    if key in ss and ss[key] != value:
        count = int(key.rsplit("#", 1)[1]) + 1 if key != base else 1
        key = f"{base}#{count}"
    keys[base] = key
    ss[key] = value
    return key


def current(wkey: str) -> bool:
    """Whether a widget drawn under ``wkey`` is its setting's widget now: a callback of an
    older one reports what a browser showed before the app changed the value."""
    return wkey in st.session_state.get(WIDGET_KEYS, {}).values()


def _if_current(wkey: str, on_change: Callable[..., None], args: tuple) -> None:
    if current(wkey):
        on_change(st.session_state[wkey], *args)


def keyed_widget(draw: Callable, label: str, base: str, value: Any, *, on_change: Callable[..., None],
                 args: tuple = (), **kwargs):
    """Draw a widget that shows ``value`` (set by the app) under :func:`widget_key`;
    ``on_change(new value, *args)`` runs when the user changes it, never for an older widget."""
    wkey = widget_key(base, value)
    return draw(label, key=wkey, on_change=_if_current, args=(wkey, on_change, args), **kwargs)


def _copy_back(value: Any, key: str, after: Callable[[], None] | None) -> None:
    update(**{key: value})
    if after is not None:
        after()


def bound(widget: Callable, label: str, key: str, *, after: Callable[[], None] | None = None,
          options=None, **kwargs):
    """Draw ``widget`` with its value kept in the plain key ``key`` (survives page changes).

    For widgets with ``options``, a stored value that is not an option (a column a plan or
    an earlier file named) is dropped from the widget and reported beside it.
    """
    value = get(key)
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
            st.error(f"{md_text(label)}: {md_text(', '.join(map(shown, stray)))} is not available in this data; "
                     "choose again.")
        kwargs["options"] = options
    drawn = keyed_widget(widget, label, _widget_key(key), value, on_change=_copy_back, args=(key, after), **kwargs)
    draft = refused().get(key)
    if draft is not None and draft[0] is not None:  # a value the settings model refused, kept as entered
        st.error(md_text(draft[1]))
    return drawn


def widget_for(key: str) -> tuple[Callable, dict]:
    """The widget of a setting and its choices, from its field's kind (as the command line's
    options are built from it): a checkbox for a flag, a select box of the words for a choice, a
    number box with the field's bounds for a number (a support, a δ too), a select box of the data's
    columns for a column (the page gives them), a multiselect for columns or names, else a text box."""
    kind: Kind = setting_field(SETTING_FIELDS[key]).metadata["kind"]
    if isinstance(kind, Flag):
        return st.checkbox, {}
    if isinstance(kind, OneOf):
        return st.selectbox, {"options": list(kind.words)}
    if isinstance(kind, Integer):
        bounds = {"min_value": kind.low, "max_value": kind.high}
        return st.number_input, {"step": 1, **{k: int(v) for k, v in bounds.items() if v is not None}}
    if isinstance(kind, Real):  # an open bound is the model's to refuse (its message under the box)
        bounds = {"min_value": kind.low, "max_value": kind.high}
        return st.number_input, {k: float(v) for k, v in bounds.items() if v is not None}
    if isinstance(kind, (Support, PerMetric)):  # a share or a row count; a δ (the model refuses what is not taken)
        return st.number_input, {}
    if isinstance(kind, Text):
        return st.selectbox, {}
    if isinstance(kind, (Columns, Names)):
        return st.multiselect, {}
    return st.text_input, {}


def setting(label: str, key: str, *, widget: Callable | None = None, after: Callable[[], None] | None = None,
            **kwargs):
    """Draw a setting's widget from its field's kind (:func:`widget_for`), bound to the session's
    Settings; ``kwargs`` are the page's own choices (a narrower range, a format, help), which win."""
    draw, derived = widget_for(key)
    if widget is not None and widget is not draw:  # another widget (a radio of the words): its words only
        derived = {k: v for k, v in derived.items() if k == "options"}
    return bound(widget or draw, label, key, after=after, **{**derived, **kwargs})
