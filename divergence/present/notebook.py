"""A table in a notebook: HTML for Jupyter, a short text for a terminal, and its figures.

``SliceTable._repr_html_`` and ``Comparison._repr_html_`` (registered by ``divergence/__init__``:
a table cannot import what reads it) show, per metric, the whole dataset's value with its interval,
the distinct findings in words (the dashboard's cards), the first rows of the default order with
their verdicts, and the notes. ``table.plot`` and ``comparison.plot`` draw with the functions the
dashboard and the report draw with, as :class:`NotebookFigure`: beside Plotly's JSON (JupyterLab draws
it), a form an HTML export (nbconvert) and a repository's notebook viewer show offline. Every value
from the data is escaped.
"""
from __future__ import annotations

import base64
import html
import json
from collections.abc import Iterable

import pandas as pd
import plotly.graph_objects as go

from ..comparison.compare import Comparison
from ..explain.shapley import item_contributions
from ..table import MetricStatistics, SliceTable
from .cards import findings, headline
from .compare_views import change_interval_figure, compare_display_frame, compare_headline, worst_slice
from .figures import contribution_figure, interval_figure, item_values_figure, lattice_figure, slice_table_figure
from .formats import format_count, format_interval, format_value
from .views import display_frame

__all__ = ["table_html", "table_text", "comparison_html", "statistics_html", "TablePlots", "ComparisonPlots",
           "ROWS_SHOWN", "NotebookFigure", "PLOTLY_MIME"]

#: rows of the default order a notebook shows per metric
ROWS_SHOWN = 10
#: notes listed before the rest are counted
NOTES_SHOWN = 8

_STYLE = ("<style>.dv-table td,.dv-table th{text-align:left;padding:2px 8px;font-size:12px}"
          ".dv-card{margin:4px 0 4px 0;padding:4px 8px;border-left:4px solid #868e96}</style>")


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _assessed(table: SliceTable, m: str) -> bool:
    return table.statistics(m).verdict is not None


def table_text(table: SliceTable) -> str:
    """A few lines for a terminal: the table's size, and per metric the whole dataset's value and
    the distinct findings' count and first itemset."""
    lines = [f"SliceTable({len(table):,} itemsets incl. the whole dataset, {table.n_rows:,} rows, "
             f"metrics {', '.join(table.metric_names)}, min_support={table.min_support:g})"]
    for m in table.metric_names:
        h = headline(table, m)
        line = f"  {h['label']}: {format_value(h['overall'], h['binary'])} on the whole dataset"
        verdict = table.statistics(m).verdict
        if verdict is not None:  # assessed
            first = table.findings(m)
            line += (f"; {len(first)} distinct finding{'s' if len(first) != 1 else ''}"
                     + (f", first {first['itemset'].iloc[0]!r} ({verdict[first.index[0]]})" if len(first) else ""))
        lines.append(line)
    return "\n".join(lines)


def table_html(table: SliceTable, rows: int = ROWS_SHOWN) -> str:
    """The table in a notebook: per metric the whole dataset, the findings in words, the first rows
    of the default order, then the notes."""
    parts = [_STYLE, f"<div class='dv'><p><b>Slice table</b>: {format_count(len(table) - 1)} slices of "
                     f"{format_count(table.n_rows)} rows, support {_e(table.support_text)}, metrics "
                     f"{_e(', '.join(table.metric_names))}</p>"]
    for m in table.metric_names:
        parts.append(_metric_html(table, m, rows))
    parts.append(_notes_html(table.notes))
    parts.append("</div>")
    return "".join(parts)


