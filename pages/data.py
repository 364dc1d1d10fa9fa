"""Step 1: the data (built-in, uploaded, or a local path scanned by DuckDB), a preview, and the column roles."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from divergence import DivergenceInputError, vocabulary
from divergence.data.columns import screen_summary
from divergence.present.columns import preview_frame
from divergence.present.formats import format_count, md_code, md_text
from ui import cache, compare, data, render, settings, state
from ui.state import K

render.page_setup()

st.title("Data")
st.caption("Which rows to analyse, and what each column is: target, prediction, attributes to slice by.")

# ---------------------------------------------------------------- source
sources = data.sources()  # a local path only under the data folder the server's owner set
if state.get(K.SOURCE) not in sources:
    state.update(**{K.SOURCE: "upload" if state.get(K.SOURCE) == state.LOCAL_PATH else state.BUILT_IN})
state.bound(st.radio, "Data source", K.SOURCE, options=list(sources), horizontal=True,
            format_func=sources.get, after=data.on_source)
if state.get(K.SOURCE) == state.LOCAL_PATH:
    state.bound(st.text_input, "Path of a CSV or Parquet file, a folder of them, or a glob (on the machine running "
                "the app)", K.PATH_TEXT, after=data.on_path, placeholder="evals/*.parquet",
                help=f"Under the data folder {md_code(data.data_folder())} (set by the server's owner), relative to "
                     "it or absolute. Read where it lies by DuckDB, never loaded into memory: for files larger than "
                     "an upload. Every file must have the same columns.")
    if state.get(K.PATH_ERROR):
        st.error(md_text(state.get(K.PATH_ERROR)))
        st.caption("The data and settings in use are unchanged.")
elif state.get(K.SOURCE) == "upload":
    st.file_uploader("CSV (any delimiter) or Parquet file", type=data.UPLOAD_TYPES,
                     key="w:upload",
                     on_change=data.on_upload, help="Up to 2 GB (set in .streamlit/config.toml).")
    data.follow_read()  # a worker reads the upload: its progress here, then its table
    if state.get(K.UPLOAD_ERROR):
        st.error(md_text(state.get(K.UPLOAD_ERROR)))
        st.caption("The data and settings in use are unchanged.")

df: pd.DataFrame = state.get(K.FRAME)
data_key = state.get(K.DATA_KEY)
st.markdown(data.data_caption())
for note in state.get(K.DATA_NOTES) or []:  # what the reader decided: encoding, delimiter, renamed columns
    st.info(md_text(note), icon=":material/info:")
if state.get(K.DATA_NAME) == state.BUILT_IN:  # what the demo is for: say what was planted
    st.caption(render.DEMO_STORY + " The Slices page opens each of them in one click.")

large = state.is_large()
preview, types = st.tabs(["Preview", "Column types"])
with preview:
    st.dataframe(preview_frame(df), hide_index=True, height=260)
    if state.n_rows() > 200:
        st.caption(f"The first 200 of {format_count(state.n_rows())} rows.")
with types:
    st.dataframe(cache.column_summary(data_key, df), hide_index=True, height=260)
    if large:
        st.caption(f"Counted on the first {format_count(len(df))} rows (the scan reads every row).")
if large:
    st.caption(f"A local path: DuckDB bins, measures and groups its rows where they lie. Roles and bins below are "
               f"checked on the first {format_count(len(df))} rows; the scan checks every row. "
               + data.ANALYTIC_NOTE)

# ---------------------------------------------------------------- roles
st.subheader("Column roles")
columns = list(df.columns)


def _reset_positive() -> None:
    settings.fit_metrics_to_target()
    guess = settings.positive_guess(df, state.get(K.TARGET))
    if guess is not None:  # a column with many values keeps the label: the error then says why
        state.update(**{K.POSITIVE: guess})


def _reset_threshold() -> None:
    """A threshold belongs to its score's scale: another score starts without one (asked for, or 0.5 with
    the engine's note for a score within [0, 1])."""
    state.update(**{K.THRESHOLD: None})


def _task_changed() -> None:
    task = state.get(K.TASK)
    state.update(**{K.METRICS: settings.default_metrics(task)})


state.bound(st.radio, "Task", K.TASK, options=list(vocabulary.TASK_LABELS), format_func=vocabulary.TASK_LABELS.get, horizontal=True,
            after=_task_changed)
