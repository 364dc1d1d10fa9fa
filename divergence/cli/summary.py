"""The scan's summary on the command line, for a person in an 80-120-column terminal: no line
longer than :data:`WIDTH`, rates as percentages with their interval (``23.8% [21.0, 26.9]``),
divergences in points, q-values to two significant figures, and the verdict and finding words.
The raw floats stay in the CSV (``--output``)."""
from __future__ import annotations

import math
import textwrap

from ..present.formats import finding_label, format_count, format_number, is_undefined, verdict_label

__all__ = ["WIDTH", "scan_summary", "evaluation_summary", "format_rate_interval", "format_points", "format_q", "wrap"]

#: the longest line the summary prints
WIDTH = 120
#: how far a slice's figures are indented under its itemset
INDENT = "    "


def wrap(text: str, indent: str = "", next_indent: str | None = None, width: int = WIDTH) -> list[str]:
    """``text`` cut at spaces into lines of at most ``width`` characters (a word longer than a line is
    cut inside); later lines get ``next_indent`` (default: ``indent`` and two spaces)."""
    later = indent + "  " if next_indent is None else next_indent
    return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=later,
                         break_on_hyphens=False, break_long_words=True) or [indent.rstrip()]


def _percent(x: float) -> str:
    """A share as a percentage number without the sign, one decimal (two below 1%): 0.2379 -> '23.8'."""
    v = 100 * float(x)
    return f"{v:.2f}" if 0 < abs(v) < 1 else f"{v:.1f}"


def format_rate_interval(value: object, low: object, high: object, binary: bool) -> str:
    """A value with its interval: a rate as ``23.8% [21.0, 26.9]`` (the interval in percent too),
    anything else with 3 significant digits, ``12.3 [11.9, 12.8]``; without an interval, the value."""
    if is_undefined(value):
        return "—"
    text = f"{_percent(value)}%" if binary else format_number(value)  # type: ignore[arg-type]
    if is_undefined(low) or is_undefined(high):
        return text
    if binary:
        return f"{text} [{_percent(low)}, {_percent(high)}]"  # type: ignore[arg-type]
    return f"{text} [{format_number(low)}, {format_number(high)}]"


def format_points(x: object, binary: bool) -> str:
    """A signed divergence: of a rate in percentage points, ``+13.6 points``; else ``divergence +1.23``."""
    if is_undefined(x):
        return "—"
    x = float(x)  # type: ignore[arg-type]
    if binary:
        return f"{100 * x:+.1f} points" if abs(100 * x) >= 0.05 or x == 0 else f"{100 * x:+.2g} points"
    sign = "+" if x > 0 else ("-" if x < 0 else "")
    return f"divergence {sign}{format_number(abs(x))}"


def format_q(q: object) -> str:
    """A p- or q-value to two significant figures: ``0.0043``, ``1.1e-35``; a value that underflowed
    to 0 is ``< 1e-300`` (never ``0.000000e+00``)."""
    if is_undefined(q):
        return "—"
    q = float(q)  # type: ignore[arg-type]
    if q <= 0:
        return "< 1e-300"
    if q < 1e-4:
        mantissa, exp = f"{q:.1e}".split("e")
        return f"{mantissa}e{int(exp)}"
    return f"{q:.2g}"


def _slice_lines(table, row, m, binary: bool, extra: str | None, stats=None) -> list[str]:
    """One slice: its itemset on the first line, its figures under it, then what else it is (``stats``: the
    table's statistics of the metric, when the caller has them)."""
    name = m.name
    stats = table.statistics(name) if stats is None else stats
    i = int(row.name)  # the slice's position in the table

    def at(key: str, default: object = None) -> object:
        """The slice's ``key`` (a statistic of the metric), as a plain value; ``default`` when the table has none."""
        values = stats.get(key)
        return default if values is None else _plain(values[i])

    itemset = str(row["itemset"]) or "(whole dataset)"
    lines = wrap(itemset, indent="  ", next_indent="  " + INDENT)
    parts = [f"{name} {format_rate_interval(at('value'), at('ci_low'), at('ci_high'), binary)}",
             format_points(at("divergence"), binary)]
    if stats.q is not None:
        parts.append(f"q {format_q(at('q'))}")
    parts.append(f"{format_count(row['count'])} rows ({_percent(row['support'])}%)")
    if stats.verdict is not None:
        parts.append(verdict_label(at("verdict"), None, None, at("meets_min_size")))
    if stats.finding is not None:
        effect = (at("effect"), at("effect_ci_low"), at("effect_ci_high"))
        found = finding_label(at("finding"), at("explained_by", ""), at("within", ""), at("alias", ""),
                              effect if effect[0] is not None else None, binary)
        if found:
            parts.append(found)
    if extra:
        parts.append(extra)
    lines += wrap("; ".join(parts), indent="  " + INDENT)
    if not table.exhaustive:  # the same rows under other descriptions
        same = ", ".join(table.implied_items(int(row.name)))
        if same:
            lines += wrap(f"same rows as {same}", indent="  " + INDENT)
    return lines


