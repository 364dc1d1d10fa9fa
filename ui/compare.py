"""Comparing two models on the dashboard (``divergence.compare``: the model in the roles against a
reference model on the same rows): the Data page's choice of the reference, the comparison's run
and its result. Its settings and keywords are in ``ui.settings``.
"""
from __future__ import annotations

import hashlib
import time

import pandas as pd
import streamlit as st

from divergence import DivergenceInputError, vocabulary
from divergence.present.formats import format_count, md_code, md_text
from ui import cache, data, settings, state
from ui.state import KC, K


def compare_section(df: pd.DataFrame) -> None:
    """The Data page's choice of a reference model to compare with (drawn under the roles)."""
    st.subheader("Compare models")
    if state.is_large():
        st.caption("Comparing two models needs the rows in memory: not offered for a local path scanned by DuckDB.")
        return
    task = state.get(K.TASK)
    if task not in ("classification", "regression"):
        st.caption("A comparison needs a classifier or a regressor (choose the task above).")
        return
    state.bound(st.toggle, "Compare the model with a reference model (e.g. the one in production) on the same rows",
                KC.ON, after=data.on_compare_toggle)
    if not state.get(KC.ON):
        st.caption("Where is the model worse than the one it replaces? Each slice's change is tested as a paired "
                   "comparison: both models are scored on the same rows.")
        models = settings.other_models(df)
        if models:
            listed = ", ".join(f"`{c}` ({kind})" for c, kind in models.items())
            st.caption(f"Another model's outputs in this table, left out of the attributes: {listed}. Turn the "
                       "comparison on to compare the model with it.")
        return
    columns = list(df.columns)
    taken = {state.get(K.TARGET), state.get(K.PREDICTION), state.get(K.SCORE)}
    models = settings.other_models(df)
    # another model's outputs first: the likeliest references
    candidates = [c for c in models if c not in taken] + [c for c in columns if c not in taken and c not in models]
    c1, c2 = st.columns(2)
    if task == "classification":
        with c1:
            state.bound(st.radio, "The reference's output", KC.REF_KIND, options=list(vocabulary.OUTPUT_KINDS),
                        horizontal=True, format_func=vocabulary.OUTPUT_KINDS.get)
        with c2:
            if state.get(KC.REF_KIND) == "score":
                state.bound(st.selectbox, "Reference score column", KC.REF_SCORE, options=candidates, index=None,
                            placeholder="Choose a column")
                state.bound(st.number_input, "Reference threshold (score ≥ threshold predicts positive)",
                            KC.REF_THRESHOLD, step=0.05, format="%.3f")
            else:
                state.bound(st.selectbox, "Reference prediction column", KC.REFERENCE, options=candidates,
                            index=None, placeholder="Choose a column")
    else:
        with c1:
            state.bound(st.selectbox, "Reference prediction column", KC.REFERENCE, options=candidates, index=None,
                        placeholder="Choose a column")
    try:
        compare = settings.compare_settings()
        checked = cache.check_comparison(state.get(K.DATA_KEY), settings.compare_key(compare), compare, df)
    except DivergenceInputError as exc:
        st.error(md_text(exc))
        return
    st.caption(f"Compared on the Compare page: {', '.join(checked['metrics'])}, model {md_code(checked['model'])} "
               f"against reference {md_code(checked['reference'])} on {format_count(checked['rows_compared'])} rows"
               + (f" ({format_count(checked['rows_left_out'])} left out: a prediction or the target is missing)"
                  if checked["rows_left_out"] else "") + ".")
    st.page_link("pages/compare.py", label="Compare the models", icon=":material/compare_arrows:")


def run_comparison() -> None:
    """Compare the models with the current settings, with a progress bar; store the result
    (a DivergenceInputError is kept for the page to show; the previous result stays)."""
    ss = st.session_state
    bar = st.progress(0, text="Checking the settings…")
    t0 = time.perf_counter()
    try:
        compare = settings.compare_settings()
        key = settings.compare_key(compare)
        support = compare.mining.min_support
        bar.progress(10, text=f"Mining every slice with support ≥ {support:g}{' rows' if support > 1 else ''} with both "
                              "models' tallies, then testing each slice's change…")
        c = cache.compare_cached(state.get(K.DATA_KEY), key, compare, state.get(K.FRAME))
        bar.progress(100, text="Done.")
    except DivergenceInputError as exc:
        bar.empty()
        ss[KC.RUN_ERROR] = str(exc)
        return
    bar.empty()
    ss[KC.RUN_ERROR] = None
    ss[KC.RESULT] = dict(comparison=c, key=key, data_key=state.get(K.DATA_KEY), seconds=time.perf_counter() - t0,
                         id=hashlib.blake2b((state.get(K.DATA_KEY) + key).encode(), digest_size=8).hexdigest())
    if state.get(KC.METRIC) not in c.metric_names:
        ss[KC.METRIC] = c.metric_names[0]
    if state.get(KC.SELECTED) is not None:
        try:
            c.lookup(state.get(KC.SELECTED))
        except DivergenceInputError:
            ss[KC.SELECTED] = None


def comparison_result() -> dict | None:
    """The stored comparison, or None."""
    return st.session_state.get(KC.RESULT)


def comparison_is_stale() -> bool:
    """Whether the settings or the data changed since the stored comparison was computed."""
    res = comparison_result()
    if res is None:
        return True
    try:
        return res["key"] != settings.compare_key() or res["data_key"] != state.get(K.DATA_KEY)
    except DivergenceInputError:
        return True