task = state.get(K.TASK)
c1, c2, c3 = st.columns(3)
if task in ("classification", "regression"):
    with c1:
        state.setting("Target (the true value)", K.TARGET, options=columns, index=None,
                    placeholder="Choose a column", after=_reset_positive if task == "classification" else None)
    if task == "classification":
        with c2:
            state.bound(st.radio, "The model's output", K.PRED_KIND, options=list(vocabulary.OUTPUT_KINDS),
                        horizontal=True, format_func=vocabulary.OUTPUT_KINDS.get)
            if state.get(K.PRED_KIND) == "labels":
                state.setting("Prediction column", K.PREDICTION, options=columns, index=None,
                            placeholder="Choose a column")
            else:
                state.setting("Score column", K.SCORE, options=columns, index=None,
                            placeholder="Choose a column", after=_reset_threshold)
                state.setting("Threshold (score ≥ threshold predicts positive)", K.THRESHOLD, step=0.05,
                              format="%.3f", placeholder="Set the threshold")
                note = render.score_note(df, state.get(K.SCORE), state.get(K.THRESHOLD))
                if note:
                    st.caption(md_text(note))
        with c3:
            labels = cache.target_values(data_key, state.get(K.TARGET), df)
            if settings.target_classes():
                st.markdown(f"**{len(labels)} classes**: no positive label; the Outcome page measures error, "
                            "accuracy or one class against the rest.")
            elif labels is not None and len(labels) <= 50:
                state.setting("Positive label", K.POSITIVE, widget=st.selectbox, options=labels, index=None,
                            placeholder="Choose the positive class", format_func=str)
            else:
                state.setting("Positive label", K.POSITIVE)
    else:
        with c2:
            state.setting("Prediction column", K.PREDICTION, options=columns, index=None,
                        placeholder="Choose a column")
elif task == "ranking":
    with c1:
        state.bound(st.radio, "The ranking comes from", K.RANK_KIND, options=["score", "rank"], horizontal=True,
                    format_func={"score": "A score (sorted)", "rank": "A rank column (1 = best)"}.get)
    with c2:
        if state.get(K.RANK_KIND) == "rank":
            state.setting("Rank column", K.RANK, options=columns, index=None, placeholder="Choose a column")
        else:
            state.setting("Score to rank by", K.RANK_BY, options=columns, index=None,
                        placeholder="Choose a column")
            state.setting("Lower scores rank first", K.ASCENDING)
    with c3:
        state.bound(st.radio, "Quality measured", K.RANK_LEVEL, options=["row", "query"], horizontal=True,
                    format_func={"row": "Per row (gamma of the rank)", "query": "Per query (NDCG, MRR, precision)"}.get,
                    help="Per query: each query's ranking is one outcome (NDCG@k, MRR, precision@k), and a slice is a "
                         "set of queries, sliced by attributes constant within a query (device, market).")
        if state.get(K.RANK_LEVEL) == "query":
            state.setting("Query column", K.QUERY, options=columns, index=None,
                        placeholder="Choose a column")
            state.setting("Relevance column (0 = not relevant)", K.RELEVANCE, options=columns,
                        index=None, placeholder="Choose a column")
            st.caption("The metrics are chosen on the Outcome page.")
            if state.get(K.QUERY) in df.columns:
                from divergence.prepare.queries import varying_within

                chosen_now, _ = settings.attribute_choice(df)
                varying = varying_within(df, state.get(K.QUERY), chosen_now)
                if varying:
                    st.caption("A slice is a set of queries: " + ", ".join(f"`{c}`" for c in varying)
                               + (" varies" if len(varying) == 1 else " vary") + " within a query and "
                               + ("is" if len(varying) == 1 else "are") + " left out of the attributes.")
        else:
            st.caption("The rank-value function (gamma) is chosen on the Outcome page.")
else:
    with c1:
        numeric = [c for c in columns if pd.api.types.is_numeric_dtype(df[c]) or pd.api.types.is_bool_dtype(df[c])]
        state.setting("Outcome column(s): measured as they are", K.OUTCOME, options=numeric)

roles = settings.role_keywords()
missing = settings.missing_roles()
role_notes = settings.role_notes()
if role_notes:
    with st.expander("How the roles were guessed from the column names and values", expanded=bool(missing)):
        for note in role_notes:
            st.markdown(f"- {md_text(note)}")
if missing:
    st.info(f"Choose {settings.and_list(missing)} to measure the model.", icon=":material/arrow_upward:")