def _metric_html(table: SliceTable, m: str, rows: int) -> str:
    h = headline(table, m)
    out = [f"<h4>{_e(h['label'])}</h4><p>Whole dataset: <b>{_e(format_value(h['overall'], h['binary']))}</b>"]
    if h["overall_low"] == h["overall_low"]:  # not NaN
        out.append(f" {_e(format_interval(h['overall_low'], h['overall_high'], h['binary']))}")
    out.append("</p>")
    if not _assessed(table, m):
        out.append("<p>Not assessed: no q-values, verdicts or findings (<code>divergence.assess(table)</code> "
                   "adds them).</p>")
    else:
        cards, total = findings(table, m)
        distinct = [c for c in cards if c.distinct]
        if distinct:
            out.append(f"<p>{len(distinct)} distinct finding{'s' if len(distinct) != 1 else ''}"
                       + (f" (of {total})" if total > len(distinct) else "") + ":</p>")
            for c in distinct:
                out.append(f"<div class='dv-card' style='border-left-color:{_e(c.color)}'><b>{_e(c.itemset)}</b> "
                           f"· {_e(c.verdict)}<br>{_e(c.who)} {_e(c.what)}<br><small>{_e(c.sure)}</small></div>")
        else:
            out.append("<p>No distinct finding: no slice differs from the whole dataset at the scan's bar.</p>")
    top = table.top(rows, metric=m)
    shown = display_frame(table, top, m)
    out.append(f"<p>The first {len(top)} slices in the default order:</p>")
    out.append(shown.to_html(index=False, escape=True, classes="dv-table", border=0))
    return "".join(out)


def _notes_html(notes: Iterable[str]) -> str:
    notes = list(notes)
    if not notes:
        return ""
    items = "".join(f"<li>{_e(n)}</li>" for n in notes[:NOTES_SHOWN])
    more = f"<li>… and {len(notes) - NOTES_SHOWN} more (<code>table.notes</code>)</li>" if len(notes) > NOTES_SHOWN else ""
    return f"<details><summary>Notes ({len(notes)})</summary><ul>{items}{more}</ul></details>"


def statistics_html(stats: MetricStatistics, rows: int = ROWS_SHOWN) -> str:
    """One metric's typed statistics: its name, the whole dataset's value, the first rows."""
    frame = pd.DataFrame({k: v[:rows] for k, v in (("itemset", stats.itemsets), ("value", stats.value),
                                                     ("count", stats.count), ("divergence", stats.divergence),
                                                     ("q", stats.q), ("verdict", stats.verdict)) if v is not None})
    return (f"<div class='dv'><p><b>{_e(stats.name)}</b> ({_e(stats.info.description)}), "
            f"{format_count(len(stats.value))} itemsets; the first {min(rows, len(stats.value))} in the table's order:</p>"
            + frame.to_html(index=False, escape=True, border=0) + "</div>")


def comparison_html(c: Comparison, rows: int = ROWS_SHOWN) -> str:
    """A comparison in a notebook: per metric the whole dataset's change, the worst slice and the
    first rows of the default order, then the notes."""
    parts = [_STYLE, f"<div class='dv'><p><b>Comparison</b>: {format_count(len(c) - 1)} slices of "
                     f"{format_count(c.n_rows)} rows, metrics {_e(', '.join(c.metric_names))}</p>"]
    for m in c.metric_names:
        h = compare_headline(c, m)
        parts.append(f"<h4>{_e(h.get('label', m))}</h4>")
        worst = worst_slice(c, m)
        if len(worst):
            parts.append(f"<p>Worst slice: <b>{_e(worst['itemset'].iloc[0])}</b></p>")
        top = c.top(rows, metric=m)
        parts.append(compare_display_frame(c, top, m).to_html(index=False, escape=True, classes="dv-table", border=0))
    parts.append(_notes_html(c.notes))
    parts.append("</div>")
    return "".join(parts)


#: Plotly's own notebook MIME type (JupyterLab and VS Code draw it; an export and GitHub do not)
PLOTLY_MIME = "application/vnd.plotly.v1+json"
#: whether this process has sent plotly.js in a figure's HTML already (a notebook embeds it once)
_PLOTLYJS = {"sent": False}
#: the width a figure is drawn at as an image in a notebook, in CSS pixels (drawn at twice the pixels)
NOTEBOOK_WIDTH = 960


