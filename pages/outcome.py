"""Step 2: the metric(s), the thresholds and the statistics settings; the run button."""
from __future__ import annotations

import streamlit as st

from divergence import outcome_rules, vocabulary
from divergence.present.formats import format_count, format_percent, md_code, md_text
from divergence.settings import min_count_for
from ui import data, job, render, run, settings, state
from ui.state import K

render.page_setup()

st.title("Outcome and thresholds")
st.caption(data.data_caption())
n_rows = state.n_rows()  # a local path: every row, not its preview's
unit = "rows"
_frame = state.get(K.FRAME)
if (state.get(K.TASK) == "ranking" and state.get(K.RANK_LEVEL) == "query" and _frame is not None
        and state.get(K.QUERY) in _frame.columns):
    n_rows, unit = int(state.get(K.FRAME)[state.get(K.QUERY)].nunique()), "queries"  # a slice is a set of queries
task = state.get(K.TASK)

# ---------------------------------------------------------------- metrics
st.subheader("What to measure")
if task == "classification":
    options = settings.classification_metric_options()
    settings.fit_metrics_to_target()
    if settings.target_classes():
        st.caption(f"The target has {len(settings.target_classes())} classes: error and accuracy over every class, "
                   "or one class against the rest (its recall, precision, FPR, FNR).")
    state.setting("Metrics", K.METRICS, options=options, format_func=render.metric_name)
elif task == "regression":
    state.setting("Metrics", K.METRICS, options=outcome_rules.REGRESSION_METRICS,
                format_func=render.metric_name)
elif task == "ranking" and state.get(K.RANK_LEVEL) == "query":
    chosen = list(state.get(K.QUERY_METRICS) or [])
    options = list(dict.fromkeys(["ndcg@5", "ndcg@10", "ndcg@20", "ndcg", "mrr", "precision@1", "precision@5",
                                  "precision@10"] + chosen))
    state.bound(st.multiselect, "Ranking quality per query", K.QUERY_METRICS, options=options, accept_new_options=True,
                placeholder="e.g. ndcg@10, mrr, precision@5 (type ndcg@K or precision@K for another K)",
                help="NDCG@k: DCG with gain 2^rel − 1 and discount 1/log2(1 + rank) over the ideal order's; MRR: "
                     "1/rank of the first relevant row; precision@k: relevant rows among the first min(k, n). Ties "
                     "in the score keep the rows' order; a query with no relevant row has none of these (left out).")
    if not state.get(K.QUERY_METRICS):
        st.error("Choose at least one metric.")
elif task == "ranking":
    g1, g2 = st.columns(2)
    kind, param = settings.gamma_parts(state.get(K.GAMMA))
    with g1:
        new_kind = st.radio("Value of a rank (gamma)", ["dcg", "topk", "power"], index=["dcg", "topk", "power"].index(kind),
                            format_func={"dcg": "DCG: 1/log2(1+rank)", "topk": "Top k: 1 in the first k",
                                         "power": "Power decay: rank^-a"}.get, horizontal=True, key="w:gamma_kind")
    with g2:
        if new_kind == "topk":
            new_param = st.number_input("k", min_value=1, value=int(param or 10), step=1, key="w:gamma_k")
        elif new_kind == "power":
            new_param = st.number_input("a", min_value=0.01, value=float(param or 0.5), step=0.05, key="w:gamma_a")
        else:
            new_param = None
    gamma = new_kind if new_param is None else f"{new_kind}:{new_param:g}"
    if gamma != state.get(K.GAMMA):
        state.update(**{K.GAMMA: gamma})
        st.rerun()
else:
    chosen = state.get(K.OUTCOME) or []
    st.markdown("Measured as they are: " + (", ".join(md_code(c) for c in chosen) or "no column yet (Data page)."))
if task in ("classification", "regression") and not state.get(K.METRICS):
    st.error("Choose at least one metric.")

# ---------------------------------------------------------------- thresholds
st.subheader("Thresholds")
c1, c2, c3 = st.columns(3)
with c1:
    state.bound(st.radio, "Minimum support given as", K.SUPPORT_MODE, options=["share", "rows"], horizontal=True,
                format_func={"share": "a share of rows", "rows": "a number of rows"}.get)
    if state.get(K.SUPPORT_MODE) == "share":
        state.setting("Minimum support (share of rows)", K.MIN_SUPPORT, min_value=0.0001, max_value=1.0,
                    step=0.005, format="%.4f")
        s = state.get(K.MIN_SUPPORT)
        need = min_count_for(s, n_rows)
        st.caption(f"{format_percent(s)} of {format_count(n_rows)} {unit}: slices of at least "
                   f"{format_count(need)} {unit} are mined.")
    else:
        state.bound(st.number_input, "Minimum support (rows)", K.SUPPORT_ROWS, min_value=1, step=10,
                    help="A row count: every slice of at least this many rows is mined, whatever the data's size "
                         "(as SliceLine and Slice Finder set it).")
        rows = int(state.get(K.SUPPORT_ROWS) or 1)
        st.caption(f"Slices of at least {format_count(rows)} {unit} are mined "
                   f"({format_percent(rows / max(n_rows, 1))} of {format_count(n_rows)} {unit}).")
with c2:
    state.setting("Maximum items per slice", K.MAX_LENGTH, widget=st.selectbox, options=[0, 1, 2, 3, 4, 5, 6],
                format_func=lambda k: "no limit" if k == 0 else str(k))
    state.setting("Every itemset (exhaustive, as DivExplorer lists them)", K.EXHAUSTIVE,
                help="Off (the default): each distinct set of rows is mined once, as one slice; items that add "
                     "nothing (the same rows as another item, or every row of the slice) do not multiply the "
                     "search. On: every itemset above the support, as DivExplorer lists them: the same rows may "
                     "appear under several descriptions, and a wide table takes much longer.")
