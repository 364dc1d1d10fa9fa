"""Step 7: the model against a reference model, slice by slice: where is it worse?"""
from __future__ import annotations

import streamlit as st

from divergence import COMPARE_VERDICTS, DivergenceInputError, vocabulary
from divergence.present.compare_views import (
    change_contribution_figure,
    change_interval_figure,
    compare_display_frame,
    compare_headline,
    compare_table_figure,
    compare_view,
    headline_change_caption,
    worst_slice,
)
from divergence.present.export import table_csv
from divergence.present.formats import (
    format_count,
    format_divergence,
    format_p,
    format_percent,
    format_value,
    md_code,
    md_text,
    verdict_label,
)
from divergence.report.plan import dump_plan
from ui import cache, compare, data, render, settings, state
from ui.state import KC, K

render.page_setup()

st.title("Compare models")
st.caption("Before shipping a model: is it worse anywhere than the one it replaces? Both models are scored on the "
           "same rows, so every slice's change is a paired comparison.")

if not settings.comparing():
    st.info("No reference model is chosen. On the Data page, under **Compare models**, turn the comparison on and "
            "choose the reference model's column (the built-in dataset comes with the previous version of its "
            "models).")
    st.page_link("pages/data.py", label="Choose the reference model", icon=":material/arrow_back:")
    st.stop()

if compare.comparison_result() is None and state.get(KC.RUN_ERROR) is None:
    compare.run_comparison()
err = state.get(KC.RUN_ERROR)
if err:
    st.error(md_text(err))
res = compare.comparison_result()
if res is not None and compare.comparison_is_stale():
    c1, c2 = st.columns([4, 1])
    c1.info("The settings changed since this comparison was computed.")
    if c2.button("Compare again", type="primary", key="compare-again"):
        compare.run_comparison()
        st.rerun()
if res is None:
    st.stop()
c = res["comparison"]
rid = res["id"]
a = c.assessment
st.caption(f"{data.data_caption()} Model {md_code(a.model)} against reference {md_code(a.reference)} on "
           f"{format_count(a.rows_compared)} rows; {format_count(len(c) - 1)} slices with support ≥ "
           f"{c.table.support_text}; {format_count(c.n_tested)} paired tests in one family (every slice × every "
           f"metric), {vocabulary.CORRECTION_CHOICES.get(a.correction, a.correction)}; "
           f"computed in {res['seconds']:.2f} s.")
for note in c.notes:
    st.caption(md_text(note))

metric = render.metric_radio(c.metric_names, KC.METRIC, after=lambda: st.session_state.update({KC.SELECTED: None}))
h = compare_headline(c, metric)
b = h["binary"]

# ---------------------------------------------------------------- headline
cols = st.columns(6)
cols[0].metric(f"Model {h['label']}", format_value(h["model"], b), help=f"{h['description']} of the model over "
               f"every compared row ({format_count(h['rows'])} where it is defined)")
cols[0].caption(f"reference {format_value(h['reference'], b)}")
cols[1].metric("Change, whole dataset", format_divergence(h["change"], b),
               help=f"model − reference; {h['worse_when']} is worse for {h['label']}")
cols[1].caption(headline_change_caption(h))
for col, verdict, text in zip(cols[2:], ("worse", "better", "no change", "too small"),
                              ("significantly worse than the reference", "significantly better",
                               "interval within ±δ", f"below n_min = {format_count(h['min_size'].n_min)} rows")):
    col.metric(f"Slices {verdict}", format_count(h["verdicts"][verdict]), help=text)
    n_f = (h.get("findings") or {}).get(verdict)
    col.caption(text if n_f is None else f"{format_count(n_f)} distinct finding{'s' if n_f != 1 else ''}; {text}")
