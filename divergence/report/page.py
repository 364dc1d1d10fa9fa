"""The report's page: a scanned table (and the plan's comparison) as one self-contained HTML
page (Plotly's JavaScript embedded, no network), which a reader can sort; running the plan is
:mod:`divergence.report.run`.

The page is the Jinja2 template ``templates/report.html.j2`` (with ``parts.html.j2``,
``comparison.html.j2``, the page's CSS and its sorting script), rendered with autoescaping: this
module gathers what the page says (plain text and numbers formatted by :mod:`divergence.present.formats`)
and every value reaches the page escaped. The Plotly figures and Plotly's JavaScript are the only
markup passed in, marked safe in :func:`_figure_div` and :func:`_plotly_js`.

    python -m divergence report PLAN DATA [--previous PREVIOUS_DATA] --output report.html
"""
from __future__ import annotations

import datetime as _dt
import functools
import html
import math
import os
import re
from pathlib import Path
from typing import Any, NamedTuple

import jinja2
import jinja2.ext
import numpy as np
import pandas as pd
from markupsafe import Markup

from ..budget import TIME_CUT
from ..errors import DivergenceInputError
from ..present.formats import (
    COMPARE_VERDICT_COLORS,
    FINDING_VERDICTS,
    column_help,
    family_sentence,
    finding_label,
    format_count,
    format_divergence,
    format_interval,
    format_number,
    format_p,
    format_value,
    ink_on,
    verdict_color,
    verdict_ink,
    verdict_label,
    verdict_legend,
)
from ..table import MetricStatistics, SliceTable
from ..vocabulary import PEER_SORTS, REPORT_SORTS
from .plan import SlicePlan, plan_hash

__all__ = ["build_report", "write_report"]


# ----------------------------------------------------------------------------- the template

class _OneLine(jinja2.ext.Extension):
    """The templates are written a tag to a line; the page is one line, as the report always was:
    in a ``.j2`` template a line break and the spaces around it are not output, except inside the
    style and script elements (the CSS and the sorting script keep their lines)."""

    _KEEP = re.compile(r"(<(?:style|script)\b[^>]*>.*?</(?:style|script)>)", re.S)
    _BREAK = re.compile(r"[ \t]*\n\s*")

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        if not (name or "").endswith(".j2"):
            return source
        pieces = self._KEEP.split(source)  # odd pieces: the kept elements
        return "".join(p if i % 2 else self._BREAK.sub("", p) for i, p in enumerate(pieces))


def _escaped(value: object) -> object:
    """Every value the templates print, escaped as the report always spelled it (``html.escape``:
    ``&#x27;`` and ``&quot;``, where markupsafe writes ``&#39;`` and ``&#34;``, the same characters);
    markup passed in marked safe (the figures) is left as it is."""
    if hasattr(value, "__html__"):
        return value
    return Markup(html.escape(str(value), quote=True))


@functools.cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("divergence.report", "templates"), autoescape=True,
                             finalize=_escaped, undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             extensions=[_OneLine])
    env.filters["format_count"] = format_count
    return env


@functools.cache
def _plotly_js() -> Markup:
    """Plotly's JavaScript, inlined so the page needs no network (trusted: plotly's own file)."""
    from plotly.offline import get_plotlyjs

    return Markup(get_plotlyjs())


def _figure_div(fig) -> Markup:
    """A figure's div (trusted: plotly writes it and escapes the figure's text itself; every string
    of the figure passed through :func:`divergence.present.figures.inert_figure` first)."""
    from ..present.figures import inert_figure

    return Markup(inert_figure(fig).to_html(full_html=False, include_plotlyjs=False,
                              config={"displaylogo": False, "responsive": True}))


class Cell(NamedTuple):
    """One cell of a slice table: its text, the value the table sorts it by (``data-v``), whether it
    is a number (right-aligned), and a verdict badge's (background, ink) colours."""

    text: str
    sort: str
    numeric: bool = False
    badge: tuple[str, str] | None = None


