"""Plotly figures built by the engine, so the app and the HTML report draw the same picture.

Every function returns a ``plotly.graph_objects.Figure`` and has no other effect. No
Streamlit here. Each builder is self-contained. The slice table and the intervals against the whole
dataset come last.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..errors import DivergenceInputError
from ..table import SliceTable
from .formats import (
    figure_label,
    format_count,
    format_divergence,
    format_interval,
    format_threshold,
    format_value,
    is_undefined,
    plotly_text,
    rgba,
    verdict_color,
    wrap_itemset,
)

__all__ = ["contribution_figure", "item_values_figure", "lattice_figure", "overlap_figure", "slice_table_figure",
           "interval_figure", "add_interval_traces", "axis_range", "interval_layout", "inert_figure", "TABLE_CHAR_PX",
           "TABLE_MEAN_CHAR_PX"]

#: bar colours: contributions that raise the metric, and those that lower it
RAISES_COLOR = "#c0392b"
LOWERS_COLOR = "#2471a3"
#: largest itemset whose lattice is drawn (2^k nodes)
LATTICE_MAX_ITEMS = 8


def _label(metric: str) -> str:
    """A metric as the app and the report name it: 'fpr' -> 'FPR', 'abs_error' -> 'abs error'; escaped
    for Plotly (an outcome column's name is text from the data)."""
    return figure_label(metric)


#: a '<' that does not open the figures' own markup (Plotly's ``<br>``, ``<b>``, ``<sup>``, ``<sub>``,
#: ``<i>``, a hover's ``<extra>``): any other came from the data (``<a href>`` would be a live link)
_NOT_OURS = re.compile(r"<(?!/?(?:br|b|sup|sub|i|extra)>)")


def _inert(obj):
    """``obj`` (a figure's JSON) with :data:`_NOT_OURS` written as ``&lt;`` in every string; None when
    nothing changed."""
    if isinstance(obj, str):
        return _NOT_OURS.sub("&lt;", obj) if _NOT_OURS.search(obj) else None
    if isinstance(obj, dict):
        changed = {k: _inert(v) for k, v in obj.items()}
        return {k: obj[k] if v is None else v for k, v in changed.items()} if any(
            v is not None for v in changed.values()) else None
    if isinstance(obj, (list, tuple)) or (isinstance(obj, np.ndarray) and obj.dtype == object):
        items = list(obj.ravel()) if isinstance(obj, np.ndarray) else list(obj)
        inert = [_inert(v) for v in items]
        if all(v is None for v in inert):
            return None
        out = [o if v is None else v for o, v in zip(items, inert)]
        return np.array(out, dtype=object).reshape(obj.shape) if isinstance(obj, np.ndarray) else out
    return None


def inert_figure(fig: go.Figure) -> go.Figure:
    """``fig`` as it may leave the program (the HTML report, an exported page or image): every ``<``
    in its text that does not open the figures' own markup shown as the character. The builders escape
    text from the data themselves (:func:`plotly_text`); this guard catches a string one of them
    missed, so no figure anywhere carries a live link. ``fig`` itself when nothing needed it."""
    cleaned = _inert(fig.to_plotly_json())
    return fig if cleaned is None else go.Figure(cleaned)


def _scale(binary: bool) -> float:
    """Divergences of a rate are drawn in percentage points (one unit everywhere)."""
    return 100.0 if binary else 1.0


#: the look of a standalone figure (an exported page); ``template=None`` leaves the style to the
#: host (the dashboard's light or dark theme) and skips copying the template (about 0.1 s a figure)
TEMPLATE = "plotly_white"


def _bars(frame: pd.DataFrame, value: str, *, metric: str, title: str,
          low: str | None = None, high: str | None = None, x_title: str = "", binary: bool = False,
          template: str | None = TEMPLATE) -> go.Figure:
    """Horizontal bars sorted by value (largest on top), coloured by sign; a rate's values in pp."""
    f = frame.dropna(subset=[value]).sort_values(value, ascending=True, kind="stable")
    k = _scale(binary)
    fig = go.Figure()
    for positive, color, name in ((True, RAISES_COLOR, f"raises {metric}"),
                                  (False, LOWERS_COLOR, f"lowers {metric}")):
        part = f[f[value] > 0] if positive else f[~(f[value] > 0)]
        if part.empty:
            continue
        error_x = None
        if low and high and low in part and high in part:
            error_x = dict(type="data", symmetric=False, array=(k * (part[high] - part[value])).to_numpy(),
                           arrayminus=(k * (part[value] - part[low])).to_numpy(), color="#868e96", thickness=1.2)
        fig.add_trace(go.Bar(
            x=k * part[value], y=part["item"].map(plotly_text), orientation="h", name=name, marker_color=color,
            error_x=error_x, customdata=[format_divergence(v, binary) for v in part[value]],
            hovertemplate="%{y}: %{customdata}<extra></extra>",
        ))
    fig.update_layout(
        title=dict(text=title), barmode="relative", **({"template": template} if template else {}),
        height=max(220, 60 + 28 * len(f)), margin=dict(l=10, r=10, t=60, b=40),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
    )
    # keep the sorted order on the y axis whatever the trace split
    fig.update_yaxes(categoryorder="array", categoryarray=f["item"].map(plotly_text).tolist(), automargin=True)
    fig.update_xaxes(title_text=x_title + (" (pp)" if binary else ""), zeroline=True, zerolinewidth=1.5,
                     zerolinecolor="#868e96")
    return fig


def contribution_figure(contributions: pd.DataFrame, *, title: str | None = None,
                        binary: bool = False, template: str | None = TEMPLATE) -> go.Figure:
    """Bar chart of one slice's item contributions (from
    :func:`divergence.item_contributions`), sorted, positive and negative in two colours,
    the slice and its divergence as the title; bootstrap intervals as error bars when
    the frame has ``contribution_low``/``contribution_high``. ``binary``: the metric is a
    rate, drawn in percentage points."""
    attrs = contributions.attrs
    metric = _label(attrs.get("metric", "metric"))
    if title is None:
        div = attrs.get("divergence", float(contributions["contribution"].sum()))
        title = (f"{plotly_text(attrs.get('itemset', ''))}<br><sup>{metric} divergence Δ = {format_divergence(div, binary)}"
                 + (f" ({format_count(attrs['count'])} rows)" if "count" in attrs else "") + "</sup>")
    return _bars(contributions, "contribution", metric=metric, title=title,
                 low="contribution_low", high="contribution_high",
                 x_title=f"contribution to the {metric} divergence", binary=binary, template=template)


def item_values_figure(values: pd.DataFrame, *, value: str = "global", metric: str = "",
                       top: int | None = 25, title: str | None = None, binary: bool = False,
                       template: str | None = TEMPLATE) -> go.Figure:
    """Bar chart of per-item values: ``value="global"`` (global Shapley values from
    :func:`divergence.global_divergence`) or ``"individual"`` (each item's own
    divergence). With ``top``, only the ``top`` items of largest absolute value. ``binary``:
    the metric is a rate, drawn in percentage points."""
    if value not in values.columns:
        raise DivergenceInputError(
            f"Column '{value}' is not in the item table; it has {', '.join(map(str, values.columns))}."
        )
    f = values.dropna(subset=[value])
    if top is not None and len(f) > top:
        f = f.loc[f[value].abs().sort_values(ascending=False, kind="stable").index[:top]]
    what = {"global": "Global item divergence (Shapley)", "individual": "Individual item divergence"}
    metric = _label(metric) if metric else metric
    if title is None:
        title = f"{what.get(value, value)}{' of ' + metric if metric else ''}"
    axis = {"global": "average contribution to a slice's divergence", "individual": "divergence of the item's own slice"}
    return _bars(f, value, metric=metric or "metric", title=title, x_title=axis.get(value, value), binary=binary,
                 template=template)


def lattice_figure(table: SliceTable, itemset: str | Iterable[str], *, metric: str | None = None,
                   threshold: float | None = None, min_reduction: float = 0.0,
                   template: str | None = TEMPLATE) -> go.Figure:
    """The lattice of an itemset's subsets, the whole dataset on top and one row per length.

    Nodes are coloured by divergence (diverging scale centred on 0); nodes with
    ``|Δ| >= threshold`` are drawn as squares with a thick outline; a node where adding
    an item to its parent lowers ``|Δ|`` (by more than ``min_reduction``) is corrective:
    drawn as a diamond, and the edges where the reduction happens are dashed.
    """
    from ..explain.shapley import subset_indices  # the lattice lookups live with the Shapley code

    m = table.metric(metric).name
    idx = table.lookup(itemset)
    row = table.codes[idx]
    pos = np.nonzero(row >= 0)[0]
    k = pos.size
    if k > LATTICE_MAX_ITEMS:
        raise DivergenceInputError(
            f"The lattice of {k} items has {2 ** k} nodes; draw itemsets of at most {LATTICE_MAX_ITEMS} items."
        )
    masks = np.arange(2 ** k, dtype=np.int64)
    nodes = subset_indices(table, np.array([idx]), pos[None, :], masks)[0]
    div = np.asarray(table.statistics(m).divergence, dtype=np.float64)[nodes]
    count = np.asarray(table.columns["count"])[nodes]
    size = np.array([bin(x).count("1") for x in masks])
    labels = [table.item_labels[a][row[a]] for a in pos]
    names = [", ".join(labels[j] for j in range(k) if x >> j & 1) or "whole dataset" for x in masks]
    # positions: y by length (whole dataset on top), x spread evenly within a length
    xs = np.zeros(masks.size)
    for s in range(k + 1):
        members = np.nonzero(size == s)[0]
        width = math.comb(k, s)
        xs[members] = (np.arange(members.size) - (width - 1) / 2.0)
    ys = -size.astype(float)
    # edges J -> J ∪ {α}; corrective when |Δ| drops
    edge_x: list[float | None] = []
    edge_y: list[float | None] = []
    corr_x: list[float | None] = []
    corr_y: list[float | None] = []
    corrective = np.zeros(masks.size, dtype=bool)
    for child in masks:
        for j in range(k):
            if child >> j & 1:
                parent = child & ~(1 << j)
                red = abs(div[parent]) - abs(div[child])
                is_corr = bool(red > 0 and red >= min_reduction)
                corrective[child] |= is_corr
                tx, ty = (corr_x, corr_y) if is_corr else (edge_x, edge_y)
                tx += [xs[parent], xs[child], None]
                ty += [ys[parent], ys[child], None]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=edge_x, y=edge_y, mode="lines", line=dict(color="#bbb", width=1),
                             hoverinfo="skip", showlegend=False))
    if corr_x:
        fig.add_trace(go.Scatter(x=corr_x, y=corr_y, mode="lines", name="corrective step",
                                 line=dict(color=LOWERS_COLOR, width=1.5, dash="dash"), hoverinfo="skip"))
    above = np.zeros(masks.size, dtype=bool)
    if threshold is not None:
        with np.errstate(invalid="ignore"):
            above = np.abs(div) >= threshold
    binary = table.metric(m).binary
    k_scale = _scale(binary)
    unit = " (pp)" if binary else ""
    undefined = np.isnan(div)
    lim = float(np.nanmax(np.abs(div))) * k_scale if (~undefined).any() else 1.0
    lim = lim or 1.0
    big = f"|Δ| ≥ δ = {format_threshold(threshold, binary)}" if threshold is not None else "above threshold"
    kinds = [
        ("undefined outcome", undefined, "circle-open"),
        (big, ~undefined & above & ~corrective, "square"),
        ("corrective (adding its item brings Δ closer to 0)", ~undefined & corrective, "diamond"),
        ("other subsets", ~undefined & ~above & ~corrective, "circle"),
    ]
    grey = "#868e96"
    for name, sel, symbol in kinds:
        if not sel.any():
            continue
        ii = np.nonzero(sel)[0]
        marker = dict(size=26, symbol=symbol, line=dict(width=1, color=grey))
        if name != "undefined outcome":
            marker.update(color=k_scale * div[ii], coloraxis="coloraxis")
            if threshold is not None:
                marker["line"] = dict(width=np.where(above[ii], 3.5, 1.0).tolist(), color=grey)
        else:
            marker.update(color="#adb5bd")
        shown = [format_divergence(d, binary) if not np.isnan(d) else "undefined" for d in div[ii]]
        # nodes coloured by value have no single legend colour: a legend-only twin in grey names the shape
        fig.add_trace(go.Scatter(
            x=xs[ii], y=ys[ii], mode="markers+text", name=name, marker=marker, showlegend=False,
            text=shown, textposition="bottom center", textfont=dict(size=10),
            customdata=np.column_stack([np.array([plotly_text(n) for n in names], dtype=object)[ii], shown,
                                        [format_count(c) for c in count[ii]]]),
            hovertemplate="%{customdata[0]}<br>Δ %{customdata[1]}<br>%{customdata[2]} rows<extra></extra>",
        ))
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name, hoverinfo="skip",
                                 marker=dict(size=12, symbol=symbol, color="rgba(134,142,150,0.35)",
                                             line=dict(width=3.5 if name == big else 1, color=grey))))
    # item labels of the nodes, above each marker
    fig.add_trace(go.Scatter(x=xs, y=ys + 0.28, mode="text", text=[plotly_text(n).replace(", ", "<br>") for n in names],
                             textfont=dict(size=9), hoverinfo="skip", showlegend=False))
    title = f"Lattice of {plotly_text(table.itemsets[idx])}<br><sup>{_label(m)} divergence of each subset{unit}"
    if threshold is not None:
        title += f"; squares: |Δ| ≥ δ = {format_threshold(threshold, binary)}"
    fig.update_layout(
        title=dict(text=title + "</sup>"), **({"template": template} if template else {}),
        coloraxis=dict(colorscale="RdBu_r", cmin=-lim, cmax=lim,
                       colorbar=dict(title=dict(text=f"Δ {_label(m)}{unit}"))),
        height=200 + 150 * k, margin=dict(l=10, r=10, t=70, b=30),
        legend=dict(orientation="h", yanchor="bottom", y=-0.12, x=0),
    )
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False, range=[-k - 0.6, 0.8])
    return fig


