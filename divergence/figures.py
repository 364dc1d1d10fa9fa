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

from .errors import DivergenceInputError
from .table import SliceTable

__all__ = ["contribution_figure", "item_values_figure", "lattice_figure"]

#: bar colours: contributions that raise the metric, and those that lower it
RAISES_COLOR = "#c0392b"
LOWERS_COLOR = "#2471a3"
#: largest itemset whose lattice is drawn (2^k nodes)
LATTICE_MAX_ITEMS = 8


def _bars(frame: pd.DataFrame, value: str, *, metric: str, title: str,
          low: str | None = None, high: str | None = None, x_title: str = "") -> go.Figure:
    """Horizontal bars sorted by value (largest on top), coloured by sign."""
    f = frame.dropna(subset=[value]).sort_values(value, ascending=True, kind="stable")
    fig = go.Figure()
    for positive, color, name in ((True, RAISES_COLOR, f"raises {metric}"),
                                  (False, LOWERS_COLOR, f"lowers {metric}")):
        part = f[f[value] > 0] if positive else f[~(f[value] > 0)]
        if part.empty:
            continue
        error_x = None
        if low and high and low in part and high in part:
            error_x = dict(type="data", symmetric=False, array=(part[high] - part[value]).to_numpy(),
                           arrayminus=(part[value] - part[low]).to_numpy(), color="#444", thickness=1.2)
        fig.add_trace(go.Bar(
            x=part[value], y=part["item"], orientation="h", name=name, marker_color=color,
            error_x=error_x, hovertemplate="%{y}: %{x:.4f}<extra></extra>",
        ))
    fig.update_layout(
        title=dict(text=title), barmode="relative", template="plotly_white",
        height=max(220, 60 + 28 * len(f)), margin=dict(l=10, r=10, t=60, b=40),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
    )
    # keep the sorted order on the y axis whatever the trace split
    fig.update_yaxes(categoryorder="array", categoryarray=f["item"].tolist(), automargin=True)
    fig.update_xaxes(title_text=x_title, zeroline=True, zerolinewidth=1.5, zerolinecolor="#868e96")
    return fig


def contribution_figure(contributions: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Bar chart of one slice's item contributions (from
    :func:`divergence.item_contributions`), sorted, positive and negative in two colours,
    the slice and its divergence as the title; bootstrap intervals as error bars when
    the frame has ``contribution_low``/``contribution_high``."""
    attrs = contributions.attrs
    metric = attrs.get("metric", "metric")
    if title is None:
        div = attrs.get("divergence", float(contributions["contribution"].sum()))
        title = (f"{attrs.get('itemset', '')}<br><sup>{metric} divergence Δ = {div:+.4f}"
                 + (f" (count {attrs['count']:,})" if "count" in attrs else "") + "</sup>")
    return _bars(contributions, "contribution", metric=metric, title=title,
                 low="contribution_low", high="contribution_high",
                 x_title=f"contribution to the {metric} divergence")


def item_values_figure(values: pd.DataFrame, *, value: str = "global", metric: str = "",
                       top: int | None = 25, title: str | None = None) -> go.Figure:
    """Bar chart of per-item values: ``value="global"`` (global Shapley values from
    :func:`divergence.global_divergence`) or ``"individual"`` (each item's own
    divergence). With ``top``, only the ``top`` items of largest absolute value."""
    if value not in values.columns:
        raise DivergenceInputError(
            f"Column '{value}' is not in the item table; it has {', '.join(map(str, values.columns))}."
        )
    f = values.dropna(subset=[value])
    if top is not None and len(f) > top:
        f = f.loc[f[value].abs().sort_values(ascending=False, kind="stable").index[:top]]
    what = {"global": "global item divergence (Shapley)", "individual": "individual item divergence"}
    if title is None:
        title = f"{what.get(value, value)}{' of ' + metric if metric else ''}"
    return _bars(f, value, metric=metric or "metric", title=title, x_title=value)


def lattice_figure(table: SliceTable, itemset: str | Iterable[str], *, metric: str | None = None,
                   threshold: float | None = None, min_reduction: float = 0.0) -> go.Figure:
    """The lattice of an itemset's subsets, the whole dataset on top and one row per length.

    Nodes are coloured by divergence (diverging scale centred on 0); nodes with
    ``|Δ| >= threshold`` are drawn as squares with a thick outline; a node where adding
    an item to its parent lowers ``|Δ|`` (by more than ``min_reduction``) is corrective:
    drawn as a diamond, and the edges where the reduction happens are dashed.
    """
    from .shapley import _subset_indices  # the lattice lookups live with the Shapley code

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
    nodes = _subset_indices(table, np.array([idx]), pos[None, :], masks)[0]
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
    undefined = np.isnan(div)
    lim = float(np.nanmax(np.abs(div))) if (~undefined).any() else 1.0
    lim = lim or 1.0
    kinds = [
        ("undefined outcome", undefined, "circle-open"),
        (f"|Δ| ≥ {threshold:g}" if threshold is not None else "above threshold",
         ~undefined & above & ~corrective, "square"),
        ("corrective", ~undefined & corrective, "diamond"),
        ("other", ~undefined & ~above & ~corrective, "circle"),
    ]
    for name, sel, symbol in kinds:
        if not sel.any():
            continue
        ii = np.nonzero(sel)[0]
        marker = dict(size=26, symbol=symbol, line=dict(width=1, color="#868e96"))
        if name != "undefined outcome":
            marker.update(color=div[ii], coloraxis="coloraxis")
            if threshold is not None:
                marker["line"] = dict(width=np.where(above[ii], 3.5, 1.0).tolist(), color="#868e96")
        else:
            marker.update(color="#999")
        fig.add_trace(go.Scatter(
            x=xs[ii], y=ys[ii], mode="markers+text", name=name, marker=marker,
            text=[f"{d:+.3f}" if not np.isnan(d) else "n/a" for d in div[ii]],
            textposition="bottom center", textfont=dict(size=10),
            customdata=np.column_stack([np.array(names, dtype=object)[ii], count[ii]]),
            hovertemplate="%{customdata[0]}<br>Δ %{marker.color:.4f}<br>count %{customdata[1]}<extra></extra>"
            if name != "undefined outcome" else "%{customdata[0]}<br>undefined<extra></extra>",
        ))
    # item labels of the nodes, above each marker
    fig.add_trace(go.Scatter(x=xs, y=ys + 0.28, mode="text", text=[n.replace(", ", "<br>") for n in names],
                             textfont=dict(size=9), hoverinfo="skip", showlegend=False))
    title = f"Lattice of {table.itemsets[idx]}<br><sup>{m} divergence by subset"
    if threshold is not None:
        title += f"; threshold {threshold:g}"
    fig.update_layout(
        title=dict(text=title + "</sup>"), template="plotly_white",
        coloraxis=dict(colorscale="RdBu_r", cmin=-lim, cmax=lim,
                       colorbar=dict(title=dict(text=f"Δ {m}"))),
        height=200 + 150 * k, margin=dict(l=10, r=10, t=70, b=30),
        legend=dict(orientation="h", yanchor="bottom", y=-0.12, x=0),
    )
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False, range=[-k - 0.6, 0.8])
    return fig
