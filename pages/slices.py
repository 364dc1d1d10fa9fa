"""Step 3: the headline, the findings in plain words, the slice table (click a header to sort,
a row to open) and the open slice, which can be edited item by item."""
from __future__ import annotations

import streamlit as st

from divergence import VERDICTS, DivergenceInputError, vocabulary
from divergence.present.cards import findings_header, headline, headline_tiles, verdict_evidence
from divergence.present.formats import (
    GLOSSARY,
    VERDICT_TEXT,
    family_sentence,
    format_count,
    format_divergence,
    format_interval,
    format_number,
    format_p,
    format_percent,
    format_threshold,
    format_value,
    html_text,
    md_code,
    md_text,
    verdict_ink,
)
from divergence.present.views import default_ascending, redundancy_epsilon, sort_options
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
a = table.assessment  # a result on this page is always assessed
n_min = h["min_size"].n_min if h["min_size"] else None
correction = vocabulary.CORRECTION_NAMES.get(a.correction, "")
tiles = headline_tiles(table, metric)  # the same tiles as the report and the command line; they add up
for col, tile in zip(st.columns(len(tiles)), tiles):
    col.metric(md_text(tile.label), tile.value, help=md_text(tile.help) if tile.help else None)
    col.caption(md_text(tile.caption))
cut = a.findings_cut.get(metric)
if cut:  # the search for distinct findings had its work's worth and stopped: said beside the tiles
    st.caption(f"Distinct findings: {md_text(cut)}")

# ---------------------------------------------------------------- findings in plain words
cards, n_findings = cache.card_findings(rid, metric, table)
if cards:
    st.markdown(findings_header(cards, n_findings))
    for col, card in zip(st.columns(len(cards)), cards):
        with col.container(border=True):
            st.markdown(f"<span style='background:{card.color};color:{verdict_ink(card.verdict)};border-radius:.6em;padding:0 .5em;"
                        f"font-size:.8em;font-weight:600'>{html_text(card.badge)}</span>", unsafe_allow_html=True)
            st.markdown(md_code(card.itemset))  # the data never inside unsafe HTML: a code span of its own
            if card.inside:  # a finding inside another: read against the rest of it (its words say how)
                st.caption(f"↳ {md_text(card.inside)}")
            st.markdown(f"<div style='font-size:.88em;line-height:1.4'><b>Who:</b> {html_text(card.who)}.<br><b>What:</b> "
                        f"{html_text(card.what)}.<br><b>How sure:</b> {html_text(card.sure)}.<br><b>What to do:</b> "
                        f"{html_text(card.todo)}</div>", unsafe_allow_html=True)
            st.button("Open this slice", key=f"card-{card.index}", on_click=render.type_slice,
                      args=(render.items_of(table, card.itemset),))
else:
    st.info(f"No finding for {md_text(h['label'])}: no slice survives the correction for the {format_count(h['n_tested'])} "
            "slices tested and the minimum size.")

# ---------------------------------------------------------------- sort and filters
options = sort_options(table, metric)
present = [v for v in VERDICTS if v in h["verdicts"]]
if state.get(K.F_VERDICTS) and not set(state.get(K.F_VERDICTS)) <= set(present):
    state.update(**{K.F_VERDICTS: [v for v in state.get(K.F_VERDICTS) if v in present]})
if state.get(K.F_ATTRIBUTES) and not set(state.get(K.F_ATTRIBUTES)) <= set(table.attributes):
    # a filter on columns another result had (a new data set): it no longer applies
    state.update(**{K.F_ATTRIBUTES: [a for a in state.get(K.F_ATTRIBUTES) if a in table.attributes]})
if state.get(K.SORT_BY) not in options:  # the default order (distinct findings first), from its first entry
    state.update(**{K.SORT_BY: next(iter(options))})
longest = int(table.lengths.max()) if len(table) > 1 else 1
eps = float(state.get(K.REDUNDANCY))


def _sort_changed() -> None:
    col = options.get(state.get(K.SORT_BY))
    state.update(**{K.SORT_ASC: bool(col and default_ascending(col))})


c1, c2, c3, c4, c5, c6 = st.columns([2, 1.6, 2.6, 1.7, 2, 1.2])
with c1:
    state.bound(st.selectbox, "Sort by", K.SORT_BY, options=list(options), after=_sort_changed,
                help="Or click a column's header in the table (again: the other way).")
with c2:
    # one labelling whatever the column (a widget whose labels change is a new widget to the browser);
    # for the default order, smallest first is from its first slice
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
    st.error(md_text(exc))
    st.stop()

# ---------------------------------------------------------------- the table and its legend
label_of = {v: k for k, v in options.items()}
if view.sort_by.endswith("_order"):
    sorted_how = ("in the default order: distinct findings first, then the other significant slices, then the rest, "
                  "those below the minimum size after those that meet it" + (", reversed" if view.ascending else ""))
else:
    sorted_how = (f"sorted by {label_of.get(view.sort_by, view.sort_by)}, "
                  + ("smallest first" if view.ascending else "largest first"))