def _sort_value(x: object) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "1" if x else "0"
    try:
        v = float(x)  # type: ignore[arg-type]
        return "" if math.isnan(v) else repr(v)
    except (TypeError, ValueError):
        return str(x)


# ----------------------------------------------------------------------------- the slices

def _sort_key(table: SliceTable, metric: str, sort_by: str | None) -> str:
    """The column suffix the metric's table is sorted by: ``sort_by`` when the table has it,
    else the lift shortfall (error metrics) or the divergence."""
    if sort_by is not None and sort_by not in REPORT_SORTS:
        raise DivergenceInputError(f"The report sorts by one of {', '.join(REPORT_SORTS)}; got {sort_by!r}.")
    stats = table.statistics(metric)
    if sort_by in PEER_SORTS or (sort_by and stats.get(sort_by) is not None):
        return sort_by
    return next(k for k in ("order", "divergence") if stats.column(k) == table.default_sort_column(metric))


def _sorted_rows(table: SliceTable, metric: str, sort_by: str | None = None) -> pd.DataFrame:
    key = _sort_key(table, metric, sort_by)
    if key == "order":
        return table.frame.iloc[table.default_order(metric)]
    if key in PEER_SORTS:  # a peer's score: its column added for this table (divergence.scores)
        from ..scores import sort_column

        table, column = sort_column(table, key, metric)
        values = table.frame[column].to_numpy(dtype=float)[1:]
    else:
        values = np.asarray(table.statistics(metric).get(key), dtype=float)[1:]
    f = table.frame.iloc[1:]
    order = np.lexsort((-f["support"].to_numpy(), np.where(np.isnan(values), np.inf, -values)))
    return f.iloc[order]


def _slice_columns(stats: MetricStatistics, rows: pd.DataFrame,
                   previous: SliceTable | None) -> list[tuple[str, str, str | None]]:
    """The slice table's columns (label, key, kind): those the table has. A key is a statistic of
    ``stats`` (:meth:`MetricStatistics.get`), the slice (``itemset``), its rows (``rows``), a peer's
    score the rows were sorted by, or the previous cycle's verdict."""
    from ..present.formats import metric_label
    from ..scores import SCORE_LABELS

    def has(key: str) -> bool:
        return stats.get(key) is not None

    cols: list[tuple[str, str, str | None]] = [
        ("Slice", "itemset", None), ("Rows", "rows", "n"), ("Measured", "count", "n"),
        (metric_label(stats.name), "value", "v"), ("Interval", "ci_low", "ci"), ("Divergence", "divergence", "d"),
        ("q", "q", "p"),
    ]
    if has("finding"):
        cols += [("Finding", "finding", "finding")]
    if has("divergence_shrunk"):
        cols += [("Shrunk divergence", "divergence_shrunk", "d"), ("Bound nearest zero", "divergence_bound", "d")]
    if has("baseline"):
        cols += [("Baseline", "baseline", "v")]
        if has("harder"):
            cols += [("Harder", "harder", "d")]
        if has("reference"):
            cols += [("Achievable", "reference", "v")]
        cols += [("Lift", "lift", "num"), ("Lift shortfall", "lift_shortfall", "num")]
    if has("replicated"):
        cols += [("Replication", "replicated_value", "v")]
        if has("replicated_divergence"):
            cols += [("Replicated divergence", "replicated_divergence", "d")]
        cols += [("Replicated", "replicated", "bool")]
    cols += [(label, suffix, "num") for suffix, label in SCORE_LABELS.items() if stats.column(suffix) in rows.columns]
    if previous is not None:
        cols += [("Previous cycle", "__previous", "previous")]
    cols += [("Verdict", "verdict", "verdict")]
    return cols


_NUMBER_TEXT = {"n": lambda v, b: format_count(v), "v": format_value, "d": format_divergence,
                "num": lambda v, b: format_number(v), "p": lambda v, b: format_p(v)}