with st.expander("How the verdicts and the minimum size are decided"):
    st.markdown(
        f"**Test.** {a.test[metric]}; **interval**: {a.interval[metric]}. **worse / better**: significant "
        f"after correction (q ≤ {1 - a.confidence:.2g}) and the {a.confidence:.0%} interval of the change "
        "excludes 0, in the metric's bad or good direction, at any size (below the minimum size it is marked "
        "indicative); **no change**: the interval lies within ±δ; **too small**: neither, and below the "
        "minimum size; **noise**: neither, with at least n_min rows (no finding).")
    st.markdown(f"**Minimum size.** {md_text(h['min_size'].text)}")
    if h["min_size"].power_text:
        st.markdown(f"**Power.** {md_text(h['min_size'].power_text)}")

# ---------------------------------------------------------------- the worst slice
worst = worst_slice(c, metric)
if len(worst):
    r = worst.iloc[0]
    st.error(f"**Worse than the reference:** {md_code(r['itemset'])}: {h['label']} {format_value(r[metric], b)} against "
             f"{format_value(r[metric + '_reference'], b)} for the reference on the same "
             f"{format_count(c.details[metric + '_count'][worst.index[0]])} rows "
             f"({format_divergence(r[metric + '_change'], b)}, q = {format_p(r[metric + '_change_q'])}); "
             f"{format_count(h['verdicts']['worse'])} slices are worse"
             + ((", 1 of them a distinct finding (the others are explained by it: worse only because they hold "
                 "its rows, or neither)" if h["findings"]["worse"] == 1 else
                 f", {format_count(h['findings']['worse'])} of them distinct findings (the others are explained by "
                 "them: worse only because they hold a finding's rows, or neither)") if h.get("findings") else "")
             + ".", icon=":material/warning:")
elif h["verdict"] == "worse":
    st.error(f"**The model is worse than the reference over the whole dataset** "
             f"({format_divergence(h['change'], b)}), though no single slice is.", icon=":material/warning:")
else:
    st.success(f"No slice is significantly worse than the reference in {h['label']} "
               f"({format_count(h['verdicts']['too small'])} slices are too small to tell).", icon=":material/check:")

# ---------------------------------------------------------------- table
present = [v for v in COMPARE_VERDICTS if h["verdicts"][v] or v == "worse"]
if state.get(KC.VERDICTS) and not set(state.get(KC.VERDICTS)) <= set(present):
    state.update(**{KC.VERDICTS: [v for v in state.get(KC.VERDICTS) if v in present]})
f1, f2, _ = st.columns([3, 1.2, 3])
with f1:
    state.bound(st.multiselect, "Verdicts", KC.VERDICTS, options=present, placeholder="all verdicts")
with f2:
    state.bound(st.selectbox, "Show", KC.TOP_N, options=[10, 25, 50, 100, 250, 500], format_func=lambda n: f"top {n}")
chosen = state.get(KC.VERDICTS) or None
rows = compare_view(c, metric, verdicts=chosen, top_n=int(state.get(KC.TOP_N)))
matching = len(compare_view(c, metric, verdicts=chosen, top_n=None))
st.caption(f"Showing {format_count(len(rows))} of {format_count(matching)} matching slices in the default order: the "
           "distinct findings first, then the other significant slices, then the rest, each at least the minimum size "
           "first, "
           f"the change in the bad direction first ({'up' if h['worse_when'] == 'up' else 'down'} for {h['label']}).")
if not len(rows):
    st.warning("No slice matches these filters.")
    st.stop()
shown = compare_display_frame(c, rows, metric)
st.plotly_chart(compare_table_figure(shown, height=min(90 + 27 * len(shown), 560)), key="compare_table",
                config={"displayModeBar": False})

# ---------------------------------------------------------------- intervals of the change
st.subheader("The change against zero")
drawn = rows.head(50)
try:
    fig = change_interval_figure(c, drawn, metric)
except DivergenceInputError as exc:
    st.info(md_text(exc))
else:
    st.caption(f"The top {format_count(len(drawn))} slices of the table: each change with its "
               f"{a.confidence:.0%} interval. An interval clear of 0 (and of the shaded ±δ band) is a change "
               "worth acting on; open dots are below the minimum size. Click a slice to open it below.")
    event = st.plotly_chart(render.themed(fig), key="change_intervals", on_select="rerun", selection_mode="points",
                            config={"displayModeBar": False})
    index = render.clicked_point(event)
    clicked = None if index is None else str(c.table.itemsets[int(index)])
    # a click opens its slice once: the chart keeps its selection, the slice box may change after it
    if clicked != st.session_state.get("compare_clicked"):
        st.session_state["compare_clicked"] = clicked
        if clicked:
            state.update(**{KC.SELECTED: clicked})