def overlap_figure(shared: pd.DataFrame, *, title: str | None = None, template: str | None = TEMPLATE) -> go.Figure:
    """The rows findings share (from :func:`divergence.overlap`), as a heat map: the cell in
    row A, column B is the share of A's rows that B also holds, with the count; the diagonal
    is each slice's own rows. Findings that are one cohort described several ways show as a
    dark block."""
    labels = [str(s) for s in shared.index]
    counts = shared.to_numpy(dtype=float)
    own = np.diag(counts).copy()
    with np.errstate(invalid="ignore", divide="ignore"):
        share = counts / np.where(own > 0, own, np.nan)[:, None]
    text = [[("?" if np.isnan(c) else f"{format_count(c)}<br>{100 * s:.0f}%") if i != j else f"{format_count(c)} rows"
             for j, (c, s) in enumerate(zip(crow, srow))] for i, (crow, srow) in enumerate(zip(counts, share))]
    numbers = [f"#{i + 1}" for i in range(len(labels))]
    rows = [f"#{i + 1} · {wrap_itemset(s, 38)}" for i, s in enumerate(labels)]
    fig = go.Figure(go.Heatmap(
        z=share, x=numbers, y=rows, text=text, texttemplate="%{text}", textfont=dict(size=11),
        colorscale=[[0, "rgba(134,142,150,0.06)"], [1, "#3b5bdb"]], zmin=0, zmax=1,
        colorbar=dict(title=dict(text="share of the<br>row's rows"), tickformat=".0%"),
        customdata=[[f"{plotly_text(a)}<br>and {plotly_text(b)}" for b in labels] for a in labels],
        hovertemplate="%{customdata}<br>%{text}<extra></extra>", xgap=2, ygap=2,
    ))
    n = len(labels)
    fig.update_layout(
        title=dict(text=title or "Rows the findings share<br><sup>each cell: the share of the row slice's rows that "
                                 "the column slice (#k: the k-th row) also holds (unknown: ?)</sup>"),
        height=max(300, 150 + 46 * n), margin=dict(l=10, r=10, t=90, b=10), **({"template": template} if template else {}),
    )
    fig.update_yaxes(autorange="reversed", automargin=True, type="category")
    fig.update_xaxes(side="top", automargin=True, type="category")
    return fig