def _previous_verdicts(previous: SliceTable | None, metric: str) -> dict | None:
    """The previous cycle's verdict of each of its slices, by itemset (None without a previous cycle or
    its verdicts of ``metric``)."""
    if previous is None or metric not in previous.metric_names:
        return None
    before = previous.statistics(metric).verdict
    return None if before is None else dict(zip(previous.itemsets, before))


def _slice_table(table: SliceTable, metric: str, rows: pd.DataFrame, previous: SliceTable | None) -> dict:
    """The slice table's heads (label, hover text) and rows of cells."""
    stats = table.statistics(metric)
    b = stats.info.binary
    cols = _slice_columns(stats, rows, previous)
    prev_verdict = _previous_verdicts(previous, metric) or {}
    heads = [("The verdict on the slice in the previous cycle's data." if kind == "previous" else column_help(label))
             for label, _, kind in cols]
    at = rows.index.to_numpy()  # the rows' positions in the table

    def values(key: str) -> list:
        """The column ``key`` at the rows, as plain values (far quicker to read than a row Series)."""
        if key in ("itemset", "rows"):
            return rows["itemset" if key == "itemset" else "count"].tolist()
        found = stats.get(key)
        if found is None:  # a peer's score, computed for the rows it sorted, or a statistic the table lacks
            column = stats.column(key)
            return rows[column].tolist() if column in rows.columns else [None] * len(rows)
        return pd.Series(found).iloc[at].tolist()

    keys = {key for _, key, kind in cols if kind != "previous"}
    keys |= {"ci_high", "explained_by", "within", "alias", "effect", "effect_ci_low", "effect_ci_high",
             "divergence", "q", "meets_min_size"}
    by_key = {key: values(key) for key in keys}
    out = []
    for i in range(len(rows)):
        r = {key: v[i] for key, v in by_key.items()}
        cells = []
        for label, key, kind in cols:
            if kind == "previous":
                pv = prev_verdict.get(r["itemset"])
                text = "not mined" if pv is None else ("finding" if pv in FINDING_VERDICTS else str(pv))
                cells.append(Cell(text, text))
                continue
            v = r[key]
            if kind == "ci":
                lo, hi = r["ci_low"], r["ci_high"]
                cells.append(Cell(format_interval(lo, hi, b), _sort_value(lo), True))
            elif kind in _NUMBER_TEXT:
                cells.append(Cell(_NUMBER_TEXT[kind](v, b), _sort_value(v), True))
            elif kind == "finding":
                effect = (r["effect"], r["effect_ci_low"], r["effect_ci_high"])
                text = finding_label(v, r["explained_by"], r["within"], r["alias"],
                                     effect if effect[0] is not None else None, b)
                cells.append(Cell(text, text))
            elif kind == "bool":
                cells.append(Cell("yes" if bool(v) else "no", _sort_value(v)))
            elif kind == "verdict":
                text = verdict_label(v, r["divergence"], r["q"], r["meets_min_size"])
                cells.append(Cell(text, str(v), badge=(verdict_color(v), verdict_ink(v))))
            else:
                cells.append(Cell(str(v), str(v)))
        out.append(cells)
    return dict(heads=[(label, tip) for (label, _, _), tip in zip(cols, heads)], rows=out)


def _cards(table: SliceTable, metric: str) -> dict:
    """The findings summary of a metric as cards (the app's cards, same words): the header's
    (text, bold) pieces, the cards with their badge's ink, and how many findings there are in all
    when the cards do not show them all."""
    from ..present.cards import FINDING_CARDS, findings, findings_header

    cards, total = findings(table, metric, top=FINDING_CARDS)
    if not cards:
        return dict(cards=[], cards_header=[], cards_more=None)
    pieces = re.split(r"\*\*(.+?)\*\*", findings_header(cards, total))  # markdown bold: the odd pieces
    return dict(cards=[(c, verdict_ink(c.verdict)) for c in cards],
                cards_header=[(p, i % 2 == 1) for i, p in enumerate(pieces) if p],
                cards_more=total if total > len(cards) and not cards[0].distinct else None)


# ----------------------------------------------------------------------------- the page