# ---------------------------------------------------------------- one slice
st.subheader("What drives a slice's change")
itemsets = [s for s in rows["itemset"].tolist() if s]
selected = state.get(KC.SELECTED)
if selected not in itemsets:
    if selected:
        itemsets = [selected] + itemsets
    elif itemsets:  # the slice the warning names, else the first row
        named = [s for s in worst["itemset"] if s in itemsets] if len(worst) else []
        state.update(**{KC.SELECTED: (named or itemsets)[0]})
if itemsets:
    state.bound(st.selectbox, "Open a slice (the worst slice named above unless you choose)", KC.SELECTED,
                options=itemsets)
    selected = state.get(KC.SELECTED)
    try:
        idx = c.lookup(selected)
    except DivergenceInputError as exc:
        st.error(md_text(exc))
        st.stop()
    row = c.frame.iloc[idx]
    d = st.columns(5)
    d[0].metric("Slice rows", format_count(row["count"]))
    d[0].caption(f"support {format_percent(row['support'])}; {format_count(c.details[metric + '_count'][idx])} "
                 f"where {h['label']} is defined")
    d[1].metric(f"Model {h['label']} here", format_value(row[metric], b))
    d[1].caption(f"reference {format_value(row[metric + '_reference'], b)}")
    d[2].metric("Change here", format_divergence(row[metric + "_change"], b))
    d[2].caption(f"[{format_divergence(row[metric + '_change_ci_low'], b)}, "
                 f"{format_divergence(row[metric + '_change_ci_high'], b)}]")
    d[3].metric("q", format_p(row[metric + "_change_q"]))
    d[3].caption(f"p = {format_p(row[metric + '_change_p'])}; {format_count(c.n_tested)} tests")
    d[4].metric("Verdict", verdict_label(row[metric + "_verdict"], None, None, row[metric + "_meets_min_size"]))
    d[4].caption(("meets" if row[metric + "_meets_min_size"] else "below") +
                 f" n_min = {format_count(h['min_size'].n_min)}")
    contrib = cache.change_contributions(rid, selected, metric, c)
    st.plotly_chart(render.themed(change_contribution_figure(contrib, binary=b)), key="change_contributions")
    st.caption("Shapley contributions: how much each item moves the slice's change away from the whole dataset's "
               "change; they sum to the difference. The largest bar is the item that drives the regression.")

# ---------------------------------------------------------------- export
st.subheader("Export")
e1, e2 = st.columns(2)
e1.download_button(f"The comparison ({format_count(len(c))} rows, CSV)",
                   table_csv(c.frame, neutralise_formulas=bool(state.get(K.CSV_SAFE))), file_name="comparison.csv",
                   mime="text/csv", icon=":material/table:", on_click="ignore")
e1.caption("The columns of `python -m divergence compare`: the whole dataset first, every slice after it.")
scan_res = state.result()
try:
    plan_text = dump_plan(settings.current_plan(), stamp=True)
except DivergenceInputError:
    plan_text = None
if scan_res is not None and plan_text is not None and not settings.is_stale():
    label = data.data_label()
    e2.download_button("Pre-release report (HTML, works offline)",
                       lambda: cache.comparison_report_html(rid, scan_res["id"], plan_text, label, c,
                                                            scan_res["table"]),
                       file_name="prerelease_report.html", mime="text/html",
                       icon=":material/summarize:", on_click="ignore")
    e2.caption("The slice report with this comparison first. Save the settings as a slice plan (Export page; it "
               "carries the reference model) and `python -m divergence report PLAN DATA --fail-on-worse` re-runs "
               "it every cycle as a standing check.")
else:
    e2.caption("The pre-release report needs the scan of the current settings: run it on the Outcome page.")
