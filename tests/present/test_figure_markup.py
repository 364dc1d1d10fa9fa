"""Every figure draws text from the data as text (issue 33, F1 and F7): Plotly reads the strings it
draws as its own small HTML, so a value holding a link, a script or an entity must reach every
figure (axis labels, hover text, table cells, titles, the exported page's title) escaped."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import divergence
from divergence.present.compare_views import (
    change_contribution_figure,
    change_interval_figure,
    compare_display_frame,
    compare_table_figure,
    compare_view,
)
from divergence.present.export import export_caption, figure_html, titled_figure
from divergence.present.figures import (
    contribution_figure,
    interval_figure,
    item_values_figure,
    lattice_figure,
    overlap_figure,
    slice_table_figure,
)
from divergence.present.formats import plotly_text, wrap_itemset
from divergence.present.views import display_frame

LINK = '<a href="http://127.0.0.9:9/plotly">CLICK</a>'
TITLE = "</title><script>window.__planted=9</script>"
AMP = "R&D"
#: the markup our figures write themselves; any other tag in a drawn string came from the data
OURS = re.compile(r"<(?!/?(?:br|b|sup|sub|i|extra)>)[a-zA-Z/!]")


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _strings(v)
    elif isinstance(obj, np.ndarray) and obj.dtype == object:
        for v in obj.ravel():
            yield from _strings(v)


def _live(fig) -> list[str]:
    """The drawn strings holding markup that is not ours, or a bare ``&`` from the data."""
    bad = []
    for s in _strings(fig.to_plotly_json()):
        if OURS.search(s) or AMP in s:
            bad.append(s)
    return bad


@pytest.fixture(scope="module")
def hostile():
    rng = np.random.default_rng(5)
    n = 3000
    df = pd.DataFrame({"team": rng.choice([LINK, TITLE, AMP], n), "channel": rng.choice(["App", "Web"], n),
                       "y": rng.integers(0, 2, n)})
    wrong = np.where(df["team"] == LINK, rng.random(n) < 0.45, rng.random(n) < 0.15)
    df["pred"] = np.where(wrong, 1 - df["y"], df["y"])
    df["ref"] = np.where(rng.random(n) < 0.1, 1 - df["y"], df["y"])
    kw = dict(target="y", prediction="pred", positive=1, attributes=["team", "channel"], min_support=0.05)
    table = divergence.scan(df, metrics=["error", "fpr"], **kw)
    comparison = divergence.compare(df, reference="ref", metrics=["error"], **kw)
    return table, comparison


def test_plotly_text_escapes_what_plotly_reads_as_markup():
    assert plotly_text(LINK) == '&lt;a href="http://127.0.0.9:9/plotly"&gt;CLICK&lt;/a&gt;'
    assert plotly_text(AMP) == "R&amp;D" and plotly_text("plain") == "plain"
    long = ", ".join([f"team={LINK}"] * 3)
    assert "<a" not in wrap_itemset(long, 40) and "<br>" in wrap_itemset(long, 40)


def test_every_figure_draws_hostile_values_as_text(hostile):
    table, comparison = hostile
    items = [s for s in table.frame["itemset"] if s]
    link = next(s for s in items if LINK in s and "," in s)
    rows = table.frame.iloc[1:]
    figures = {
        "slice table": slice_table_figure(display_frame(table, rows, "error")),
        "intervals": interval_figure(table, rows, "error"),
        "contributions": contribution_figure(divergence.item_contributions(table, link, metric="error")),
        "global items": item_values_figure(divergence.global_divergence(table, metric="error"), metric="error"),
        "lattice": lattice_figure(table, link, metric="error", threshold=0.05),
        "overlap": overlap_figure(divergence.overlap(table, [s for s in items if "," not in s][:4])),
        "comparison table": compare_table_figure(compare_display_frame(comparison, compare_view(comparison, "error"))),
        "comparison intervals": change_interval_figure(comparison, compare_view(comparison, "error"), "error"),
        "change contributions": change_contribution_figure(comparison.contributions(link, "error")),
    }
    for name, fig in figures.items():
        assert not _live(fig), (name, _live(fig)[:3])
    # the values are there, escaped (shown by Plotly as the characters themselves)
    drawn = " ".join(_strings(figures["slice table"].to_plotly_json()))
    assert plotly_text(LINK) in drawn and "R&amp;D" in drawn
    # an exported figure's title and caption from the data, and the page's own <title>
    exported = titled_figure(figures["contributions"], f"Shapley contributions · {TITLE}",
                             export_caption(table, "error", data_label=f"data {LINK}"))
    assert not _live(exported)
    page = figure_html(titled_figure(lattice_figure(table, link, metric="error"), TITLE, "caption"), title=TITLE)
    assert "<script>window.__planted" not in page and "</title><script>" not in page
    assert "<title>&lt;/title&gt;&lt;script&gt;window.__planted=9&lt;/script&gt;</title>" in page


def test_the_exported_slice_table_shows_every_number_whole(hostile, monkeypatch):
    """Issue 30 point 1: the exported slice table cut narrow columns on the left (FPR '9.0%' for 39.0%,
    q ').000601'). Every column is now as wide as its longest cell (only text wraps, at its spaces),
    and an image is drawn at least as wide as the table needs: at that width each column has the
    pixels its longest unbreakable piece needs, and the cells are the display's values."""
    from divergence.present import export, figures

    table, _ = hostile
    rows = table.frame.iloc[1:]
    display = display_frame(table, rows, "error")
    fig = slice_table_figure(display)
    trace = fig.data[0]
    natural = fig.layout.meta["natural_width"]
    drawn = max(1280, natural)
    weights = list(trace.columnwidth)
    px = [w / sum(weights) * drawn for w in weights]
    for j, col in enumerate(display.columns):
        cells = [str(v) for v in trace.cells.values[j]]
        assert cells == [plotly_text(v) for v in display[col].astype(str)], col  # the numbers as formatted
        piece = max(len(p) for v in display[col].astype(str) for p in v.split(" ")) if len(display) else 0
        assert px[j] >= figures.TABLE_CHAR_PX * piece, (col, px[j], piece)
    # a PNG is drawn at that width whatever width is asked for
    seen = {}
    monkeypatch.setattr(export, "png_supported", lambda: True)
    monkeypatch.setattr(export, "_start_exporter", lambda: None)  # no browser for a drawing that is patched out
    monkeypatch.setattr(type(fig), "to_image", lambda self, **kw: seen.update(kw) or b"\x89PNG")
    export.figure_png(fig, width=800)
    assert seen["width"] == max(800, natural) >= natural