else:
    try:
        found = cache.check_roles(data_key, json.dumps(roles, default=str), df)
    except DivergenceInputError as exc:
        st.error(md_text(exc))
    else:
        st.caption("Measured" + (f" on the first {format_count(len(df))} rows" if large else "") + ": " + "; ".join(
            f"**{md_text(name)}** ({md_text(desc)}), defined on {format_count(n)} rows" for name, desc, n, _ in found))

compare.compare_section(df)  # a reference model to compare with (the Compare page)

# ---------------------------------------------------------------- attributes
st.subheader("Attributes to slice by")
used = settings.used_columns()
options = [c for c in columns if c not in used]
chosen, _ = settings.attribute_choice(df)


def _attributes_changed(picked: list[str]) -> None:
    state.update(**{K.ATTRIBUTES: list(picked)})


state.keyed_widget(st.multiselect, "Attributes", "w:attributes_pick", [a for a in chosen if a in options],
                   options=options, on_change=_attributes_changed, label_visibility="collapsed")
default = state.get(K.ATTRIBUTES) is None
if not chosen:
    st.error("Choose at least one attribute column to slice by.")
screen = settings.attribute_screen(df)
left = {c: reason for c, reason in screen.left_out.items() if c in options}
if default:
    st.caption(f"{len(chosen)} attributes: every column not used above, less the {len(left)} a careful analyst "
               "would not slice by (below)." if left else f"{len(chosen)} attributes: every column not used above.")
    if large:
        st.caption(f"Listed from the first {format_count(len(df))} rows; the scan decides the default attributes "
                   "on every row (identifiers and leakage are judged on all of them).")
elif st.button("Use the default choice (every column not used above, less the columns below)"):
    state.update(**{K.ATTRIBUTES: None, K.ADDED: []})
    st.rerun()
which = next((n for n in screen.notes if n.startswith("Attribute screen")), None)
if which:
    st.caption(md_text(which))  # which screen ran and why: the words of the scan's notes
if left:
    for line in screen_summary(screen):  # the measured ones first: what an analyst checks before slicing
        st.markdown(line)
    with st.expander(f"Left out of the default attributes: {len(left)} column{'s' if len(left) != 1 else ''}, "
                     "each with the reason", expanded=default):
        st.dataframe(pd.DataFrame({"column": list(left), "left out as": [screen.kinds.get(c, "") for c in left],
                                   "why": list(left.values())}),
                     hide_index=True, height=min(38 + 35 * len(left), 300),
                     column_config={"column": st.column_config.TextColumn(width="medium"),
                                    "left out as": st.column_config.TextColumn(width="small"),
                                    "why": st.column_config.TextColumn(width="large")})
        state.keyed_widget(st.multiselect, "Add back (slice by these after all)", "w:add_back",
                           [c for c in left if c in chosen], options=list(left), on_change=settings.on_add_back,
                           args=(list(left),), placeholder="Columns to slice by after all",
                           help="A date column is binned by the period you choose; an identifier or a leaking column "
                                "makes slices of one row or slices that restate the outcome; a personal identifier "
                                "puts a person's name or contact details on screen and in the report.")
dates = [c for c in chosen if screen.kinds.get(c) == "date"]
if dates:
    grid = st.columns(min(len(dates), 3))
    periods = {"auto": "automatic (the finest with at most 12 periods)", "month": "month", "quarter": "quarter",
               "year": "year"}
    for i, c in enumerate(dates):
        spec = (state.get(K.BINS) or {}).get(c)
        state.keyed_widget(grid[i % 3].selectbox, f"{md_code(c)}: dates binned by", f"w:period:{c}",
                           spec if spec in periods else "auto", options=list(periods), format_func=periods.get,
                           on_change=settings.on_period, args=(c,))

