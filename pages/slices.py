"""Step 3: the headline, the findings in plain words, the slice table (click a header to sort,
a row to open) and the open slice, which can be edited item by item."""
from __future__ import annotations

from html import escape

import streamlit as st

from divergence import VERDICTS, DivergenceInputError
from divergence.formats import (CORRECTION_NAMES, GLOSSARY, VERDICT_TEXT, format_count,
                                format_divergence, format_interval, format_number, format_p, format_percent,
                                format_threshold, format_value, verdict_ink)
from divergence.views import headline, redundancy_epsilon, sort_options, verdict_evidence
from ui import cache, render, state
from ui.state import K

render.page_setup()

st.title("Slices")
table, rid = render.result_or_stop("slices")
res = state.result()
st.caption(render.result_caption(table, res))
render.demo_strip()

metric = render.metric_choice(table)
info = table.metric(metric)
b = info.binary
render.read_table_click(table, metric)  # a click on the table's previous run: sort, or open a slice

# ---------------------------------------------------------------- headline
h = headline(table, metric)
n_min = h["min_size"]["n_min"] if h["min_size"] else None
correction = CORRECTION_NAMES.get(table.assessment["correction"], "")
cols = st.columns(6)
cols[0].metric(f"{h['label']}, whole dataset", format_value(h["overall"], b),
               help=f"{h['description']} over every row, with its interval")
cols[0].caption(format_interval(h["overall_low"], h["overall_high"], b))
cols[1].metric("Slices tested", format_count(h["n_tested"]), help="Slices with a p-value: the count the correction uses.")
cols[2].metric("Significant", format_count(h["n_significant"]),
               help=f"{GLOSSARY['q']} Here: {correction}, q ≤ {1 - table.assessment['confidence']:.2g}.")
cols[2].caption("after correction")
if info.baseline:
    tiles = [("Defects", "defect"), ("Hard cohorts", "hard cohort")]
else:
    tiles = [("Above", "above"), ("Below", "below")]
for col, (label, verdict) in zip(cols[3:5], tiles):
    col.metric(label, format_count(h["verdicts"].get(verdict, 0)), help=VERDICT_TEXT[verdict])
    col.caption("the model fails here" if verdict == "defect" else "harder to predict" if verdict == "hard cohort"
                else "the whole dataset")
cols[5].metric("Too small", format_count(h["verdicts"].get("too small", 0)),
               help=h["min_size"]["text"] if h["min_size"] else None)
cols[5].caption(f"below n_min = {format_count(n_min)} rows" if n_min else "")

# ---------------------------------------------------------------- findings in plain words
cards, n_findings = cache.card_findings(rid, metric, table)
if cards:
    st.markdown(f"**Findings** · the {len(cards)} with the strongest evidence, each a different cohort"
                + (f" ({format_count(n_findings)} slices are findings in all; the others refine or overlap these: "
                   "Intervals page)" if n_findings > len(cards) else ""))
    for col, card in zip(st.columns(len(cards)), cards):
        with col.container(border=True):
            st.markdown(f"<span style='background:{card.color};color:{verdict_ink(card.verdict)};border-radius:.6em;padding:0 .5em;"
                        f"font-size:.8em;font-weight:600'>{card.verdict}</span> `{card.itemset}`",
                        unsafe_allow_html=True)
            st.markdown(f"<div style='font-size:.88em;line-height:1.4'><b>Who:</b> {escape(card.who)}.<br><b>What:</b> "
                        f"{escape(card.what)}.<br><b>How sure:</b> {escape(card.sure)}.<br><b>What to do:</b> "
                        f"{escape(card.todo)}</div>", unsafe_allow_html=True)
            st.button("Open this slice", key=f"card-{card.index}", on_click=render.type_slice,
                      args=(render.items_of(table, card.itemset),))
else:
    st.info(f"No finding for {h['label']}: no slice survives the correction for the {format_count(h['n_tested'])} "
            "slices tested and the minimum size.")

# ---------------------------------------------------------------- sort and filters
options = sort_options(table, metric)
present = [v for v in VERDICTS if v in h["verdicts"]]
if state.get(K.F_VERDICTS) and not set(state.get(K.F_VERDICTS)) <= set(present):
    state.update(**{K.F_VERDICTS: [v for v in state.get(K.F_VERDICTS) if v in present]})
