"""The report's page: a scanned table (and the plan's comparison) as one self-contained HTML
page (Plotly's JavaScript embedded, no network), which a reader can sort; running the plan is
:mod:`divergence.report.run`.

    python -m divergence report PLAN DATA [--previous PREVIOUS_DATA] --output report.html
"""
from __future__ import annotations

import datetime as _dt
import html
import math
import os
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ..budget import TIME_CUT
from ..errors import DivergenceInputError
from ..vocabulary import CORRECTION_NAMES, PEER_SORTS, REPORT_SORTS
from ..present.formats import (COMPARE_VERDICT_COLORS, FINDING_VERDICTS, column_help, family_sentence,
                      finding_label, format_count, format_divergence, format_interval, format_number, format_p,
                      format_percent, format_threshold, format_value,
                      ink_on, verdict_color, verdict_ink, verdict_label, verdict_legend)
from .plan import SlicePlan, plan_hash
from ..table import SliceTable

__all__ = ["build_report", "write_report"]


# ----------------------------------------------------------------------------- formatting

def _esc(x: object) -> str:
    return html.escape(str(x), quote=True)


def _sort_value(x: object) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "1" if x else "0"
    try:
        v = float(x)  # type: ignore[arg-type]
        return "" if math.isnan(v) else repr(v)
    except (TypeError, ValueError):
        return _esc(x)


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1200px;
color:#212529;padding:0 1rem;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.25rem;margin-top:2.2rem;border-bottom:1px solid #dee2e6}
h3{font-size:1.05rem;margin-top:1.4rem}
.meta{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;font-size:.92rem;color:#495057}
.meta dt{font-weight:600}.meta dd{margin:0}
.badge{display:inline-block;padding:.05rem .5rem;border-radius:.7rem;font-size:.8rem;font-weight:600;color:#fff;white-space:nowrap}
.kpis{display:flex;flex-wrap:wrap;gap:1rem;margin:.8rem 0}
.kpi{border:1px solid #dee2e6;border-radius:.4rem;padding:.5rem .9rem;min-width:9rem}
.kpi b{display:block;font-size:1.25rem}.kpi span{font-size:.8rem;color:#495057}
table.slices{border-collapse:collapse;width:100%;font-size:.85rem;margin-top:.6rem}
table.slices th{position:sticky;top:0;background:#f1f3f5;cursor:pointer;text-align:left;padding:.35rem .45rem;
border-bottom:2px solid #ced4da;white-space:nowrap;user-select:none}
table.slices th:after{content:" ⇅";color:#adb5bd}table.slices th.asc:after{content:" ▲";color:#343a40}
table.slices th.desc:after{content:" ▼";color:#343a40}
table.slices td{padding:.3rem .45rem;border-bottom:1px solid #e9ecef;vertical-align:top}
table.slices td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.slices tr:hover td{background:#f8f9fa}
.note{font-size:.88rem;color:#495057;background:#f8f9fa;border-left:3px solid #adb5bd;padding:.5rem .8rem}
.warn{font-size:.95rem;color:#5c2b00;background:#fff4e6;border-left:5px solid #e8590c;padding:.6rem .9rem}
.findings{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:1rem}
footer{margin-top:3rem;font-size:.8rem;color:#868e96}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:.8rem;margin:.6rem 0}
.card{border:1px solid #dee2e6;border-left:5px solid #868e96;border-radius:.4rem;padding:.55rem .8rem;font-size:.88rem}
.card p{margin:.3rem 0}.small{font-size:.85rem;color:#495057}
.legend{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1rem;font-size:.9rem}.legend dd{margin:0}
table.slices th[title]{text-decoration:underline dotted #adb5bd}
"""

_SORT_JS = """
document.querySelectorAll('table.slices').forEach(function(t){
  t.querySelectorAll('th').forEach(function(th,i){
    th.addEventListener('click',function(){
      var asc=!th.classList.contains('asc');
      t.querySelectorAll('th').forEach(function(h){h.classList.remove('asc','desc');});
      th.classList.add(asc?'asc':'desc');
      var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows);
      rows.sort(function(a,b){
        var x=a.cells[i].getAttribute('data-v'),y=b.cells[i].getAttribute('data-v');
        var fx=parseFloat(x),fy=parseFloat(y),nx=x===''||isNaN(fx),ny=y===''||isNaN(fy);
        if(nx&&ny){return asc?x.localeCompare(y):y.localeCompare(x);}
        if(nx){return 1;} if(ny){return -1;}
        return asc?fx-fy:fy-fx;});
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
});
"""


def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def _figure_div(fig) -> str:
    return fig.to_html(full_html=False, include_plotlyjs=False, config={"displaylogo": False,
                                                                         "responsive": True})


def _sort_key(table: SliceTable, metric: str, sort_by: str | None) -> str:
    """The column suffix the metric's table is sorted by: ``sort_by`` when the table has it,
    else the lift shortfall (error metrics) or the divergence."""
    if sort_by is not None and sort_by not in REPORT_SORTS:
        raise DivergenceInputError(f"The report sorts by one of {', '.join(REPORT_SORTS)}; got {sort_by!r}.")
    if sort_by in PEER_SORTS or (sort_by and f"{metric}_{sort_by}" in table.frame.columns):
        return sort_by
    return table.default_sort_column(metric).removeprefix(f"{metric}_")


def _sorted_rows(table: SliceTable, metric: str, sort_by: str | None = None) -> pd.DataFrame:
    key = _sort_key(table, metric, sort_by)
    if key == "order":
        return table.frame.iloc[table.default_order(metric)]
    if key in PEER_SORTS:  # a peer's score: its column added for this table (divergence.scores)
        from ..scores import sort_column

        table, key = sort_column(table, key, metric)
    else:
        key = f"{metric}_{key}"
    f = table.frame.iloc[1:]
    values = f[key].to_numpy(dtype=float)
    order = np.lexsort((-f["support"].to_numpy(), np.where(np.isnan(values), np.inf, -values)))
    return f.iloc[order]


def _slice_table_html(table: SliceTable, metric: str, rows: pd.DataFrame, previous: SliceTable | None) -> str:
    from ..present.views import metric_label

    info = table.metric(metric)
    m, b = metric, info.binary
    cols: list[tuple[str, str, object]] = [
        ("Slice", "itemset", None), ("Rows", "count", "n"), ("Measured", f"{m}_count", "n"),
        (metric_label(m), m, "v"), ("Interval", f"{m}_ci_low", "ci"), ("Divergence", f"{m}_divergence", "d"),
        ("q", f"{m}_q", "p"),
    ]
    if f"{m}_finding" in rows.columns:
        cols += [("Finding", f"{m}_finding", "finding")]
    if f"{m}_divergence_shrunk" in rows.columns:
        cols += [("Shrunk divergence", f"{m}_divergence_shrunk", "d"),
                 ("Bound nearest zero", f"{m}_divergence_bound", "d")]
    if f"{m}_baseline" in rows.columns:
        cols += [("Baseline", f"{m}_baseline", "v")]
        if f"{m}_harder" in rows.columns:
            cols += [("Harder", f"{m}_harder", "d")]
        if f"{m}_reference" in rows.columns:
            cols += [("Achievable", f"{m}_reference", "v")]
        cols += [("Lift", f"{m}_lift", "num"), ("Lift shortfall", f"{m}_lift_shortfall", "num")]
    if f"{m}_replicated" in rows.columns:
        cols += [("Replication", f"{m}_replicated_value", "v")]
        if f"{m}_replicated_divergence" in rows.columns:
            cols += [("Replicated divergence", f"{m}_replicated_divergence", "d")]
        cols += [("Replicated", f"{m}_replicated", "bool")]
    from ..scores import SCORE_LABELS

    cols += [(label, f"{m}_{suffix}", "num") for suffix, label in SCORE_LABELS.items() if f"{m}_{suffix}" in rows.columns]
    if previous is not None:
        cols += [("Previous cycle", "__previous", None)]
    cols += [("Verdict", f"{m}_verdict", None)]
    prev_verdict = {}
    if previous is not None and f"{m}_verdict" in previous.frame.columns:
        pf = previous.frame
        prev_verdict = dict(zip(pf["itemset"], pf[f"{m}_verdict"]))
    heads = []
    for c in cols:
        tip = "The verdict on the slice in the previous cycle's data." if c[1] == "__previous" else column_help(c[0])
        heads.append(f"<th title=\"{_esc(tip)}\">{_esc(c[0])}</th>")
    out = [f'<table class="slices" data-metric="{_esc(m)}"><thead><tr>{"".join(heads)}</tr></thead><tbody>']
    for _, r in rows.iterrows():
        cells = []
        for label, col, kind in cols:
            if col == "__previous":
                pv = prev_verdict.get(r["itemset"])
                text = "not mined" if pv is None else ("finding" if pv in FINDING_VERDICTS else str(pv))
                cells.append(f'<td data-v="{_esc(text)}">{_esc(text)}</td>')
                continue
            v = r[col]
            if kind == "ci":
                lo, hi = r[f"{m}_ci_low"], r[f"{m}_ci_high"]
                cells.append(f'<td class="n" data-v="{_sort_value(lo)}">{format_interval(lo, hi, b)}</td>')
            elif kind == "n":
                cells.append(f'<td class="n" data-v="{_sort_value(v)}">{format_count(v)}</td>')
            elif kind == "v":
                cells.append(f'<td class="n" data-v="{_sort_value(v)}">{format_value(v, b)}</td>')
            elif kind == "d":
                cells.append(f'<td class="n" data-v="{_sort_value(v)}">{format_divergence(v, b)}</td>')
            elif kind == "num":
                cells.append(f'<td class="n" data-v="{_sort_value(v)}">{format_number(v)}</td>')
            elif kind == "pct":
                cells.append(f'<td class="n" data-v="{_sort_value(v)}">{format_percent(v)}</td>')
            elif kind == "pp":
                cells.append(f'<td class="n" data-v="{_sort_value(v)}">{format_divergence(v, True)}</td>')
            elif kind == "num":
                cells.append(f'<td class="n" data-v="{_sort_value(v)}">{format_number(v)}</td>')
            elif kind == "p":
                cells.append(f'<td class="n" data-v="{_sort_value(v)}">{format_p(v)}</td>')
            elif kind == "finding":
                text = finding_label(v, r[f"{m}_explained_by"])
                cells.append(f'<td data-v="{_esc(text)}">{_esc(text)}</td>')
            elif kind == "bool":
                cells.append(f'<td data-v="{_sort_value(v)}">{"yes" if bool(v) else "no"}</td>')
            elif col.endswith("_verdict"):
                text = verdict_label(v, r[f"{m}_divergence"], r.get(f"{m}_q"), r.get(f"{m}_meets_min_size"))
                cells.append(f'<td data-v="{_esc(v)}"><span class="badge" style="background:{verdict_color(v)};'
                             f'color:{verdict_ink(v)}">'
                             f"{_esc(text)}</span></td>")
            else:
                cells.append(f'<td data-v="{_esc(v)}">{_esc(v)}</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _findings_html(table: SliceTable, metric: str) -> tuple[str, list[str]]:
    """The findings summary of a metric as cards (the app's cards, same words), and their slices."""
    import re

    from ..present.views import FINDING_CARDS, findings, findings_header

    cards, total = findings(table, metric, top=FINDING_CARDS)
    if not cards:
        return ("<p class='note'><b>No finding</b>: no slice survives the correction and the minimum size for "
                f"{_esc(metric)}.</p>"), []
    header = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", _esc(findings_header(cards, total)))
    out = [f"<p class='small'>{header}</p><div class='cards'>"]
    for c in cards:
        out.append(f"<div class='card' style='border-left-color:{c.color}'>"
                   f"<div><span class='badge' style='background:{c.color};color:{verdict_ink(c.verdict)}'>"
                   f"{_esc(c.verdict)}</span> "
                   f"<b>{_esc(c.itemset)}</b></div>"
                   f"<p><b>Who.</b> {_esc(c.who)}.</p><p><b>What.</b> {_esc(c.what)}.</p>"
                   f"<p><b>How sure.</b> {_esc(c.sure)}.</p><p><b>What to do.</b> {_esc(c.todo)}</p></div>")
    out.append("</div>")
    if total > len(cards) and not cards[0].distinct:
        out.append(f"<p class='small'>{total:,} findings in all; the others refine these or share most of their "
                   "rows with them (the overlap below).</p>")
    return "".join(out), [c.itemset for c in cards]


def _legend_html() -> str:
    items = "".join(f"<dt><span class='badge' style='background:{colour};color:{verdict_ink(v)}'>{_esc(v)}</span></dt>"
                    f"<dd>{_esc(text)}</dd>"
                    for v, colour, text in verdict_legend())
    return f"<dl class='legend'>{items}</dl>"


def build_report(table: SliceTable, *, plan: SlicePlan | None = None, plan_label: str | None = None,
                 data_label: str | None = None, data_modified: float | None = None,
                 previous: SliceTable | None = None, previous_label: str | None = None,
                 top: int = 200, findings: int = 6, title: str | None = None, sort_by: str | None = None,
                 comparison=None) -> str:
    """The report as one self-contained HTML page (every script and style inline); with a
    ``comparison`` (:func:`divergence.report.run.run_comparison`), a section comparing the model with its reference
    comes first: the pre-release check."""
    from ..explain.adhoc import overlap
    from ..present.figures import contribution_figure, overlap_figure
    from ..explain.shapley import item_contributions
    from ..present.views import headline_tiles, interval_figure

    a = table.assessment or {}
    now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
    kind = "exploratory"
    caveat = ""
    if plan is not None and plan.kind == "pre-registered":
        kind = "pre-registered"
        created = getattr(plan, "created", None)
        if created and data_modified is not None:
            try:
                made = _dt.datetime.fromisoformat(str(created).replace("Z", "+00:00")).timestamp()
                if made > data_modified:
                    caveat = (" — note: the plan was saved after this data file was last modified, "
                              "so it may have been written with the errors in view")
            except ValueError:
                pass
    meta = [("Plan", plan_label or ("(none: settings given directly)" if plan is None else "slice plan")),
            ("Plan hash", plan_hash(plan) if plan is not None else "—"),
            ("Plan created", getattr(plan, "created", None) or "—"),
            ("Slices from", f"{kind} plan{caveat}" if plan is not None else "an exploratory scan"),
            ("Data", data_label or "—"), ("Rows", f"{table.n_rows:,}"),
            ("Minimum support", table.support_text),
            ("Attributes", ", ".join(table.attributes)),
            ("Confidence", f"{a.get('confidence', 0.95):.0%}; q-values: "
                           + "; ".join(dict.fromkeys(family_sentence(a, m) for m in table.metric_names))
                           if a.get("n_tested") else f"{a.get('confidence', 0.95):.0%}"),
            ("Intervals", a.get("intervals", "analytic")),
            ("Replication", a.get("replication") or (previous_label and f"previous cycle: {previous_label}") or "none"),
            ("Generated", now.isoformat())]
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
             f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
             f"<title>{_esc(title or 'Slice report')}</title><style>{_CSS}</style>"
             f"<script type='text/javascript'>{_plotly_js()}</script></head><body>"]
    parts.append(f"<h1>{_esc(title or 'Slice report')}</h1>")
    parts.append("<dl class='meta'>" + "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(v)}</dd>" for k, v in meta) + "</dl>")
    for note in table.notes:
        if note.startswith(TIME_CUT):  # the table depends on the machine: said loudly, first
            parts.insert(2, f"<p class='warn'><b>Cut by the time limit.</b> {_esc(note)}</p>")
        else:
            parts.append(f"<p class='note'>{_esc(note)}</p>")
    if comparison is not None:
        parts.append(_comparison_html(comparison, top=top, findings=findings))
    for m in table.metric_names:
        info = table.metric(m)
        f = table.frame
        tested = a.get("n_tested", {}).get(m, int(f[f"{m}_p"].iloc[1:].notna().sum()))
        alpha = 1 - float(a.get("confidence", 0.95))
        sig = int((f[f"{m}_q"].iloc[1:] <= alpha).sum()) if f"{m}_q" in f else 0
        verdicts = f[f"{m}_verdict"].iloc[1:].value_counts() if f"{m}_verdict" in f else pd.Series(dtype=int)
        lo, hi = table.overall_interval(m) if f"{m}_ci_low" in f else (float("nan"), float("nan"))
        parts.append(f"<h2>{_esc(info.description or m)} <small>({_esc(m)})</small></h2>")
        if f"{m}_q" in f:  # the dashboard's tiles, in the same words: they add up
            kpis = [(t.value, f"{t.label}: {t.caption}" if t.caption else t.label) for t in headline_tiles(table, m)]
            kpis.insert(1, (format_count(len(table) - 1), "slices mined"))
        else:
            kpis = [(format_value(table.overall(m), info.binary), f"whole dataset {format_interval(lo, hi, info.binary)}"),
                    (format_count(len(table) - 1), "slices mined"), (format_count(tested), "slices tested"),
                    (format_count(sig), "significant after correction")]
        parts.append("<div class='kpis'>" + "".join(f"<div class='kpi'><b>{k}</b><span>{_esc(t)}</span></div>"
                                                    for k, t in kpis) + "</div>")
        cut = (a.get("findings_cut") or {}).get(m)
        if cut:
            parts.append(f"<p class='note'><b>Distinct findings.</b> {_esc(cut)}</p>")
        ms = a.get("min_size", {}).get(m)
        if ms:
            parts.append(f"<p class='note'><b>Minimum slice size.</b> {_esc(ms['text'])}</p>")
        if f"{m}_verdict" in f:
            cards_html, _ = _findings_html(table, m)
            parts.append("<h3>Findings</h3>" + cards_html)
        rows = _sorted_rows(table, m, sort_by)
        sort_name = REPORT_SORTS[_sort_key(table, m, sort_by)]
        parts.append(f"<h3>Slices, by {sort_name} (top {min(top, len(rows)):,} of {len(rows):,}; "
                     f"click a column to sort)</h3>")
        listed_rows = [table.lookup(x) for x in (getattr(plan, "slices", None) or [])]
        shown_rows = rows.head(top)
        extra = [i for i in dict.fromkeys(listed_rows) if i not in set(shown_rows.index)]
        if extra:  # a pre-listed slice is reported whatever its place in the order
            shown_rows = pd.concat([shown_rows, table.frame.iloc[extra]])
        parts.append(_slice_table_html(table, m, shown_rows, previous))
        if previous is not None and f"{m}_verdict" in f:
            pf = previous.frame
            prev = dict(zip(pf["itemset"], pf[f"{m}_verdict"]))
            now_f = rows[rows[f"{m}_verdict"].isin(FINDING_VERDICTS)]
            held = [s for s in now_f["itemset"] if prev.get(s) in FINDING_VERDICTS]
            new = [s for s in now_f["itemset"] if prev.get(s) not in FINDING_VERDICTS]
            parts.append(f"<p class='note'><b>Against the previous cycle</b> ({_esc(previous_label or '')}): "
                         f"{len(held):,} findings held, {len(new):,} are new.</p>")
        if f"{m}_ci_low" in f:
            level = f"{a.get('confidence', 0.95):.0%} intervals"
            big = rows[rows[f"{m}_meets_min_size"].astype(bool)] if f"{m}_meets_min_size" in rows else rows
            if len(big):
                fig = interval_figure(table, big.head(25), m, level_label=level)
                parts.append(f"<h3>Intervals against the whole dataset: the top {min(25, len(big))} slices "
                             f"of at least the minimum size</h3>" + _figure_div(fig))
        top_found = rows[rows[f"{m}_verdict"].isin(FINDING_VERDICTS)].head(10) if f"{m}_verdict" in f else rows.head(0)
        if len(top_found) >= 2:
            parts.append(f"<h3>Rows the top {len(top_found)} findings share</h3><p class='small'>Ten findings may be "
                         "one cohort described ten ways: a dark block is one cohort.</p>"
                         + _figure_div(overlap_figure(overlap(table, list(top_found["itemset"])))))
        if f"{m}_finding" in f:  # the distinct findings first (rows are in the default order)
            found = rows[rows[f"{m}_finding"].astype(bool) & rows[f"{m}_verdict"].isin(FINDING_VERDICTS)].head(findings)
        else:
            found = rows[rows[f"{m}_verdict"].isin(FINDING_VERDICTS)].head(findings) if f"{m}_verdict" in f else rows.head(0)
        listed = [s for s in (getattr(plan, "slices", None) or [])]
        shown = list(found["itemset"]) + [table.frame.iloc[table.lookup(s)]["itemset"] for s in listed]
        shown = [s for s in dict.fromkeys(shown) if s]
        if shown:
            parts.append("<h3>What drives each finding (Shapley contributions of its items)</h3>"
                         "<div class='findings'>")
            for s in shown:
                contrib = item_contributions(table, s, metric=m)
                parts.append("<div>" + _figure_div(contribution_figure(contrib, binary=info.binary)) + "</div>")
            parts.append("</div>")
    parts.append("<h2>Verdicts</h2>" + _legend_html()
                 + "<p class='small'>Checked in this order: not significant after correction: too small "
                   "(measured rows below n_min) or noise (at least n_min: no divergence of δ or more, at 80% "
                   "power); a significant slice keeps its verdict at any size (flagged 'imprecise' below "
                   "n_min): not replicated, then defect / hard cohort / better for error "
                   "metrics with a slice baseline (undetermined where the rows needed to tell a defect from a "
                   "hard cohort were not kept), above / below otherwise. The shrunk divergence is the "
                   "empirical-Bayes estimate free of the winner's curse; the bound nearest zero is the corrected "
                   "interval's. Hover a column's name for its meaning.</p>")
    parts.append("<footer>Made by divergence.</footer>")
    parts.append(f"<script>{_SORT_JS}</script></body></html>")
    return "".join(parts)


def _comparison_html(c, *, top: int, findings: int) -> str:
    """The comparison section: per metric the whole dataset's change and verdict, the count of
    slices per verdict, the slices sorted worst first, the change intervals against zero and
    the Shapley chart of the worst slices' change."""
    from ..comparison.compare_views import (change_contribution_figure, change_interval_figure, compare_display_frame,
                                compare_headline, compare_view)

    a = c.assessment
    out = [f"<h2>Comparison with the reference model <small>(model '{_esc(a.get('model'))}' against reference "
           f"'{_esc(a.get('reference'))}')</small></h2>",
           f"<p class='note'>Both models on the same {a['rows_compared']:,} rows; {c.n_tested:,} paired tests in one "
           f"family (every slice × every metric), correction {_esc(a['correction'])}. A slice is <b>worse</b> or "
           f"<b>better</b> when its change is significant after correction and its {a['confidence']:.0%} interval "
           "excludes 0 (at any size); <b>no change</b> when the interval lies within ±δ; <b>too small</b> when "
           "neither and below n_min; "
           "<b>noise</b> otherwise.</p>"]
    worse_any = False
    for m in c.metric_names:
        h = compare_headline(c, m)
        b = h["binary"]
        worse_any |= h["verdicts"]["worse"] > 0 or h["verdict"] == "worse"
        out.append(f"<h3>{_esc(h['description'])} ({_esc(m)}; {h['worse_when']} is worse)</h3>")
        kpis = [(format_value(h["model"], b), "model, whole dataset"), (format_value(h["reference"], b), "reference"),
                (format_divergence(h["change"], b),
                 f"change [{format_divergence(h['change_low'], b)}, {format_divergence(h['change_high'], b)}]: "
                 f"{h['verdict']}")]
        kpis += [(f"{h['verdicts'][v]:,}", f"slices {v}") for v in ("worse", "better", "no change", "too small")]
        out.append("<div class='kpis'>" + "".join(f"<div class='kpi'><b>{k}</b><span>{_esc(t)}</span></div>"
                                                  for k, t in kpis) + "</div>")
        out.append(f"<p class='note'><b>Minimum slice size.</b> {_esc(h['min_size']['text'])}</p>")
        rows = compare_view(c, m, top_n=top)
        shown = compare_display_frame(c, rows, m)
        head = "".join(f"<th>{_esc(col)}</th>" for col in shown.columns)
        body = []
        for idx, r in shown.iterrows():
            raw = c.frame.loc[idx]
            cells = []
            for col in shown.columns:
                text = r[col]
                if col == "Verdict":
                    colour = COMPARE_VERDICT_COLORS.get(text, "#495057")
                    cells.append(f'<td data-v="{_esc(text)}"><span class="badge" '
                                 f'style="background:{colour};color:{ink_on(colour)}">'
                                 f"{_esc(text)}</span></td>")
                    continue
                key = {"Rows": raw["count"], "Change": raw[f"{m}_change"], "q": raw[f"{m}_change_q"],
                       f"Model {h['label']}": raw[m], f"Reference {h['label']}": raw[f"{m}_reference"],
                       "Change interval": raw[f"{m}_change_ci_low"]}.get(col, text)
                cls = "" if col in ("Slice", "Min size") else " class='n'"
                cells.append(f"<td{cls} data-v=\"{_sort_value(key)}\">{_esc(text)}</td>")
            body.append("<tr>" + "".join(cells) + "</tr>")
        out.append(f"<h3>Slices, worst first (top {len(rows):,} of {len(c) - 1:,}; click a column to sort)</h3>")
        out.append(f'<table class="slices" data-metric="{_esc(m)}_change"><thead><tr>{head}</tr></thead><tbody>'
                   + "".join(body) + "</tbody></table>")
        big = rows[rows[f"{m}_meets_min_size"].astype(bool)].head(25)
        if len(big):
            out.append(f"<h3>The change against zero: the worst {len(big)} slices of at least the minimum size</h3>"
                       + _figure_div(change_interval_figure(c, big, m)))
        worst = rows[rows[f"{m}_verdict"] == "worse"].head(findings)
        if len(worst):
            out.append("<h3>What drives each worse slice (Shapley contributions of its items to the change)</h3>"
                       "<div class='findings'>")
            for s in worst["itemset"]:
                fig = change_contribution_figure(c.contributions(s, m), binary=b)
                out.append("<div>" + _figure_div(fig) + "</div>")
            out.append("</div>")
    verdict = ("<b>Pre-release check: the model is worse than the reference in at least one slice.</b>"
               if worse_any else "<b>Pre-release check: no slice is worse than the reference.</b>")
    out.insert(1, f"<p class='note'>{verdict}</p>")
    return "".join(out)


def write_report(text: str, path: str | os.PathLike) -> Path:
    """Write the report through a temporary file: a failure never leaves half a report."""
    from ..data.io import write_atomically

    return write_atomically(path, text)
