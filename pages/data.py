"""Step 1: the data (built-in, uploaded, or a local path scanned by DuckDB), a preview, and the column roles."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

import ui_support as ui
from divergence import DivergenceInputError
from divergence.views import format_count
from ui_support import K

ui.page_setup()

st.title("Data")
st.caption("Which rows to analyse, and what each column is: target, prediction, attributes to slice by.")

# ---------------------------------------------------------------- source
ui.bound(st.radio, "Data source", K.SOURCE, options=list(ui.SOURCES), horizontal=True, format_func=ui.SOURCES.get,
         after=ui.on_source)
if ui.state(K.SOURCE) == ui.LOCAL_PATH:
    ui.bound(st.text_input, "Path of a CSV or Parquet file, a folder of them, or a glob (on the machine running "
             "the app)", K.PATH_TEXT, after=ui.on_path, placeholder="/data/evals/*.parquet",
             help="Read where it lies by DuckDB, never loaded into memory: for files larger than an upload. "
                  "Every file must have the same columns.")
    if ui.state(K.PATH_ERROR):
        st.error(ui.state(K.PATH_ERROR))
        st.caption("The data and settings in use are unchanged.")
elif ui.state(K.SOURCE) == "upload":
    st.file_uploader("CSV (any delimiter) or Parquet file", type=["csv", "tsv", "txt", "parquet", "pq", "parq"],
                     key="w:upload",
                     on_change=ui.on_upload, help="Up to 2 GB (set in .streamlit/config.toml).")
    if ui.state(K.UPLOAD_ERROR):
        st.error(ui.state(K.UPLOAD_ERROR))
        st.caption("The data and settings in use are unchanged.")

df: pd.DataFrame = ui.state(K.FRAME)
data_key = ui.state(K.DATA_KEY)
st.markdown(ui.data_caption())
for note in ui.state(K.DATA_NOTES) or []:  # what the reader decided: encoding, delimiter, renamed columns
    st.info(note, icon=":material/info:")
if ui.state(K.DATA_NAME) == ui.BUILT_IN:  # what the demo is for: say what was planted
    st.caption(ui.DEMO_STORY + " The Slices page opens each of them in one click.")

large = ui.is_large()
preview, types = st.tabs(["Preview", "Column types"])
with preview:
    st.dataframe(df.head(200), hide_index=True, height=260)
    if ui.n_rows() > 200:
        st.caption(f"The first 200 of {format_count(ui.n_rows())} rows.")
with types:
    st.dataframe(ui.column_summary(data_key, df), hide_index=True, height=260)
    if large:
        st.caption(f"Counted on the first {format_count(len(df))} rows (the scan reads every row).")
if large:
    st.caption(f"A local path: DuckDB bins, measures and groups its rows where they lie. Roles and bins below are "
               f"checked on the first {format_count(len(df))} rows; the scan checks every row. "
               + ui.ANALYTIC_NOTE)

# ---------------------------------------------------------------- roles
st.subheader("Column roles")
columns = list(df.columns)


def _reset_positive() -> None:
    guess = ui.positive_guess(df, ui.state(K.TARGET))
    if guess is not None:  # a column with many values keeps the label: the error then says why
        ui.set_settings(**{K.POSITIVE: guess})


def _task_changed() -> None:
    task = ui.state(K.TASK)
    ui.set_settings(**{K.METRICS: {"classification": ["fpr", "fnr"], "regression": ["abs_error"]}.get(task, [])})


ui.bound(st.radio, "Task", K.TASK, options=list(ui.TASKS), format_func=ui.TASKS.get, horizontal=True,
         after=_task_changed)
task = ui.state(K.TASK)
c1, c2, c3 = st.columns(3)
if task in ("classification", "regression"):
    with c1:
        ui.bound(st.selectbox, "Target (the true value)", K.TARGET, options=columns, index=None,
                 placeholder="Choose a column", after=_reset_positive if task == "classification" else None)
    if task == "classification":
        with c2:
            ui.bound(st.radio, "The model's output", K.PRED_KIND, options=["labels", "score"], horizontal=True,
                     format_func={"labels": "Predicted labels", "score": "A score and a threshold"}.get)
            if ui.state(K.PRED_KIND) == "labels":
                ui.bound(st.selectbox, "Prediction column", K.PREDICTION, options=columns, index=None,
                         placeholder="Choose a column")
            else:
                ui.bound(st.selectbox, "Score column", K.SCORE, options=columns, index=None,
                         placeholder="Choose a column")
                ui.bound(st.number_input, "Threshold (score ≥ threshold predicts positive)", K.THRESHOLD,
                         step=0.05, format="%.3f", placeholder="Set the threshold")
                note = ui.score_note(df, ui.state(K.SCORE), ui.state(K.THRESHOLD))
                if note:
                    st.caption(note)
        with c3:
            labels = ui.target_values(data_key, ui.state(K.TARGET), df)
            if labels is not None and len(labels) <= 50:
                ui.bound(st.selectbox, "Positive label", K.POSITIVE, options=labels, index=None,
                         placeholder="Choose the positive class", format_func=str)
            else:
                ui.bound(st.text_input, "Positive label", K.POSITIVE)
    else:
        with c2:
            ui.bound(st.selectbox, "Prediction column", K.PREDICTION, options=columns, index=None,
                     placeholder="Choose a column")
elif task == "ranking":
    with c1:
        ui.bound(st.radio, "The ranking comes from", K.RANK_KIND, options=["score", "rank"], horizontal=True,
                 format_func={"score": "A score (sorted)", "rank": "A rank column (1 = best)"}.get)
    with c2:
        if ui.state(K.RANK_KIND) == "rank":
            ui.bound(st.selectbox, "Rank column", K.RANK, options=columns, index=None, placeholder="Choose a column")
        else:
            ui.bound(st.selectbox, "Score to rank by", K.RANK_BY, options=columns, index=None,
                     placeholder="Choose a column")
            ui.bound(st.checkbox, "Lower scores rank first", K.ASCENDING)
    with c3:
        st.caption("The rank-value function (gamma) is chosen on the Outcome page.")
else:
    with c1:
        numeric = [c for c in columns if pd.api.types.is_numeric_dtype(df[c]) or pd.api.types.is_bool_dtype(df[c])]
        ui.bound(st.multiselect, "Outcome column(s): measured as they are", K.OUTCOME, options=numeric)

roles = ui.role_kwargs()
missing = ui.missing_roles()
role_notes = ui.role_notes()
if role_notes:
    with st.expander("How the roles were guessed from the column names and values", expanded=bool(missing)):
        for note in role_notes:
            st.markdown(f"- {note}")
if missing:
    st.info(f"Choose {ui.and_list(missing)} to measure the model.", icon=":material/arrow_upward:")
else:
    try:
        found = ui.check_roles(data_key, json.dumps(roles, default=str), df)
    except DivergenceInputError as exc:
        st.error(str(exc))
    else:
        st.caption("Measured" + (f" on the first {format_count(len(df))} rows" if large else "") + ": " + "; ".join(
            f"**{name}** ({desc}), defined on {format_count(n)} rows" for name, desc, n, _ in found))

ui.compare_section(df)  # a reference model to compare with (the Compare page)

# ---------------------------------------------------------------- attributes
st.subheader("Attributes to slice by")
used = ui.used_columns()
options = [c for c in columns if c not in used]
chosen, _ = ui.attribute_choice(df)


def _attributes_changed() -> None:
    ui.set_settings(**{K.ATTRIBUTES: list(st.session_state["w:attributes_pick"])})


st.session_state["w:attributes_pick"] = [a for a in chosen if a in options]
st.multiselect("Attributes", options, key="w:attributes_pick", on_change=_attributes_changed,
               label_visibility="collapsed")
default = ui.state(K.ATTRIBUTES) is None
if not chosen:
    st.error("Choose at least one attribute column to slice by.")
screen = ui.attribute_screen(df)
left = {c: reason for c, reason in screen.left_out.items() if c in options}
if default:
    st.caption(f"{len(chosen)} attributes: every column not used above, less the {len(left)} a careful analyst "
               "would not slice by (below)." if left else f"{len(chosen)} attributes: every column not used above.")
    if large:
        st.caption(f"Listed from the first {format_count(len(df))} rows; the scan decides the default attributes "
                   "on every row (identifiers and leakage are judged on all of them).")
elif st.button("Use the default choice (every column not used above, less the columns below)"):
    ui.set_settings(**{K.ATTRIBUTES: None, K.ADDED: []})
    st.rerun()
if left:
    with st.expander(f"Left out of the default attributes: {len(left)} column{'s' if len(left) != 1 else ''}, "
                     "each with the reason", expanded=default):
        st.dataframe(pd.DataFrame({"column": list(left), "left out as": [screen.kinds.get(c, "") for c in left],
                                   "why": list(left.values())}),
                     hide_index=True, height=min(38 + 35 * len(left), 300),
                     column_config={"column": st.column_config.TextColumn(width="medium"),
                                    "left out as": st.column_config.TextColumn(width="small"),
                                    "why": st.column_config.TextColumn(width="large")})
        st.session_state["w:add_back"] = [c for c in left if c in chosen]
        st.multiselect("Add back (slice by these after all)", list(left), key="w:add_back", on_change=ui.on_add_back,
                       args=(list(left),), placeholder="Columns to slice by after all",
                       help="A date column is binned by the period you choose; an identifier or a leaking column "
                            "makes slices of one row or slices that restate the outcome.")
dates = [c for c in chosen if screen.kinds.get(c) == "date"]
if dates:
    grid = st.columns(min(len(dates), 3))
    periods = {"auto": "automatic (the finest with at most 12 periods)", "month": "month", "quarter": "quarter",
               "year": "year"}
    for i, c in enumerate(dates):
        spec = (ui.state(K.BINS) or {}).get(c)
        st.session_state[f"w:period:{c}"] = spec if spec in periods else "auto"
        grid[i % 3].selectbox(f"`{c}`: dates binned by", list(periods), format_func=periods.get,
                              key=f"w:period:{c}", on_change=ui.on_period, args=(c,))

with st.expander(f"Binning of numeric attributes ({ui.state(K.BINNING)}, {ui.state(K.QUANTILE_BINS)} bins unless "
                 "set per column)", expanded=False):
    b1, b2 = st.columns(2)
    with b1:
        ui.bound(st.number_input, "Bins per numeric column", K.QUANTILE_BINS, min_value=1, max_value=20, step=1)
    with b2:
        ui.bound(st.radio, "Cut by", K.BINNING, options=["quantile", "uniform"], horizontal=True,
                 format_func={"quantile": "Quantiles (equal rows)", "uniform": "Equal width"}.get)
    bins = dict(ui.state(K.BINS) or {})
    try:
        described = ui.bins_of(data_key, tuple(chosen), json.dumps({c: v for c, v in bins.items() if c in chosen}),
                               int(ui.state(K.QUANTILE_BINS)), ui.state(K.BINNING), df)
    except DivergenceInputError as exc:
        st.error(str(exc))
        described = ()
    binned = [b for b in described if b.kind not in ("categorical", "date")]  # dates: their period above
    if large:
        st.caption(f"Bins shown from the first {format_count(len(df))} rows; the scan computes its quantile "
                   "edges on every row (explicit edges are used as typed).")
    if not binned:
        st.caption("No attribute is binned: every attribute is a category (text, or few integer values).")
    grid = st.columns(3)
    errors = ui.state(K.BIN_ERRORS) or {}
    for i, b in enumerate(binned):
        with grid[i % 3]:
            st.session_state[f"w:bins:{b.name}"] = ui.bin_text(b.name)
            st.text_input(f"{b.name}: a bin count or edges", key=f"w:bins:{b.name}", on_change=ui.on_bin_text,
                          args=(b.name,), placeholder=f"{ui.state(K.QUANTILE_BINS)} bins, or edges: 30, 50")
            if b.name in errors:
                st.error(errors[b.name])
            st.caption(" · ".join(b.labels))

# ---------------------------------------------------------------- replication
st.subheader("Replication")
# a split column or a held-out share needs the rows in memory: a local path offers a second file
kinds = [k for k in ui.REPLICATION_KINDS if not large or k in ("none", "file")]
ui.bound(st.radio, "Confirm the slices on", K.REPLICATION, options=kinds, format_func=ui.REPLICATION_KINDS.get,
         horizontal=True)
if large:
    st.caption("A local path is scanned without loading its rows, so a split column or a held-out share is not "
               "offered: confirm the slices on a second file.")
kind = ui.state(K.REPLICATION)
if kind == "split":
    r1, r2 = st.columns(2)
    with r1:
        ui.bound(st.selectbox, "Split or period column", K.SPLIT_COLUMN, options=columns, index=None,
                 placeholder="Choose a column")
    with r2:
        values = ui.target_values(data_key, ui.state(K.SPLIT_COLUMN), df)
        if values is None:
            st.caption("Choose a column with fewer than 50 distinct values.")
        else:
            ui.bound(st.multiselect, "Rows with these values confirm; the others are mined", K.SPLIT_VALUES,
                     options=values, format_func=str)
elif kind == "file":
    st.file_uploader("Second file (same columns)", type=["csv", "tsv", "txt", "parquet", "pq", "parq"],
                     key="w:replicate_upload", on_change=ui.on_replicate_upload)
    if ui.state(K.REPLICATE_ERROR):
        st.error(ui.state(K.REPLICATE_ERROR))
    if ui.state(K.REPLICATE_FRAME) is not None:
        st.caption(f"Replication file: `{ui.state(K.REPLICATE_NAME)}`, "
                   f"{format_count(len(ui.state(K.REPLICATE_FRAME)))} rows."
                   + "".join(f" {n}" for n in ui.state(K.REPLICATE_NOTES) or []))
elif kind == "holdout":
    ui.bound(st.slider, "Share of rows held out to confirm on", K.HOLDOUT, min_value=0.1, max_value=0.5, step=0.05)

st.page_link("pages/outcome.py", label="Next: outcome and thresholds", icon=":material/arrow_forward:")