if state.get(K.F_ATTRIBUTES) and not set(state.get(K.F_ATTRIBUTES)) <= set(table.attributes):
    # a filter on columns another result had (a new data set): it no longer applies
    state.update(**{K.F_ATTRIBUTES: [a for a in state.get(K.F_ATTRIBUTES) if a in table.attributes]})
if state.get(K.SORT_BY) not in options:
    state.update(**{K.SORT_BY: next(iter(options))})
longest = int(table.lengths.max()) if len(table) > 1 else 1
eps = float(state.get(K.REDUNDANCY))


def _sort_changed() -> None:
    col = options.get(state.get(K.SORT_BY))
    state.update(**{K.SORT_ASC: bool(col and col.endswith(("_p", "_q")))})


c1, c2, c3, c4, c5, c6 = st.columns([2, 1.6, 2.6, 1.7, 2, 1.2])
with c1:
    state.bound(st.selectbox, "Sort by", K.SORT_BY, options=list(options), after=_sort_changed,
                help="Or click a column's header in the table (again: the other way).")
with c2:
    state.bound(st.selectbox, "Order", K.SORT_ASC, options=[False, True],
                format_func=lambda a: "smallest first" if a else "largest first")
with c3:
    state.bound(st.multiselect, "Verdicts", K.F_VERDICTS, options=present, placeholder="all verdicts")
with c4:
    state.bound(st.selectbox, "Minimum size", K.F_MIN_SIZE, options=["all", "meets", "below"],
                format_func={"all": "all slices", "meets": "meets it", "below": "below it"}.get,
                help=GLOSSARY["n_min"])
with c5:
    state.bound(st.multiselect, "Involving", K.F_ATTRIBUTES, options=list(table.attributes),
                placeholder="any attribute")
with c6:
    state.bound(st.selectbox, "Show", K.TOP_N, options=[10, 25, 50, 100, 250, 500],
                format_func=lambda n: f"top {n}")
e1, e2, _ = st.columns([3, 3.4, 1.6])
with e1:
    if longest > 1:
        render.length_slider(longest)
with e2:
    if eps > 0:
        st.write("")
        scaled = redundancy_epsilon(table, metric, eps)
        state.bound(st.checkbox, f"Hide redundant slices (a subset's divergence within ε = {eps:g}σ = "
                                 f"{format_divergence(scaled, b).lstrip('+')})", K.F_PRUNE, help=GLOSSARY["ε"])

try:
    view = render.current_view(table, rid)
except DivergenceInputError as exc:
    st.error(str(exc))
    st.stop()

# ---------------------------------------------------------------- the table and its legend
label_of = {v: k for k, v in options.items()}
order = "smallest first" if view.ascending else "largest first"
st.caption(f"Showing {format_count(len(view.rows))} of {format_count(view.n_matching)} matching slices "
           f"({format_count(view.n_slices)} mined), sorted by {label_of.get(view.sort_by, view.sort_by)}, {order}. "
           "Click a header to sort by it, a row to open its slice; hover a header for its meaning.")
res_rows = render.mined_rows(res)
catalog = cache.item_options(rid + f"|{res_rows is not None}", table, res_rows)
known = set(catalog["item"])
items, source = render.open_slice(table, view, metric, known=known)
try:
    open_itemset = str(table.itemsets[table.lookup(items)]) if items else None
except DivergenceInputError:
    open_itemset = None  # a typed slice that was not mined: no row of the table
if len(view.rows):
    render.slice_grid(table, view, metric, open_itemset)
    render.verdict_legend_row(present)
    with st.expander("What the words mean (every column and number on this page)"):
        st.markdown("  \n".join(f"**{term}**: {text}" for term, text in GLOSSARY.items()))
else:
    st.warning("No slice matches these filters.")

# ---------------------------------------------------------------- the open slice
st.subheader("The open slice")
left_out = set(catalog.loc[~catalog["scanned"], "item"])
t1, t2 = st.columns([5, 1.2])
with t1:
    state.keyed_widget(st.multiselect, "Its items: type to find any item, add or remove one, and the numbers follow "
                       "(an item the scan did not mine is measured from the rows)", "w:slice_items",
                       [i for i in items if i in known], options=list(catalog["item"]),
                       on_change=render.type_slice, placeholder="type an item, e.g. channel=App",
                       format_func=lambda i: f"{i} · not scanned" if i in left_out else i)
with t2:
    st.write("")
    if source == "typed":
        st.button("Back to the table's slice", on_click=render.type_slice, args=(None,), key="back-to-table")