#: a table cell's characters at Plotly's default 12 px font (the widest digits and capitals), its
#: padding, and the longest text a column keeps on one line before it wraps at its spaces
TABLE_CHAR_PX = 7.6
TABLE_CELL_PAD_PX = 18
TABLE_WRAP_CHARS = 34


def slice_table_figure(display: pd.DataFrame, *, verdict_column: str = "Verdict",
                       height: int | None = None, color_of=verdict_color) -> go.Figure:
    """The slice table (already formatted with :func:`display_frame`) as a Plotly table.

    The slice column is wide and left-aligned, numbers right-aligned; the verdict cell is
    coloured like the interval plot (``color_of``: a verdict's colour). Transparent cells
    follow the page's light or dark theme.
    """
    cols = list(display.columns)
    # widths from the content, in characters: every column as wide as its longest cell or header word, so
    # no number is cut; only long text (a slice, a finding's words) is capped, and it wraps at spaces
    widths = []
    for c in cols:
        cells = display[c].astype(str)
        longest = int(cells.str.len().max()) if len(cells) else 0
        width = max(max(len(w) for w in str(c).split()) + 1, longest + 1, 4)
        # a piece without a space cannot wrap: the column is never narrower than the longest one
        piece = max((len(p) for v in cells for p in v.split(" ")), default=0) + 1
        widths.append(min(width, max(TABLE_WRAP_CHARS, piece)))
    align = ["left" if c in ("Slice", "Verdict", "Finding") else "right" for c in cols]
    n = len(display)
    fills = []
    for c in cols:
        if c == verdict_column:
            fills.append([rgba(color_of(v), 0.28) for v in display[c]])
        else:
            fills.append(["rgba(134,142,150,0.08)" if i % 2 else "rgba(0,0,0,0)" for i in range(n)])
    fig = go.Figure(go.Table(
        columnwidth=widths,
        header=dict(values=[f"<b>{plotly_text(c)}</b>" for c in cols], align=align, fill_color="rgba(59,91,219,0.18)",
                    line_color="rgba(134,142,150,0.35)", height=30),
        cells=dict(values=[[plotly_text(v) if isinstance(v, str) else v for v in display[c]] for c in cols], align=align, fill_color=fills,
                   line_color="rgba(134,142,150,0.25)", height=26),
    ))
    # the width and height at which every cell shows in full (a text wraps to more lines in its column):
    # an exported image is drawn at least this wide and this tall, whatever the page shows
    natural_width = int(sum(widths) * TABLE_CHAR_PX + TABLE_CELL_PAD_PX * len(widths))
    # Plotly shares the width out in proportion to columnwidth: the characters a line of each column holds
    fits = [int((w / max(sum(widths), 1) * natural_width - 10) / TABLE_MEAN_CHAR_PX) for w in widths]
    lines = [max((_wrapped_lines(str(display[c].iat[i]), k) for c, k in zip(cols, fits)), default=1)
             for i in range(n)]
    natural_height = TABLE_HEADER_PX + sum(TABLE_ROW_PX + TABLE_LINE_PX * (k - 1) for k in lines)
    fig.update_layout(margin=dict(l=0, r=0, t=4, b=0),
                      height=height or min(80 + 27 * max(n, 1), 760),
                      meta={"natural_width": natural_width, "natural_height": int(natural_height)})
    return fig