def build_report(table: SliceTable, *, plan: SlicePlan | None = None, plan_label: str | None = None,
                 data_label: str | None = None, data_modified: float | None = None,
                 previous: SliceTable | None = None, previous_label: str | None = None,
                 top: int = 200, findings: int = 6, title: str | None = None, sort_by: str | None = None,
                 comparison=None) -> str:
    """The report as one self-contained HTML page (every script and style inline); with a
    ``comparison`` (:func:`divergence.report.run.run_comparison`), a section comparing the model
    with its reference comes first: the pre-release check."""
    if table.assessment is None:
        raise DivergenceInputError("A report needs the worst-slice statistics: give it a table from divergence.scan(), "
                                   "or pass a mined table through divergence.assess() first.")
    a = table.assessment
    now = _dt.datetime.now(_dt.UTC).replace(microsecond=0)
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
            ("Data", data_label or "—"), ("Rows", format_count(table.n_rows)),
            ("Minimum support", table.support_text),
            ("Attributes", ", ".join(table.attributes)),
            ("Confidence", f"{a.confidence:.0%}; q-values: "
                           + "; ".join(dict.fromkeys(family_sentence(a, m) for m in table.metric_names))
                           if a.n_tested else f"{a.confidence:.0%}"),
            ("Intervals", a.intervals),
            ("Replication", a.replication or (previous_label and f"previous cycle: {previous_label}") or "none"),
            ("Generated", now.isoformat())]
    page = dict(
        title=title or "Slice report", plotly_js=_plotly_js(), meta=meta,
        time_cut=[n for n in table.notes if n.startswith(TIME_CUT)],  # the table depends on the machine
        notes=[n for n in table.notes if not n.startswith(TIME_CUT)],
        comparison=_comparison_context(comparison, top=top, findings=findings) if comparison is not None else None,
        sections=[_metric_section(table, m, plan=plan, previous=previous, previous_label=previous_label, top=top,
                                  findings=findings, sort_by=sort_by) for m in table.metric_names],
        legend=[(v, colour, verdict_ink(v), text) for v, colour, text in verdict_legend()])
    return _environment().get_template("report.html.j2").render(page)