if not items:
    st.info("Choose at least one item to open a slice.")
    st.stop()
try:
    ms = cache.measured(rid, tuple(items), table, res_rows, render.replication_rows(),
                        (table.assessment or {}).get("replication"))
except DivergenceInputError as exc:
    st.error(str(exc))
    st.stop()
row = ms.row
tested = ms.n_family.get(metric, h["n_tested"])
if ms.same_rows_as:
    st.info(f"These items hold on exactly the rows of the listed slice `{ms.same_rows_as}` (the result lists each "
            "distinct set of rows once, by its shortest description): its numbers are shown.",
            icon=":material/join_inner:")
if not ms.mined:
    st.info(f"**Not mined**: {ms.why_not_mined}. Measured now from the rows with the result's settings; its q "
            f"counts it as one more slice tested ({format_count(tested)} in the family, the "
            f"{format_count(h['n_tested'])} mined ones included).", icon=":material/edit_note:")
verdict = str(row[f"{metric}_verdict"] or "")
d = st.columns(5)
d[0].metric("Rows", format_count(row["count"]), help=f"{GLOSSARY['support']} {GLOSSARY['measured']}")
d[0].caption(f"support {format_percent(row['support'])}; {format_count(row[metric + '_count'])} measured")
d[1].metric(h["label"], format_value(row[metric], b), help=f"{GLOSSARY['interval']} {GLOSSARY['bootstrap']}")
boot = row.get(metric + "_boot_low")
d[1].caption(f"interval {format_interval(row[metric + '_ci_low'], row[metric + '_ci_high'], b)}"
             + (f"; bootstrap {format_interval(boot, row[metric + '_boot_high'], b)}" if boot == boot and boot is not None
                else "")
             + ("; analytic (a DuckDB scan keeps no rows to bootstrap)" if table.engine == "duckdb" else ""))
d[2].metric("Divergence", format_divergence(row[metric + "_divergence"], b), help=GLOSSARY["divergence"])
d[2].caption(f"against {format_value(h['overall'], b)} overall; t = {format_number(row[metric + '_t'])}",
             help=GLOSSARY["t"])
d[3].metric("q", format_p(row[metric + "_q"]), help=GLOSSARY["q"])
d[3].caption(f"p = {format_p(row[metric + '_p'])}; {correction} over {format_count(tested)} slices tested",
             help=GLOSSARY["p"])
d[4].metric("Verdict", verdict or "–", help=VERDICT_TEXT.get(verdict, GLOSSARY["verdict"]))
meets = "meets" if row[metric + "_meets_min_size"] else "below"
d[4].caption(f"{meets} n_min = {format_count(n_min)}"
             + (": its divergence is measured imprecisely" if meets == "below" and verdict not in ("too small", "noise")
                else ""), help=f"{GLOSSARY['n_min']} {GLOSSARY['indicative']}")

evidence = verdict_evidence(table, row, metric)
if evidence:
    st.markdown(evidence)
if f"{metric}_replicated_value" in row:
    st.markdown(
        f"**Replication** on {table.assessment.get('replication')}: "
        f"{format_value(row[metric + '_replicated_value'], b)} "
        f"{format_interval(row[metric + '_replicated_ci_low'], row[metric + '_replicated_ci_high'], b)}: "
        + ("replicated." if bool(row[metric + "_replicated"]) else "**not replicated**."))
elif table.assessment.get("replication") and not ms.mined:
    st.caption("Replication: not re-measured for this slice (the held-out rows are not kept; the result's other "
               "slices were).")
else:
    st.caption("Replication: none chosen (Data page: " + ("a second file)." if table.engine == "duckdb" else
               "a split or period column, a second file, or a held-out share)."))

left, right = st.columns(2)
delta = (h["min_size"] or {}).get("delta")
bars, lattice, why_no_lattice = render.slice_figures(rid, tuple(items), metric, delta, ms)
with left:
    st.plotly_chart(bars, key="contribution_chart")
    st.caption(f"Shapley contributions: {GLOSSARY['shapley']}")
with right:
    if lattice is None:
        st.info(why_no_lattice)
    else:
        st.plotly_chart(lattice, key="lattice_chart")
        st.caption(f"Every subset of the slice, the whole dataset on top. Squares: |Δ| ≥ δ = "
                   f"{format_threshold(delta, b)}; diamonds: {GLOSSARY['corrective'].lower()}")