def _plain(value: object) -> object:
    """A NumPy scalar as Python's own (as a row of a frame gives it); anything else as it is."""
    item = getattr(value, "item", None)
    return item() if callable(item) and not isinstance(value, str) else value


def _sort_value(row, by: str) -> str:
    v = row.get(by)
    if isinstance(v, float) and not math.isnan(v) and by.endswith(("_p", "_q")):
        return f"{by} {format_q(v)}"
    return f"{by} {format_number(v) if isinstance(v, (int, float)) else v}"


def scan_summary(table, top: int, keep: dict | None = None, sort_by: str | None = None) -> str:
    """The scan's summary per metric: the whole dataset's value, the headline (slices tested,
    significant, distinct findings, verdicts) and the first ``top`` slices in the default order or
    by ``sort_by`` (``keep``: per metric, a boolean mask of the rows to show, e.g. after pruning)."""
    from ..present.cards import headline, headline_tiles
    from ..scores import sort_column

    what = "slices" if table.exhaustive else "slices (distinct sets of rows)"
    lines = wrap(f"{table.n_rows:,} rows, {len(table) - 1:,} {what} with support >= {table.support_text}")
    for m in table.metrics:
        h = headline(table, m.name)
        binary = bool(m.binary)
        lines.append("")
        lines += wrap(f"{m.name} ({m.description}): whole dataset "
                      f"{format_rate_interval(h['overall'], h['overall_low'], h['overall_high'], binary)}")
        if table.assessment is not None:  # the dashboard's headline, in the same words
            tiles = headline_tiles(table, m.name, h)[1:]
            for t in tiles:
                lines += wrap(f"{t.label.lower()} {t.value}" + (f" ({t.caption})" if t.caption else ""), indent="  ",
                              next_indent="    ")
            cut = table.assessment.findings_cut.get(m.name)
            if cut:
                lines += wrap(f"note: {cut}", indent="  ", next_indent="    ")
        if len(table) <= 1:
            lines += wrap(f"no slice reaches the minimum support ({table.support_text}): lower --min-support.")
            continue
        by = None
        if sort_by is None:
            rows = table.top(top if keep is None else len(table), metric=m.name)
            order = "in the default order (distinct findings first)"
        else:
            sorted_table, by = sort_column(table, sort_by, m.name)
            ascending = by is not None and by.endswith(("_p", "_q", "_order"))
            rows = sorted_table.top(top if keep is None else len(table), by=by, metric=m.name, ascending=ascending)
            table_for_rows = sorted_table
            order = (f"by {by or sort_by} ({'smallest' if ascending else 'largest'} first)" if by is not None
                     else "in the default order (distinct findings first)")
        rows = rows if keep is None else rows[keep[m.name][rows.index]].head(top)
        stats = table.statistics(m.name)
        shown_cols = {stats.column(k) for k in ("value", "divergence", "q", "verdict")} | {"count", "support"}
        extra_col = by if by is not None and by not in shown_cols else None
        lines += wrap(f"first {len(rows)} {order}:")
        source = table if sort_by is None else table_for_rows
        source_stats = source.statistics(m.name)  # read once for every row shown
        for i, row in rows.iterrows():
            extra = _sort_value(row, extra_col) if extra_col is not None and extra_col in row else None
            lines += _slice_lines(source, row, m, binary, extra, source_stats)
    return "\n".join(lines)


def evaluation_summary(frame) -> str:
    """``SliceTable.evaluate``'s table for a person: per slice its itemset, then each metric's value with
    its bootstrap interval and its divergence from the whole dataset, and the rows used."""
    names = [c for c in frame.columns if c not in ("itemset", "rows") and not c.endswith(("_low", "_high", "_divergence"))]
    a = frame.attrs
    lines = [""]
    lines += wrap(f"evaluated on each slice's own rows ({', '.join(names)}): the whole dataset, then the findings and "
                  f"the first slices of the default order; {a.get('confidence', 0.95):.0%} intervals from "
                  f"{a.get('bootstrap', 0)} bootstrap resamples (seed {a.get('seed', 0)}); in parentheses the divergence from the "
                  "whole dataset")
    for _, row in frame.iterrows():
        lines += wrap(str(row["itemset"]) or "(whole dataset)", indent="  ", next_indent="  " + INDENT)
        parts = []
        for n in names:
            text = f"{n} {format_rate_interval(row[n], row.get(f'{n}_low'), row.get(f'{n}_high'), False)}"
            if row["itemset"]:
                d = row[f"{n}_divergence"]
                text += f" ({'+' if d > 0 else ''}{format_number(d)})" if not is_undefined(d) else ""
            parts.append(text)
        parts.append(f"{format_count(row['rows'])} rows")
        lines += wrap("; ".join(parts), indent="  " + INDENT)
    return "\n".join(lines)
