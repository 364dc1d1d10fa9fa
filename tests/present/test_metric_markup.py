"""Issue 47 N2: a metric is named after its outcome column (``--outcome COL``), so its name is text from
the data. Every figure's title, legend, axis and colour-bar title draws it escaped, and every figure
that leaves the program (the HTML report, an exported page) passes through :func:`inert_figure`."""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

import divergence
from divergence.cli.cli import main
from divergence.present.export import figure_html, titled_figure
from divergence.present.figures import (
    contribution_figure,
    inert_figure,
    interval_figure,
    item_values_figure,
    lattice_figure,
    overlap_figure,
    slice_table_figure,
)
from divergence.present.formats import figure_label, plotly_text
from divergence.present.views import display_frame

LINK = '<a href="http://127.0.0.9:9/metric">M</a>'
#: the markup the figures write themselves; any other tag in a drawn string came from the data
OURS = re.compile(r"<(?!/?(?:br|b|sup|sub|i|extra)>)[a-zA-Z/!]")


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, (list, tuple)) or (isinstance(obj, np.ndarray) and obj.dtype == object):
        for v in (obj.ravel() if isinstance(obj, np.ndarray) else obj):
            yield from _strings(v)


def _live(fig) -> list[str]:
    return [s for s in _strings(fig.to_plotly_json()) if OURS.search(s)]


def _frame(n: int = 2000) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"team": rng.choice(["A", "B", "C"], n), "channel": rng.choice(["App", "Web"], n)})
    df[LINK] = rng.normal(size=n) + (df["team"] == "A") * 1.0
    return df


@pytest.fixture(scope="module")
def table():
    return divergence.scan(_frame(), outcome=LINK, min_support=0.05)


def test_the_metric_is_named_after_the_column(table):
    assert table.metric_names == [LINK]
    assert figure_label(LINK) == plotly_text(LINK) == '&lt;a href="http://127.0.0.9:9/metric"&gt;M&lt;/a&gt;'


def test_every_figure_draws_a_hostile_metric_name_as_text(table):
    m = LINK
    items = [s for s in table.frame["itemset"] if s]
    pair = next(s for s in items if "," in s)
    rows = table.frame.iloc[1:]
    figures = {
        "slice table": slice_table_figure(display_frame(table, rows, m)),
        "intervals": interval_figure(table, rows, m),
        "contributions": contribution_figure(divergence.item_contributions(table, pair, metric=m)),
        "global items": item_values_figure(divergence.global_divergence(table, metric=m), metric=m),
        "individual items": item_values_figure(divergence.global_divergence(table, metric=m), value="individual",
                                               metric=m),
        "lattice": lattice_figure(table, pair, metric=m, threshold=0.05),
        "overlap": overlap_figure(divergence.overlap(table, [s for s in items if "," not in s][:3])),
    }
    for name, fig in figures.items():
        assert not _live(fig), (name, _live(fig)[:3])
    # the name is there, shown as the characters themselves: in the titles, legends and axis titles
    contrib = figures["contributions"].to_plotly_json()
    assert plotly_text(LINK) in contrib["layout"]["title"]["text"]
    assert {t["name"] for t in contrib["data"]} <= {f"raises {plotly_text(LINK)}", f"lowers {plotly_text(LINK)}"}
    assert plotly_text(LINK) in contrib["layout"]["xaxis"]["title"]["text"]
    lattice = figures["lattice"].to_plotly_json()
    assert plotly_text(LINK) in lattice["layout"]["coloraxis"]["colorbar"]["title"]["text"]
    assert plotly_text(LINK) in lattice["layout"]["title"]["text"]
    assert plotly_text(LINK) in figures["intervals"].to_plotly_json()["layout"]["xaxis"]["title"]["text"]


def test_a_figure_leaving_the_program_carries_no_live_markup():
    """The guard at the sinks: a string a builder missed is shown as text; the figures' own markup stays."""
    import plotly.graph_objects as go

    fig = go.Figure(go.Bar(x=[1], y=[LINK], name=LINK, customdata=np.array([[LINK]], dtype=object)))
    fig.update_layout(title=dict(text=f"{LINK}<br><sup>sub</sup> <b>b</b>"), xaxis_title=LINK)
    cleaned = inert_figure(fig)
    assert not _live(cleaned) and _live(fig)
    assert cleaned.layout.title.text == f"{plotly_text(LINK).replace('&gt;', '>')}<br><sup>sub</sup> <b>b</b>"
    page = figure_html(titled_figure(fig, "heading", "caption"), title="t")
    assert "\\u003ca href" not in page and '<a href="http://127.0.0.9' not in page
    plain = go.Figure(go.Bar(x=[1], y=["a<b"]))
    assert inert_figure(inert_figure(plain)).data[0].y == ("a&lt;b",)


def test_the_html_report_carries_no_live_markup_from_a_metric_name(tmp_path, capsys):
    """The CLI's report: titles, legends and axis titles of every figure (``\\u003ca href`` in the JSON)."""
    data, plan, page = tmp_path / "data.csv", tmp_path / "plan.yaml", tmp_path / "report.html"
    _frame().to_csv(data, index=False)
    assert main(["plan", "--outcome", LINK, "--min-support", "0.05", "--output", str(plan)]) == 0
    assert main(["report", str(plan), str(data), "--output", str(page)]) == 0
    text = page.read_text()
    assert "\\u003ca href" not in text and '<a href="http://127.0.0.9' not in text
    figures = [json.loads(m) for m in re.findall(r"Plotly\.newPlot\(\s*\"[^\"]+\",\s*(\[.*?\]),\s*\{", text)]
    assert figures  # the figures were found in the page, and carry the name as text
    assert "\\u0026lt;a href" in text or "&lt;a href" in text