def _metric_section(table: SliceTable, m: str, *, plan: SlicePlan | None, previous: SliceTable | None,
                    previous_label: str | None, top: int, findings: int, sort_by: str | None) -> dict:
    """What the page says of one metric: the headline, the finding cards, the slice table, the
    previous cycle's tally, the interval and overlap figures and the Shapley charts."""
    from ..explain.adhoc import overlap
    from ..explain.shapley import item_contributions
    from ..present.cards import headline_tiles
    from ..present.figures import contribution_figure, interval_figure, overlap_figure

    a = table.assessment
    assert a is not None  # build_report refuses a table without one
    info = table.metric(m)
    stats = table.statistics(m)
    if stats.q is not None:  # the dashboard's tiles, in the same words: they add up
        kpis = [(t.value, f"{t.label}: {t.caption}" if t.caption else t.label) for t in headline_tiles(table, m)]
        kpis.insert(1, (format_count(len(table) - 1), "slices mined"))
    else:
        assert stats.p is not None  # an assessed table has its p-values
        tested = a.n_tested.get(m, int(pd.notna(stats.p[1:]).sum()))
        lo, hi = table.overall_interval(m) if stats.ci_low is not None else (float("nan"), float("nan"))
        kpis = [(format_value(table.overall(m), info.binary), f"whole dataset {format_interval(lo, hi, info.binary)}"),
                (format_count(len(table) - 1), "slices mined"), (format_count(tested), "slices tested"),
                (format_count(0), "significant after correction")]  # no q-values: nothing is significant
    ms = a.min_size.get(m)
    section: dict[str, Any] = dict(
        metric=m, description=info.description or m, kpis=kpis, findings_cut=a.findings_cut.get(m),
        min_size=" ".join(t for t in (ms.text, ms.power_text) if t) if ms else None, cards=None)
    if stats.verdict is not None:
        section.update(_cards(table, m))
    rows = _sorted_rows(table, m, sort_by)
    listed_rows = [table.lookup(x) for x in (getattr(plan, "slices", None) or [])]
    shown_rows = rows.head(top)
    extra = [i for i in dict.fromkeys(listed_rows) if i not in set(shown_rows.index)]
    if extra:  # a pre-listed slice is reported whatever its place in the order
        shown_rows = pd.concat([shown_rows, table.frame.iloc[extra]])
    section.update(sort_name=REPORT_SORTS[_sort_key(table, m, sort_by)], n_listed=min(top, len(rows)),
                   n_rows=len(rows), **_slice_table(table, m, shown_rows, previous), previous=None,
                   intervals=None, overlap=None, contributions=[])
    at = rows.index.to_numpy()  # the rows' positions in the table
    finding = None if stats.finding is None else stats.finding[at].astype(bool)
    found_verdict = None if stats.verdict is None else np.isin(stats.verdict[at], list(FINDING_VERDICTS))
    prev = _previous_verdicts(previous, m) if found_verdict is not None else None
    if prev is not None:
        # counted over the distinct findings, the set the page's tiles count (whatever their verdict now)
        now_f = rows[finding] if finding is not None else rows[found_verdict]
        section["previous"] = dict(label=previous_label or "",
                                   held=sum(prev.get(s) in FINDING_VERDICTS for s in now_f["itemset"]),
                                   new=sum(prev.get(s) not in FINDING_VERDICTS for s in now_f["itemset"]))
    if stats.ci_low is not None:
        level = f"{a.confidence:.0%} intervals"
        big = rows[stats.meets_min_size[at].astype(bool)] if stats.meets_min_size is not None else rows
        # every distinct finding is drawn (open dots below the minimum size), then the largest slices
        distinct = rows[finding] if finding is not None else rows.head(0)
        drawn = rows.loc[[i for i in rows.index if i in set(distinct.index) | set(big.head(25).index)]]
        if len(drawn):
            section["intervals"] = dict(n=len(drawn), n_findings=len(distinct),
                                        figure=_figure_div(interval_figure(table, drawn, m, level_label=level)))
    top_found = rows[found_verdict].head(10) if found_verdict is not None else rows.head(0)
    if len(top_found) >= 2:
        section["overlap"] = dict(n=len(top_found),
                                  figure=_figure_div(overlap_figure(overlap(table, list(top_found["itemset"])))))
    if finding is not None and found_verdict is not None:  # the distinct findings first (rows are in the default order)
        found = rows[finding & found_verdict].head(findings)
    else:
        found = rows[found_verdict].head(findings) if found_verdict is not None else rows.head(0)
    listed = [s for s in (getattr(plan, "slices", None) or [])]
    shown = list(found["itemset"]) + [table.frame.iloc[table.lookup(s)]["itemset"] for s in listed]
    section["contributions"] = [_figure_div(contribution_figure(item_contributions(table, s, metric=m),
                                                                binary=info.binary))
                                for s in dict.fromkeys(shown) if s]
    section["evaluated"] = _evaluated(table, [s for s in found["itemset"] if s])
    return section


#: the known metrics' names as the report heads them
_EVALUATE_HEADS = {"auc": "AUC", "average_precision": "Average precision", "f1": "F1",
                   "balanced_accuracy": "Balanced accuracy"}


def _evaluated(table: SliceTable, itemsets: list[str]) -> dict | None:
    """The known metrics (AUC, F1…) on the findings' own rows with their bootstrap intervals, the whole
    dataset first (``SliceTable.evaluate``); None when the result cannot compute them."""
    from ..stats.evaluate import known_names

    names = known_names(table)
    if not names or not itemsets:
        return None
    a = table.assessment
    frame = table.evaluate({n: n for n in names}, slices=itemsets, bootstrap=200, seed=a.seed if a else 0)
    rows = []
    for _, r in frame.iterrows():
        cells = [f"{format_number(r[n])} [{format_number(r[f'{n}_low'])}, {format_number(r[f'{n}_high'])}]"
                 + ("" if not r["itemset"] else f" ({'+' if r[f'{n}_divergence'] > 0 else ''}"
                                                f"{format_number(r[f'{n}_divergence'])})") for n in names]
        rows.append((r["itemset"] or "whole dataset", format_count(r["rows"]), cells))
    return dict(heads=[_EVALUATE_HEADS[n] for n in names], rows=rows, bootstrap=frame.attrs["bootstrap"],
                seed=frame.attrs["seed"], level=f"{frame.attrs['confidence']:.0%}")