st.caption(f"Showing {format_count(len(view.rows))} of {format_count(view.n_matching)} matching slices "
           f"({format_count(view.n_slices)} mined), {md_text(sorted_how)}. "
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
if source == "table" and render.chosen(metric) not in view.rows["itemset"].tolist() and not cards:
    st.info(f"No finding for {md_text(h['label'])}, so none is opened: below is the table's first slice, for "
            "reference (not a finding). Click a row of the table to open another.")
left_out = set(catalog.loc[~catalog["scanned"], "item"])
t1, t2 = st.columns([5, 1.2])
with t1:
    typed_cuts = [i for i in items if i not in known]  # cuts typed by hand (income<=20), kept as options
    state.keyed_widget(st.multiselect, "Its items: type to find any item, add or remove one, and the numbers follow "
                       "(an item the scan did not mine is measured from the rows); or type a cut on any numeric "
                       "column, e.g. income<=20 or income=(20,35], and press Enter", "w:slice_items",
                       list(items), options=list(catalog["item"]) + typed_cuts, accept_new_options=True,
                       on_change=render.type_slice, placeholder="type an item, e.g. channel=App, or a cut: income<=20",
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
                        a.replication)
except DivergenceInputError as exc:
    st.error(md_text(exc))
    st.stop()
row = ms.row
tested = ms.n_family.get(metric, h["n_tested"])
family = h["family_sentence"]
if not ms.mined:  # the typed slice's q counts it in the result's family, one more test per metric
    mine = ms.table.assessment.family_size.get(metric, 0) if ms.table.assessment is not None else 0
    mined = a.family_size.get(metric, 0)
    family = family_sentence(a, metric, extra=max(int(mine) - int(mined), 0))
if ms.same_rows_as:
    st.info(f"These items hold on exactly the rows of the listed slice {md_code(ms.same_rows_as)} (the result lists each "
            "distinct set of rows once, by its shortest description): its numbers are shown.",
            icon=":material/join_inner:")
if not ms.mined:
    st.info(f"**Not mined**: {md_text(ms.why_not_mined)}. Measured now from the rows with the result's settings; its q "
            f"counts it as one more slice tested ({format_count(tested)} in the family, the "
            f"{format_count(h['n_tested'])} mined ones included).", icon=":material/edit_note:")
stats, i = ms.table.statistics(metric), ms.index  # the open slice: position i of the table that measured it


verdict = str(stats.verdict[i] or "")
d = st.columns(5)
d[0].metric("Rows", format_count(row["count"]), help=f"{GLOSSARY['support']} {GLOSSARY['measured']}")
d[0].caption(f"support {format_percent(row['support'])}; {format_count(stats.count[i])} measured")
d[1].metric(md_text(h["label"]), format_value(stats.value[i], b), help=f"{GLOSSARY['interval']} {GLOSSARY['bootstrap']}")
boot = stats.at("boot_low", i)
d[1].caption(f"interval {format_interval(stats.ci_low[i], stats.ci_high[i], b)}"
             + (f"; bootstrap {format_interval(boot, stats.at('boot_high', i), b)}" if boot == boot and boot is not None
                else "")
             + ("; analytic (a DuckDB scan keeps no rows to bootstrap)" if table.engine == "duckdb" else ""))
d[2].metric("Divergence", format_divergence(stats.divergence[i], b), help=GLOSSARY["divergence"])
d[2].caption(f"against {format_value(h['overall'], b)} overall; t = {format_number(stats.t[i])}",
             help=GLOSSARY["t"])
d[3].metric("q", format_p(stats.q[i]), help=GLOSSARY["q"])
d[3].caption(f"p = {format_p(stats.p[i])}; q: {family}",
             help=GLOSSARY["p"])
d[4].metric("Verdict", verdict or "–", help=VERDICT_TEXT.get(verdict, GLOSSARY["verdict"]))
meets = "meets" if stats.meets_min_size[i] else "below"
d[4].caption(f"{meets} n_min = {format_count(n_min)}"
             + (": indicative" if meets == "below" and verdict not in ("too small", "noise")
                else ""), help=f"{GLOSSARY['n_min']} {GLOSSARY['indicative']}")

evidence = verdict_evidence(stats, i, a.confidence)
if evidence:
    st.markdown(evidence)
if "replicated_value" in stats.other:
    st.markdown(
        f"**Replication** on {md_text(a.replication)}: "
        f"{format_value(stats.at('replicated_value', i), b)} "
        f"{format_interval(stats.at('replicated_ci_low', i), stats.at('replicated_ci_high', i), b)}: "
        + ("replicated." if bool(stats.at("replicated", i)) else "**not replicated**."))
elif a.replication and not ms.mined:
    st.caption("Replication: not re-measured for this slice (the held-out rows are not kept; the result's other "
               "slices were).")
else:
    st.caption("Replication: none chosen (Data page: " + ("a second file)." if table.engine == "duckdb" else
               "a split or period column, a second file, or a held-out share)."))

if ms.mined:  # AUC, F1… on the open slice's own rows (a typed slice that was not mined: its row is not kept)
    render.evaluation_panel(rid, table, open_itemset, a.seed)

delta = h["min_size"].delta if h["min_size"] else None
bars, lattice, why_no_lattice = render.slice_figures(rid, tuple(items), metric, delta, ms)


def _figures() -> None:
    left, right = st.columns(2)
    with left:
        st.plotly_chart(bars, key="contribution_chart")
        st.caption(f"Shapley contributions: {GLOSSARY['shapley']}")
    with right:
        if lattice is None:
            st.info(md_text(why_no_lattice))
        else:
            st.plotly_chart(lattice, key="lattice_chart")
            st.caption(f"Every subset of the slice, the whole dataset on top. Squares: |Δ| ≥ δ = "
                       f"{format_threshold(delta, b)}; diamonds: {GLOSSARY['corrective'].lower()}")


# drawn once the browser has painted the page above (its first visit): Plotly's code would hold the findings back
render.charts_after_paint(_figures, "Drawing the slice's Shapley contributions and its lattice…")