def test_the_exported_table_page_is_as_wide_as_its_cells(hostile):
    table, _ = hostile
    fig = slice_table_figure(display_frame(table, table.frame.iloc[1:], "error"))
    page = figure_html(fig, title="t")
    tall = max(fig.layout.height, fig.layout.meta["natural_height"] + fig.layout.margin.t + fig.layout.margin.b + 8)
    assert f'style="height:{tall}px; width:{fig.layout.meta["natural_width"]}px;"' in page


def test_the_exported_table_shows_every_row_whole(monkeypatch):
    """issue 30 point 1 (rows): a slice table whose slices wrap onto two or three lines is exported as
    tall as all its rows under the export's title, as PNG and as HTML; the page's own view may scroll."""
    from divergence.data.datasets import DEMO_ROLES, load_demo
    from divergence.present import export, figures
    from divergence.present.export import titled_figure
    from divergence.present.figures import _wrapped_lines
    from divergence.present.views import slice_view

    table = divergence.scan(load_demo(), **dict(DEMO_ROLES["classification"], metrics=["error", "fpr"]))
    rows = slice_view(table, metric="error", top_n=25).rows
    display = display_frame(table, rows, "error")
    fig = slice_table_figure(display)
    meta = fig.layout.meta
    cw = list(fig.data[0].columnwidth)
    fits = [int((w / sum(cw) * meta["natural_width"] - 10) / figures.TABLE_MEAN_CHAR_PX) for w in cw]
    lines = [max(_wrapped_lines(str(display[c].iat[i]), k) for c, k in zip(display.columns, fits))
             for i in range(len(display))]
    assert max(lines) >= 2  # slices and findings long enough to wrap
    assert meta["natural_height"] >= 34 + 27 * len(display) + 17 * sum(k - 1 for k in lines)
    assert fig.layout.height < meta["natural_height"]  # the page's view is capped and scrolls
    exported = titled_figure(fig, "The slice table", "caption")
    seen = {}
    monkeypatch.setattr(export, "png_supported", lambda: True)
    monkeypatch.setattr(export, "_start_exporter", lambda: None)
    monkeypatch.setattr(type(exported), "to_image", lambda self, **kw: seen.update(kw) or b"\x89PNG")
    export.figure_png(exported)
    assert seen["height"] >= meta["natural_height"] + exported.layout.margin.t
    page = figure_html(exported, title="t")
    assert f'style="height:{seen["height"]}px;' in page
    assert _wrapped_lines("a b c", 4) == 2 and _wrapped_lines("region=South, education=Primary", 34) == 1


@pytest.mark.slow
def test_the_exported_png_ends_below_its_last_row():
    """Drawn for real: the PNG of a 25-row table whose slices wrap ends in the page's background, so
    no row is cut at the bottom edge (the exporter reported cut rows before)."""
    import io

    from divergence.data.datasets import DEMO_ROLES, load_demo
    from divergence.present import export
    from divergence.present.export import titled_figure
    from divergence.present.views import slice_view

    if not export.png_supported():
        pytest.skip("kaleido or Chromium (/usr/bin/chromium) missing: PNG export unavailable here")
    from PIL import Image

    table = divergence.scan(load_demo(), **dict(DEMO_ROLES["classification"], metrics=["error", "fpr"]))
    rows = slice_view(table, metric="error", top_n=25).rows
    fig = titled_figure(slice_table_figure(display_frame(table, rows, "error")), "The slice table", "caption")
    image = Image.open(io.BytesIO(export.figure_png(fig, scale=1))).convert("L")
    width, height = image.size
    bottom = [image.getpixel((x, y)) for y in range(height - 6, height) for x in range(0, width, 7)]
    assert min(bottom) >= 245, "the table reaches the image's bottom edge: a row is cut"