def _comparison_context(c, *, top: int, findings: int) -> dict:
    """What the comparison section says: per metric the whole dataset's change and verdict, the
    count of slices per verdict, the slices sorted worst first, the change intervals against zero
    and the Shapley chart of the worst slices' change."""
    from ..present.compare_views import (
        change_contribution_figure,
        change_interval_figure,
        compare_display_frame,
        compare_headline,
        compare_view,
    )

    a = c.assessment
    sections = []
    worse_any = False
    for m in c.metric_names:
        h = compare_headline(c, m)
        b = h["binary"]
        worse_any |= h["verdicts"]["worse"] > 0 or h["verdict"] == "worse"
        kpis = [(format_value(h["model"], b), "model, whole dataset"), (format_value(h["reference"], b), "reference"),
                (format_divergence(h["change"], b),
                 f"change [{format_divergence(h['change_low'], b)}, {format_divergence(h['change_high'], b)}]: "
                 f"{h['verdict']}")]
        kpis += [(format_count(h["verdicts"][v]), f"slices {v}") for v in ("worse", "better", "no change", "too small")]
        rows = compare_view(c, m, top_n=top)
        shown = compare_display_frame(c, rows, m)
        table_rows = []
        cs = c.statistics(m)
        at = shown.index.to_numpy()  # the rows' positions in the comparison
        sort_keys = {"Rows": c.frame["count"], "Change": cs.change, "q": cs.change_q, f"Model {h['label']}": cs.value,
                     f"Reference {h['label']}": cs.reference, "Change interval": cs.change_ci_low}
        sort_values = {label: pd.Series(v).iloc[at].tolist() for label, v in sort_keys.items()}
        for i, r in enumerate(shown.to_dict("records")):
            sort = {label: v[i] for label, v in sort_values.items()}
            cells = []
            for col in shown.columns:
                text = r[col]
                if col == "Verdict":
                    colour = COMPARE_VERDICT_COLORS.get(str(text).split(" · ")[0], "#495057")
                    cells.append(Cell(str(text), str(text), badge=(colour, ink_on(colour))))
                else:
                    cells.append(Cell(str(text), _sort_value(sort.get(col, text)), col not in ("Slice", "Min size")))
            table_rows.append(cells)
        at = rows.index.to_numpy()
        big = rows[np.asarray(cs.meets_min_size, dtype=bool)[at]].head(25)
        worst = rows[np.asarray(cs.verdict)[at] == "worse"].head(findings)
        sections.append(dict(
            metric=m, description=h["description"], worse_when=h["worse_when"], kpis=kpis,
            min_size=h["min_size"].text, n_listed=len(rows), n_rows=len(c) - 1,
            heads=[(col, None) for col in shown.columns], rows=table_rows,
            intervals=dict(n=len(big), figure=_figure_div(change_interval_figure(c, big, m))) if len(big) else None,
            contributions=[_figure_div(change_contribution_figure(c.contributions(s, m), binary=b))
                           for s in worst["itemset"]]))
    return dict(model=a.model, reference=a.reference, rows=a.rows_compared, n_tested=c.n_tested,
                correction=a.correction, confidence=f"{a.confidence:.0%}", worse_any=worse_any,
                sections=sections)


def write_report(text: str, path: str | os.PathLike) -> Path:
    """Write the report through a temporary file: a failure never leaves half a report."""
    from ..data.io import write_atomically

    return write_atomically(path, text)