with st.expander("Binning of numeric attributes ("
                 + ("tree: up to 8 bins where the outcome changes" if state.get(K.BINNING) == "tree" else
                    f"{state.get(K.BINNING)}, {state.get(K.QUANTILE_BINS)} bins") + " unless set per column)",
                 expanded=False):
    b1, b2 = st.columns(2)
    with b1:
        state.setting("Bins per numeric column", K.QUANTILE_BINS, max_value=20)
    with b2:
        state.setting("Cut by", K.BINNING, widget=st.radio, horizontal=True,
                    format_func=vocabulary.BINNING_LABELS.get,
                    help="Tree: each continuous column is cut where the model's outcome changes (a narrow failing "
                         "band gets a bin of its own), the cut points chosen on 30% of the rows, which are then set "
                         "aside; every number of the results is measured on the other rows, so the cuts are tested "
                         "honestly. A bin count typed per column is the tree's most bins there.")
    if state.get(K.BINNING) == "tree":
        st.info("Tree binning: the cut points are chosen when the scan runs, from the outcome on a seeded 30% of the "
                "rows (at most 200,000), and those rows are then set aside: every number on the Slices page comes "
                "from the other rows. The bins below are the quantile bins shown until then; the results' notes "
                "list the cut points and the rows used for each.", icon=":material/account_tree:")
    bins = dict(state.get(K.BINS) or {})
    try:
        described, bin_notes = cache.bins_of(data_key, tuple(chosen),
                                             json.dumps({c: v for c, v in bins.items() if c in chosen}),
                                             int(state.get(K.QUANTILE_BINS)), state.get(K.BINNING), df)
    except DivergenceInputError as exc:
        st.error(md_text(exc))
        described, bin_notes = (), ()
    for note in bin_notes:  # e.g. tied quantile edges: fewer bins than asked
        st.warning(md_text(note), icon=":material/info:")
    binned = [b for b in described if b.kind not in ("categorical", "date")]  # dates: their period above
    if large:
        st.caption(f"Bins shown from the first {format_count(len(df))} rows; the scan computes its quantile "
                   "edges on every row (explicit edges are used as typed).")
    if not binned:
        st.caption("No attribute is binned: every attribute is a category (text, or few integer values).")
    grid = st.columns(3)
    errors = state.get(K.BIN_ERRORS) or {}
    for i, b in enumerate(binned):
        with grid[i % 3]:
            state.keyed_widget(st.text_input, f"{md_text(b.name)}: a bin count or edges", f"w:bins:{b.name}",
                               settings.bin_text(b.name), on_change=settings.on_bin_text, args=(b.name,),
                               placeholder=f"{state.get(K.QUANTILE_BINS)} bins, or edges: 30, 50")
            if b.name in errors:
                st.error(md_text(errors[b.name]))
            st.caption(md_text(" · ".join(b.labels)))

# ---------------------------------------------------------------- replication
st.subheader("Replication")
# a split column or a held-out share needs the rows in memory: a local path offers a second file
kinds = [k for k in vocabulary.REPLICATION_LABELS if not large or k in ("none", "file")]
state.bound(st.radio, "Confirm the slices on", K.REPLICATION, options=kinds, format_func=vocabulary.REPLICATION_LABELS.get,
            horizontal=True)
if large:
    st.caption("A local path is scanned without loading its rows, so a split column or a held-out share is not "
               "offered: confirm the slices on a second file.")
kind = state.get(K.REPLICATION)
if kind == "split":
    r1, r2 = st.columns(2)
    with r1:
        state.bound(st.selectbox, "Split or period column", K.SPLIT_COLUMN, options=columns, index=None,
                    placeholder="Choose a column")
    with r2:
        values = cache.target_values(data_key, state.get(K.SPLIT_COLUMN), df)
        if values is None:
            st.caption("Choose a column with fewer than 50 distinct values.")
        else:
            state.bound(st.multiselect, "Rows with these values confirm; the others are mined", K.SPLIT_VALUES,
                        options=values, format_func=str)
elif kind == "file":
    st.file_uploader("Second file (same columns)", type=data.UPLOAD_TYPES,
                     key="w:replicate_upload", on_change=data.on_replicate_upload)
    data.follow_read()
    if state.get(K.REPLICATE_ERROR):
        st.error(md_text(state.get(K.REPLICATE_ERROR)))
    if state.get(K.REPLICATE_FRAME) is not None:
        st.caption(f"Replication file: {md_code(state.get(K.REPLICATE_NAME))}, "
                   f"{format_count(len(state.get(K.REPLICATE_FRAME)))} rows."
                   + "".join(f" {md_text(n)}" for n in state.get(K.REPLICATE_NOTES) or []))
elif kind == "holdout":
    h1, h2 = st.columns([3, 1])
    with h1:
        state.bound(st.slider, "Share of rows held out to confirm on", K.HOLDOUT, min_value=0.1, max_value=0.5,
                    step=0.05)
    with h2:
        state.bound(st.number_input, "Seed of the held-out rows", K.HOLDOUT_SEED, min_value=0, step=1,
                    help="Which rows are held out (--holdout-seed on the command line). The statistics' seed "
                         "does not move them.")

st.page_link("pages/outcome.py", label="Next: outcome and thresholds", icon=":material/arrow_forward:")