class NotebookFigure(go.Figure):
    """A Plotly figure whose notebook output survives an export: Plotly's JSON for JupyterLab, and a PNG
    (kaleido and the machine's Chromium; no download) that nbconvert's HTML and a repository's notebook
    viewer show; where no PNG can be drawn, HTML with plotly.js embedded (once per kernel: the first
    figure carries the library, the later ones use it), which an HTML export shows offline."""

    def _repr_mimebundle_(self, include: object = None, exclude: object = None, **kwargs: object) -> dict:
        bundle: dict = {PLOTLY_MIME: json.loads(self.to_json()), "text/plain": self._title_text()}
        png = self._png()
        if png is not None:
            bundle["image/png"] = base64.b64encode(png).decode("ascii")
        else:
            bundle["text/html"] = self.to_html(full_html=False, include_plotlyjs=not _PLOTLYJS["sent"],
                                               config={"displaylogo": False, "responsive": True})
            _PLOTLYJS["sent"] = True
        return bundle

    def _ipython_display_(self) -> None:
        """IPython shows this bundle (Plotly's own display goes through its renderers: JSON only)."""
        from IPython.display import display

        display(self._repr_mimebundle_(), raw=True)

    def _title_text(self) -> str:
        title = self.layout.title.text if self.layout.title and self.layout.title.text else "a figure"
        return f"<divergence figure: {html.unescape(str(title)).replace('<br>', ' ')}>"

    def _png(self) -> bytes | None:
        """The figure as PNG, or None where it cannot be drawn here (no kaleido or Chromium, or too slow)."""
        from ..errors import DivergenceInputError
        from .export import figure_png, png_supported

        if not png_supported():
            return None
        try:
            return figure_png(self, width=NOTEBOOK_WIDTH, scale=2.0)
        except (DivergenceInputError, RuntimeError, OSError, ValueError):
            return None


def _notebook(fig: go.Figure) -> NotebookFigure:
    return NotebookFigure(fig)


class TablePlots:
    """``table.plot``: the dashboard's and the report's figures of this table, as Plotly figures
    (:class:`NotebookFigure`: they survive a notebook's export)."""

    def __init__(self, table: SliceTable):
        self._table = table

    def intervals(self, metric: str | None = None, k: int = 20) -> NotebookFigure:
        """The first ``k`` slices of the default order, each interval against the whole dataset's."""
        t = self._table
        m = t.metric(metric).name
        level = f"{t.assessment.confidence if t.assessment is not None else 0.95:.0%} intervals"
        return _notebook(interval_figure(t, t.top(k, metric=m), m, level_label=level))

    def shapley(self, itemset: str, metric: str | None = None) -> NotebookFigure:
        """How each item of ``itemset`` contributes to its divergence (Shapley values)."""
        t = self._table
        info = t.metric(metric)
        return _notebook(contribution_figure(item_contributions(t, itemset, metric=info.name), binary=info.binary))

    def slices(self, metric: str | None = None, k: int = 20) -> NotebookFigure:
        """The first ``k`` slices of the default order as a table, verdicts coloured."""
        t = self._table
        m = t.metric(metric).name
        return _notebook(slice_table_figure(display_frame(t, t.top(k, metric=m), m)))

    def lattice(self, itemset: str, metric: str | None = None) -> NotebookFigure:
        """Every subset of ``itemset``, the whole dataset on top, coloured by its divergence; squares at
        least δ (the minimum size's) from the whole dataset (the Export page's lattice)."""
        t = self._table
        m = t.metric(metric).name
        size = t.assessment.min_size.get(m) if t.assessment is not None else None
        return _notebook(lattice_figure(t, itemset, metric=m, threshold=size.delta if size is not None else None))

    def items(self, metric: str | None = None, value: str = "global") -> NotebookFigure:
        """Each item's divergence: ``global``, its Shapley value over every slice holding it, or
        ``individual``, the divergence of the item alone (the Export page's item figures)."""
        from ..explain.shapley import global_divergence

        t = self._table
        info = t.metric(metric)
        return _notebook(item_values_figure(global_divergence(t, metric=info.name), value=value, metric=info.name,
                                            binary=info.binary))


class ComparisonPlots:
    """``comparison.plot``: the Compare page's figures."""

    def __init__(self, c: Comparison):
        self._c = c

    def change(self, metric: str | None = None, k: int = 20) -> NotebookFigure:
        """Each of the first ``k`` slices' change (model − reference) with its interval, against zero."""
        c = self._c
        m = c.metric(metric).name
        return _notebook(change_interval_figure(c, c.top(k, metric=m), m))