#: a table's header, a one-line row and each further line of a wrapped cell, in pixels (Plotly's table
#: at its 12 px font, the heights given to it above)
TABLE_HEADER_PX = 34
TABLE_ROW_PX = 27
TABLE_LINE_PX = 17
#: the mean width of a character of text at that font (narrower than the widest, TABLE_CHAR_PX): how
#: much a line of a column holds, a little less than it shows, so a row is never drawn taller than counted
TABLE_MEAN_CHAR_PX = 6.3


def _wrapped_lines(text: str, width: int) -> int:
    """The lines ``text`` takes in a column of ``width`` characters, wrapped at its spaces."""
    count, used = 1, 0
    for word in text.split(" "):
        need = len(word) if used == 0 else used + 1 + len(word)
        if used and need > width - 1:
            count, used = count + 1, len(word)
        else:
            used = need
    return count


def interval_figure(table: SliceTable, rows: pd.DataFrame, metric: str | None = None, *,
                    level_label: str | None = None) -> go.Figure:
    """The interval overlap plot: each slice's interval against the whole-dataset value and band.

    One line per slice (top to bottom in the order of ``rows``), its interval as a bar and its
    value as a dot, coloured by verdict; slices below the minimum size ('indicative') drawn as
    open dots; each distinct finding (``M_finding``) also as a large star labelled 'finding', so it
    stands out among its spillover. The whole dataset's value is a vertical line, its interval a shaded band. The
    x axis names the interval level (``level_label``, e.g. '95% intervals, BH-adjusted').
    Needs the statistics columns ``M_ci_low`` and ``M_ci_high``.
    """
    stats = table.statistics(metric)
    m, binary = stats.name, stats.info.binary
    if stats.ci_low is None or stats.ci_high is None:
        raise DivergenceInputError(f"The interval plot needs the statistics of metric '{m}' (run assess).")
    at = rows.index.to_numpy()  # the rows' positions in the table

    def col(values: np.ndarray | None, default: object) -> pd.Series:
        """A statistic at the rows (``default`` on each when the table has none), indexed as ``rows``."""
        if values is None:
            return pd.Series([default] * len(rows), index=rows.index)
        return pd.Series(values, dtype=object if values.dtype == object else None).iloc[at].set_axis(rows.index)

    labels = [wrap_itemset(s) for s in rows["itemset"]]
    verdicts = col(stats.verdict, "").astype(str)
    meets = col(stats.meets_min_size, True).astype(bool)
    scale = 100.0 if binary else 1.0
    fig = go.Figure()
    overall = table.overall(m) * scale
    low = high = float("nan")
    if hasattr(table, "overall_interval"):
        low, high = (x * scale for x in table.overall_interval(m))
    if not (is_undefined(low) or is_undefined(high)):
        fig.add_vrect(x0=low, x1=high, fillcolor="rgba(134,142,150,0.25)", line_width=0, layer="below")
    fig.add_vline(x=overall, line_color="#868e96", line_dash="dash", line_width=1.5)
    value, lo, hi = (np.asarray(v)[at] * scale for v in (stats.value, stats.ci_low, stats.ci_high))
    itemsets, counts = rows["itemset"].to_numpy(), np.asarray(stats.count)[at]
    add_interval_traces(
        fig, rows, labels, verdicts, meets, value, lo, hi, color_of=verdict_color,
        name_of=lambda v, indicative: (v or "slice") + (" (indicative: below minimum size)" if indicative else ""),
        hover=lambda sel, v, a, b: [
            f"{plotly_text(s)}<br>{format_value(x / scale, binary)} {format_interval(y / scale, z / scale, binary)}"
            f"<br>{format_count(k)} rows · {verdict or '–'}"
            for s, x, y, z, k, verdict in zip(itemsets[sel], v, a, b, counts[sel], verdicts.to_numpy()[sel])])
    if stats.finding is not None:  # the distinct findings unmistakable among their spillover: a large star, labelled
        found = col(stats.finding, False).fillna(False).astype(bool).to_numpy()
        if found.any():
            fig.add_trace(go.Scatter(
                x=value[found], y=np.array(labels, dtype=object)[found], mode="markers+text", name="distinct finding",
                marker=dict(symbol="star", size=17, color=[verdict_color(v) for v in verdicts.to_numpy()[found]],
                            line=dict(width=1.5, color="#212529")),
                text=["finding"] * int(found.sum()), textposition="top center",
                textfont=dict(size=11, color="#212529"), customdata=rows.index.to_numpy()[found],
                hovertext=[f"{plotly_text(s)}<br>distinct finding" for s in itemsets[found]], hoverinfo="text"))
    # the axis spans every interval and the whole dataset's band (autorange ignores shapes)
    fig.update_xaxes(range=axis_range([overall, low, high] + list(lo) + list(hi)))
    unit = " (%)" if binary else ""
    level = level_label or "intervals"
    interval_layout(fig, labels, f"{_label(m)}{unit}: {level}; dashed line and band: whole dataset "
                                 f"{format_value(overall / scale, binary)}")
    return fig