with c3:
    state.setting("Redundancy threshold ε, in standard deviations σ of the metric (0: keep every "
                  "slice)", K.REDUNDANCY, max_value=1.0, step=0.01, format="%.3f",
                help="A slice whose divergence differs from one of its subsets' by less than ε·σ adds nothing: the "
                     "Slices page can hide it. In units of the metric's spread (σ = √(p(1−p)) for a rate), so one "
                     "setting hides as much for a rate, an error in euros or a ranking's gain.")

# a fixed label: an expander whose label changes is drawn anew, closed
with st.expander("Budget of a scan (most slices, seconds of mining)", expanded=False):
    st.caption(f"At most {format_count(state.get(K.MAX_SLICES))} slices and {format_count(state.get(K.MAX_WORK))} units "
               "of mining work (rows × attributes visited): both are counted, so the same data and settings give the "
               "same table on any machine, however busy. A scan that would go past them lists every slice up to the "
               "longest length that fits, and says so; if not even single items fit, it stops with what to change. "
               f"The time limit ({state.get(K.TIME_LIMIT):g} s) is a safety net: a scan it cuts depends on the "
               "machine's speed and load, and every page says so.")
    e1, e2, e3 = st.columns(3)
    with e1:
        state.setting("Most slices", K.MAX_SLICES, min_value=1000, step=100_000)
    with e2:
        state.setting("Units of mining work", K.MAX_WORK, min_value=1_000_000, step=1_000_000_000, format="%d")
    with e3:
        state.setting("Time limit (seconds, a safety net)", K.TIME_LIMIT, min_value=1.0, step=30.0, format="%g")

st.subheader("Statistics")
d1, d2, d3, d4 = st.columns(4)
with d1:
    use_default = state.get(K.DELTA) is None
    default_delta = st.checkbox("Default δ", value=use_default, key="w:default_delta",
                                help="δ is the smallest divergence worth acting on. Default: 5 points of rate; "
                                     "0.2 standard deviations of a real-valued outcome.")
    if default_delta != use_default:
        state.update(**{K.DELTA: None if default_delta else 0.05})
        run.reassess_if_kept()
        st.rerun()
    if not default_delta:
        state.setting("Smallest divergence worth acting on (δ, in the metric's units)", K.DELTA,
                    min_value=0.0001, step=0.01, format="%.4f", after=run.reassess_if_kept)
# a change of these re-assesses the kept mined table at once (ui.run.reassess_if_kept): no Run needed
with d2:
    state.setting("Confidence", K.CONFIDENCE, widget=st.selectbox, options=[0.8, 0.9, 0.95, 0.99, 0.999],
                  format_func=lambda c: f"{c:.1%}".replace(".0%", "%"), after=run.reassess_if_kept)
with d3:
    state.setting("Correction for the slices tested", K.CORRECTION, format_func=vocabulary.CORRECTION_CHOICES.get,
                  after=run.reassess_if_kept)
with d4:
    state.setting("Bootstrap replicates (0: none)", K.BOOTSTRAP, max_value=2000, step=50, disabled=state.is_large())
    if state.is_large():
        st.caption(data.ANALYTIC_NOTE)
state.bound(st.radio, "This analysis is", K.PLAN_KIND, options=["exploratory", "pre-registered"], horizontal=True,
            format_func={"exploratory": "an exploratory search",
                         "pre-registered": "a pre-registered slice plan (settings fixed before looking)"}.get)

res = state.result()
if res is not None and res["data_key"] == state.get(K.DATA_KEY):  # derived from the last scan of this data
    for sentence in render.min_size_sentences():
        st.info(md_text(sentence), icon=":material/straighten:")
if res is not None and not settings.is_stale():
    offers = render.support_offers(res["table"])
    cols = st.columns(max(len(offers), 1) + 1)
    buys = {"n_min": "every slice mined measured to within δ", "n_power": "every slice mined large enough for a "
            "δ divergence to be found among the slices tested (80% power)"}
    cols[0].markdown("**Set the minimum support from**")
    for col, (metric, size, share) in zip(cols[1:], offers):
        if col.button(f"{size} of {md_text(metric)}: {format_percent(share)}",
                      key=f"support-from-{metric}-{size}", help=buys[size]):
            state.update(**{K.MIN_SUPPORT: round(share, 6), K.SUPPORT_MODE: "share"})
            st.rerun()

# ---------------------------------------------------------------- run
st.divider()
r1, r2 = st.columns([1, 3], vertical_alignment="center")
running = job.scan_running()
with r1:
    st.button("Run the scan", type="primary", icon=":material/play_arrow:", key="run", on_click=run.start_scan,
              disabled=running, help="Cancel the running scan first." if running else None)
with r2:
    job.show_scan_status(here=True)
render.run_messages()
res = state.result()
if res is not None and not state.get(K.RUN_ERROR) and not running:
    table = res["table"]
    if settings.is_stale():
        st.warning("The settings changed since the last run: run again to see their results.")
    else:
        if res.get("cached"):
            how = "taken from the cache"
        elif res.get("reassessed"):
            how = (f"re-assessed in {res['seconds']:.1f} s (only statistics settings changed: the slices mined "
                   "before were kept, not mined again)")
        else:
            how = f"mined in {res['seconds']:.1f} s"
        st.success(f"{len(table) - 1:,} slices {how}.")
        st.page_link("pages/slices.py", label="See the slices", icon=":material/arrow_forward:")
