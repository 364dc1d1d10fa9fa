"""Step 3: the headline, the slice table (sorted, filtered, top N) and the detail of one slice."""
from __future__ import annotations

import streamlit as st

import ui_support as ui
from divergence import VERDICTS, DivergenceInputError
from divergence.figures import contribution_figure, lattice_figure
from divergence.views import (display_frame, format_count, format_divergence, format_interval, format_p,
                              format_number, format_percent, format_value, headline, slice_table_figure,
                              sort_options)
from ui_support import K

ui.page_setup()

st.title("Slices")
table, rid = ui.result_or_stop("slices")
st.caption(ui.result_caption(table))

metric = ui.metric_choice(table)
info = table.metric(metric)

# ---------------------------------------------------------------- headline
h = headline(table, metric)
n_min = h["min_size"]["n_min"] if h["min_size"] else None
cols = st.columns(6)
cols[0].metric(f"{h['label']}, whole dataset", format_value(h["overall"], h["binary"]),
               help=f"{h['description']} over every row, with its interval")
cols[0].caption(format_interval(h["overall_low"], h["overall_high"], h["binary"]))
cols[1].metric("Slices tested", format_count(h["n_tested"]), help="Slices with a p-value: the count the correction uses.")
cols[2].metric("Significant", format_count(h["n_significant"]),
               help=f"After correction: {ui.CORRECTIONS[table.assessment['correction']]}, "
                    f"q ≤ {1 - table.assessment['confidence']:.2g}.")
cols[2].caption("after correction")
if info.baseline:
    tiles = [("Defects", "defect", "error high, slice baseline normal: the model fails here"),
             ("Hard cohorts", "hard cohort", "error high, but the slice's own baseline is high too")]
else:
    tiles = [("Above", "above", f"significantly above the whole dataset's {h['label']}"),
             ("Below", "below", f"significantly below the whole dataset's {h['label']}")]
for col, (label, verdict, caption) in zip(cols[3:5], tiles):
    col.metric(label, format_count(h["verdicts"].get(verdict, 0)), help=caption)
    col.caption(caption.split(":")[0] if info.baseline else "the whole dataset")
cols[5].metric("Too small", format_count(h["verdicts"].get("too small", 0)),
               help=h["min_size"]["text"] if h["min_size"] else None)
cols[5].caption(f"below n_min = {format_count(n_min)} rows" if n_min else "")

# ---------------------------------------------------------------- the view under the current sort and filters
options = sort_options(table, metric)
present = [v for v in VERDICTS if v in h["verdicts"]]
if ui.state(K.F_VERDICTS) and not set(ui.state(K.F_VERDICTS)) <= set(present):
    ui.set_settings(**{K.F_VERDICTS: [v for v in ui.state(K.F_VERDICTS) if v in present]})
if ui.state(K.SORT_BY) not in options:
    ui.set_settings(**{K.SORT_BY: next(iter(options))})
longest = int(table.lengths.max()) if len(table) > 1 else 1
eps = float(ui.state(K.REDUNDANCY))
try:
    view = ui.current_view(table, rid)
except DivergenceInputError as exc:
    st.error(str(exc))
    st.stop()

findings = view.rows[view.rows[f"{metric}_verdict"].isin(["defect", "hard cohort", "above", "below", "better"])]
if len(findings):
    r = findings.iloc[0]
    st.success(
        f"**Top finding under this sort:** `{r['itemset']}`: {h['label']} "
        f"{format_value(r[metric], info.binary)} {format_interval(r[metric + '_ci_low'], r[metric + '_ci_high'], info.binary)} "
        f"against {format_value(h['overall'], info.binary)} for the whole dataset "
        f"({format_divergence(r[metric + '_divergence'], info.binary)}), {format_count(r[metric + '_count'])} rows "
        f"measured, q = {format_p(r[metric + '_q'])}: **{r[metric + '_verdict']}**.",
        icon=":material/flag:")
elif len(view.rows):
    st.info("No slice in this view survives the correction and the minimum size: nothing here is a finding.")


def _sort_changed() -> None:
    col = options.get(ui.state(K.SORT_BY))
    ui.set_settings(**{K.SORT_ASC: bool(col and col.endswith(("_p", "_q")))})


# ---------------------------------------------------------------- controls
c1, c2, c3, c4, c5, c6 = st.columns([2, 1.6, 2.6, 1.7, 2, 1.2])
with c1:
    ui.bound(st.selectbox, "Sort by", K.SORT_BY, options=list(options), after=_sort_changed)
with c2:
    ui.bound(st.selectbox, "Order", K.SORT_ASC, options=[False, True],
             format_func=lambda a: "smallest first" if a else "largest first")
with c3:
    ui.bound(st.multiselect, "Verdicts", K.F_VERDICTS, options=present, placeholder="all verdicts")
with c4:
    ui.bound(st.selectbox, "Minimum size", K.F_MIN_SIZE, options=["all", "meets", "below"],
             format_func={"all": "all slices", "meets": "meets it", "below": "below it"}.get)