def add_interval_traces(fig: go.Figure, rows: pd.DataFrame, labels: Sequence[str], verdicts: pd.Series,
                        meets: pd.Series, value: np.ndarray, lo: np.ndarray, hi: np.ndarray, *, color_of,
                        name_of, hover) -> None:
    """One trace per verdict and side of the minimum size: each slice's value as a dot (open
    below the minimum size) and its interval as a bar, on the line of its label. ``value``,
    ``lo``, ``hi`` are per row of ``rows``; ``hover(sel, value, lo, hi)`` gives the selected
    rows' hover texts. Shared by the slice and the comparison interval plots."""
    shown = set()
    y = np.array(labels, dtype=object)
    meet = meets.to_numpy()
    for verdict in dict.fromkeys(verdicts):
        for indicative in (False, True):
            sel = (verdicts == verdict).to_numpy() & (~meet if indicative else meet)
            if not sel.any():
                continue
            color, name = color_of(verdict), name_of(verdict, indicative)
            v, a, b = value[sel], lo[sel], hi[sel]
            fig.add_trace(go.Scatter(
                x=v, y=y[sel], mode="markers", name=name,
                marker=dict(color=color, size=9, symbol="circle-open" if indicative else "circle",
                            line=dict(width=2, color=color)),
                error_x=dict(type="data", symmetric=False, array=b - v, arrayminus=v - a,
                             color=color, thickness=2, width=4),
                customdata=rows.index.to_numpy()[sel], hovertext=hover(sel, v, a, b), hoverinfo="text",
                showlegend=name not in shown,
            ))
            shown.add(name)


def axis_range(ends: Sequence[float]) -> list[float]:
    """An axis range spanning the defined ``ends``, with a 4% margin."""
    ends = [e for e in ends if not is_undefined(e)]
    pad = 0.04 * ((max(ends) - min(ends)) or 1.0)
    return [min(ends) - pad, max(ends) + pad]


def interval_layout(fig: go.Figure, labels: Sequence[str], xaxis_title: str) -> None:
    """The interval plots' layout: one line per label, top to bottom, the legend above."""
    fig.update_layout(
        xaxis_title=xaxis_title,
        yaxis=dict(autorange="reversed", categoryorder="array", categoryarray=labels, automargin=True),
        height=max(260, 60 + 30 * len(labels)), margin=dict(l=10, r=10, t=30, b=60),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0),
    )
