"""Plotly figures built by the engine, so the app and the HTML report draw the same picture.

Every function returns a ``plotly.graph_objects.Figure`` and has no other effect. No
Streamlit here. Each builder is self-contained (other figure builders may live beside
these).
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..errors import DivergenceInputError
from .formats import format_count, format_divergence, format_threshold, plotly_text, wrap_itemset
from ..table import SliceTable

__all__ = ["contribution_figure", "item_values_figure", "lattice_figure", "overlap_figure"]

#: bar colours: contributions that raise the metric, and those that lower it
RAISES_COLOR = "#c0392b"
LOWERS_COLOR = "#2471a3"
#: largest itemset whose lattice is drawn (2^k nodes)
LATTICE_MAX_ITEMS = 8


def _label(metric: str) -> str:
    """A metric as the app and the report name it: 'fpr' -> 'FPR', 'abs_error' -> 'abs error'."""
    from .views import metric_label

    return metric_label(metric)


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
    div = np.asarray(table.columns[f"{m}_divergence"], dtype=np.float64)[nodes]
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
    edge_x, edge_y, corr_x, corr_y = [], [], [], []
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