with c5:
    ui.bound(st.multiselect, "Involving", K.F_ATTRIBUTES, options=list(table.attributes),
             placeholder="any attribute")
with c6:
    ui.bound(st.selectbox, "Show", K.TOP_N, options=[10, 25, 50, 100, 250, 500],
             format_func=lambda n: f"top {n}")
e1, e2, _ = st.columns([3, 3, 2])
with e1:
    if longest > 1:
        ui.length_slider(longest)
with e2:
    if eps > 0:
        st.write("")
        ui.bound(st.checkbox, f"Hide redundant slices (a subset's divergence within ε = {eps:g})", K.F_PRUNE)

# ---------------------------------------------------------------- the table
shown = display_frame(table, view.rows, metric, also=[view.sort_by])
order = "smallest first" if view.ascending else "largest first"
label_of = {v: k for k, v in options.items()}
st.caption(f"Showing {format_count(len(view.rows))} of {format_count(view.n_matching)} matching slices "
           f"({format_count(view.n_slices)} mined), sorted by {label_of.get(view.sort_by, view.sort_by)}, {order}.")
if not len(view.rows):
    st.warning("No slice matches these filters.")
    st.stop()
st.plotly_chart(slice_table_figure(shown, height=min(90 + 27 * len(shown), 560)), key="slice_table",
                config={"displayModeBar": False})

# ---------------------------------------------------------------- slice detail
st.subheader("Slice detail")
itemsets = view.rows["itemset"].tolist()
selected = ui.state(K.SELECTED)
if selected not in itemsets:
    if selected is not None:
        itemsets = [selected] + itemsets
    else:
        ui.set_settings(**{K.SELECTED: itemsets[0]})
ui.bound(st.selectbox, "Open a slice (the first row of the table unless you choose)", K.SELECTED, options=itemsets)
selected = ui.state(K.SELECTED)
try:
    idx = table.lookup(selected)
except DivergenceInputError as exc:
    st.error(str(exc))
    st.stop()
row = table.frame.iloc[idx]
b = info.binary
d = st.columns(5)
d[0].metric("Rows", format_count(row["count"]))
d[0].caption(f"support {format_percent(row['support'])}; {format_count(row[metric + '_count'])} measured")
d[1].metric(h["label"], format_value(row[metric], b))
boot = row.get(metric + "_boot_low")
d[1].caption(f"interval {format_interval(row[metric + '_ci_low'], row[metric + '_ci_high'], b)}"
             + (f"; bootstrap {format_interval(boot, row[metric + '_boot_high'], b)}" if boot == boot and boot is not None
                else "")
             + ("; analytic (a DuckDB scan keeps no rows to bootstrap)" if table.engine == "duckdb" else ""))
d[2].metric("Divergence", format_divergence(row[metric + "_divergence"], b))
d[2].caption(f"against {format_value(h['overall'], b)} overall; t = {format_number(row[metric + '_t'])}")
d[3].metric("q", format_p(row[metric + "_q"]))
d[3].caption(f"p = {format_p(row[metric + '_p'])}; {format_count(h['n_tested'])} slices tested")
d[4].metric("Verdict", row[metric + "_verdict"] or "–")
d[4].caption(("meets" if row[metric + "_meets_min_size"] else "below") + f" n_min = {format_count(n_min)}")

if f"{metric}_baseline" in row:
    base, lift, short = row[metric + "_baseline"], row[metric + "_lift"], row[metric + "_lift_shortfall"]
    first = table.frame.iloc[0]
    st.markdown(
        f"**Model error against the slice baseline.** The model's {h['label']} here is "
        f"{format_value(row[metric], b)}; the best constant prediction from this slice's own rows would score "
        f"{format_value(base, b)} (whole dataset: {format_value(first[metric + '_baseline'], b)}). "
        f"Lift over that baseline: {format_percent(lift)} here, {format_percent(first[metric + '_lift'])} overall "
        f"(shortfall {format_divergence(short, True)}).")
if f"{metric}_replicated_value" in row:
    st.markdown(
        f"**Replication** on {table.assessment.get('replication')}: "
        f"{format_value(row[metric + '_replicated_value'], b)} "
        f"{format_interval(row[metric + '_replicated_ci_low'], row[metric + '_replicated_ci_high'], b)}: "
        + ("replicated." if bool(row[metric + "_replicated"]) else "**not replicated**."))
else:
    st.caption("Replication: none chosen (Data page: " + ("a second file)." if table.engine == "duckdb" else
               "a split or period column, a second file, or a held-out share)."))

left, right = st.columns(2)
with left:
    contrib = ui.contributions(rid, selected, metric, 0, table)
    st.plotly_chart(ui.themed(contribution_figure(contrib)), key="contribution_chart")
    st.caption("Shapley contributions: how much each item adds to the slice's divergence; they sum to it.")
with right:
    try:
        lattice = lattice_figure(table, selected, metric=metric, threshold=(h["min_size"] or {}).get("delta"))
    except DivergenceInputError as exc:
        st.info(str(exc))
    else:
        st.plotly_chart(ui.themed(lattice), key="lattice_chart")
