"""divergence.present.views: numbers for people, the slice view (against a pandas reference), role
guesses, and the slice-table and interval figures (what they draw, value by value)."""
from __future__ import annotations

import dataclasses
import io
from datetime import UTC

import numpy as np
import pandas as pd
import pytest

from divergence import DivergenceInputError, scan
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, DEMO_TRUTH, load_demo
from divergence.data.roles import guess_positive
from divergence.prepare.replication_rows import split_rows
from divergence.present.cards import headline
from divergence.present.columns import parse_bin_spec
from divergence.present.export import figure_html, figure_png, png_supported, table_csv
from divergence.present.figures import interval_figure, slice_table_figure
from divergence.present.formats import (
    format_count,
    format_divergence,
    format_interval,
    format_number,
    format_p,
    format_percent,
)
from divergence.present.views import display_frame, slice_view, sort_options


@pytest.fixture(scope="module")
def demo_table():
    return scan(load_demo(), attributes=DEMO_ATTRIBUTES, min_support=0.02, **DEMO_ROLES["classification"])


@pytest.fixture(scope="module")
def regression_table():
    return scan(load_demo(), attributes=DEMO_ATTRIBUTES, min_support=0.05, **DEMO_ROLES["regression"])


@pytest.mark.parametrize("x, text", [
    (0.0883, "0.0883"), (0.3126, "0.313"), (0.001234, "0.00123"), (12345.6, "12,346"), (25.345, "25.3"),
    (9.996, "10.0"), (999.7, "1,000"), (-0.05, "-0.0500"), (0, "0"), (123.456, "123"), (1.2e-05, "1.20e-5"),
    (float("nan"), "–"), (None, "–"),
])
def test_format_number(x, text):
    assert format_number(x) == text


def test_formats_for_people():
    assert format_percent(0.08831) == "8.83%"
    assert format_percent(0.3125) == "31.2%"  # 31.25 rounds half to even
    assert format_percent(1.0) == "100%"
    assert format_count(1234567) == "1,234,567" and format_count(np.int64(7)) == "7"
    assert format_divergence(0.2345, True) == "+23.4 pp"
    assert format_divergence(-0.05, True) == "-5.00 pp"
    assert format_divergence(-3.14159, False) == "-3.14"
    assert format_interval(0.271, 0.3555, True) == "[27.1%, 35.5%]"
    assert format_interval(np.nan, 0.3, True) == "–"
    assert format_p(1.1e-7) == "1.1e-7" and format_p(0.04321) == "0.0432" and format_p(0.0) == "<1e-300"


def _reference(table, metric, col, asc, keep, n):
    f = table.frame.iloc[1:]
    f = f[keep[1:]]
    return f.sort_values([col, "support"], ascending=[asc, False], kind="stable", na_position="last").head(n)


@pytest.mark.parametrize("col, asc, n", [
    ("fpr_divergence", False, 25), ("fpr_divergence", True, 10), ("fpr_q", True, 40), ("count", False, 5000),
    ("fpr_ci_low", False, 7), ("fpr_t", False, 3),
])
def test_slice_view_sorts_like_pandas(demo_table, col, asc, n):
    view = slice_view(demo_table, metric="fpr", sort_by=col, ascending=asc, top_n=n)
    keep = np.ones(len(demo_table), dtype=bool)
    ref = _reference(demo_table, "fpr", col, asc, keep, n)
    assert view.rows.index.tolist() == ref.index.tolist()
    assert view.n_matching == len(demo_table) - 1 and view.n_slices == len(demo_table) - 1


def test_slice_view_filters(demo_table):
    t = demo_table
    f = t.frame
    view = slice_view(t, metric="fpr", verdicts=["above", "too small"], meets_min_size=True, lengths=(2, 3),
                      attributes=["region", "channel"], top_n=10_000)
    keep = (f["fpr_verdict"].isin(["above", "too small"]) & f["fpr_meets_min_size"] & f["length"].between(2, 3)
            & f["itemset"].str.contains(r"(?:^|, )(?:region|channel)=")).to_numpy()
    ref = _reference(t, "fpr", "fpr_order", True, keep, 10_000)  # positions ascending: the default order
    assert view.n_matching == keep.sum() > 0
    assert view.rows.index.tolist() == ref.index.tolist()
    assert set(view.rows["fpr_verdict"]) == {"above"}  # 'too small' never meets the minimum size
    excluded = np.zeros(len(t), dtype=bool)
    excluded[view.rows.index[:3]] = True
    again = slice_view(t, metric="fpr", verdicts=["above", "too small"], meets_min_size=True, lengths=(2, 3),
                       attributes=["region", "channel"], top_n=10_000, exclude=excluded)
    assert again.rows.index.tolist() == view.rows.index.tolist()[3:]


def test_slice_view_text_column_and_bad_column(demo_table):
    view = slice_view(demo_table, metric="fnr", sort_by="itemset", ascending=True, top_n=5)
    assert view.rows["itemset"].tolist() == sorted(demo_table.frame["itemset"].iloc[1:])[:5]
    with pytest.raises(DivergenceInputError, match="Cannot sort by 'nope'"):
        slice_view(demo_table, sort_by="nope")


def test_slice_view_on_100k_slices_returns_top_n():
    rng = np.random.default_rng(0)
    n = 20_000
    df = pd.DataFrame({f"a{i}": rng.choice(list("xyz"), n) for i in range(11)})
    df["y"], df["p"] = rng.random(n) < 0.3, rng.random(n) < 0.3
    t = scan(df, target="y", prediction="p", positive=True, metrics=["fpr"], min_support=0.001, max_length=5)
    assert len(t) > 100_000
    everything = np.ones(len(t), dtype=bool)
    for col, asc in [("fpr_divergence", False), ("fpr_q", True), ("itemset", False)]:
        view = slice_view(t, metric="fpr", sort_by=col, ascending=asc, top_n=50)
        assert view.rows.index.tolist() == _reference(t, "fpr", col, asc, everything, 50).index.tolist()


def test_sort_options_default_first(demo_table, regression_table):
    # the default order (distinct findings first) leads every metric's sort box; any column follows
    assert next(iter(sort_options(demo_table, "fpr").values())) == "fpr_order"
    assert next(iter(sort_options(regression_table, "abs_error").values())) == "abs_error_order"
    assert {"fpr_divergence", "fpr_divergence_shrunk"} <= set(sort_options(demo_table, "fpr").values())
    assert "abs_error_lift_shortfall" in sort_options(regression_table, "abs_error").values()
    assert "fpr_q" in sort_options(demo_table, "fpr").values()
    # the winner's curse corrected where people look: the shrunk divergence and the corrected
    # interval's bound nearest zero sort the table too
    opts = sort_options(demo_table, "fpr")
    assert opts["Shrunk divergence"] == "fpr_divergence_shrunk"
    assert opts["Divergence bound nearest zero"] == "fpr_divergence_bound"
    view = slice_view(demo_table, metric="fpr", sort_by="fpr_divergence_shrunk", top_n=5)
    shrunk = demo_table.frame["fpr_divergence_shrunk"].iloc[1:]
    assert list(view.rows["fpr_divergence_shrunk"]) == sorted(shrunk, reverse=True)[:5]


def test_display_frame_formats_every_statistics_column(demo_table, regression_table):
    row = demo_table.frame.iloc[[demo_table.lookup(DEMO_TRUTH["elevated_fpr"])]]
    shown = display_frame(demo_table, row, "fpr").iloc[0]
    r = row.iloc[0]
    assert shown["Slice"] == "region=South, education=Primary"
    assert shown["Rows"] == f"{r['count']:,}" and shown["Measured"] == f"{r['fpr_count']:,}"
    assert shown["FPR"] == format_percent(r["fpr"])
    assert shown["Interval"] == f"[{format_percent(r['fpr_ci_low'])}, {format_percent(r['fpr_ci_high'])}]"
    assert shown["Divergence"] == format_divergence(r["fpr_divergence"], True)
    assert shown["q"] == format_p(r["fpr_q"]) and shown["Verdict"] == "above · indicative"
    assert "t" not in shown and "Support" not in shown and "p" not in shown and "Min size" not in shown
    assert "t" in display_frame(demo_table, row, "fpr", also=["fpr_t"]).columns
    # the planted slice (about 440 negatives) is significant but below n_min: its size is imprecise
    assert not r["fpr_meets_min_size"]
    assert display_frame(demo_table, row, "fpr", also=["fpr_meets_min_size"])["Min size"].iloc[0] == "no"
    whole = demo_table.frame.iloc[[0]]
    assert display_frame(demo_table, whole, "fpr", also=["fpr_meets_min_size"])["Min size"].iloc[0] == "yes"
    # a significant slice below the minimum size keeps its verdict, flagged; one not significant is too small
    assert display_frame(demo_table, row, "fpr")["Verdict"].iloc[0] == "above · indicative"
    small = demo_table.frame[demo_table.frame["fpr_verdict"] == "too small"].iloc[[0]]
    assert small.iloc[0]["fpr_q"] > 0.05
    assert display_frame(demo_table, small, "fpr")["Verdict"].iloc[0] == "too small"
    reg = display_frame(regression_table, regression_table.frame.iloc[1:4], "abs_error")
    assert {"Baseline", "Achievable", "Lift", "Lift shortfall", "Verdict"} <= set(reg.columns)
    assert "Measured" not in reg.columns  # every row has an error


def test_headline_counts(demo_table):
    h = headline(demo_table, "fpr")
    f = demo_table.frame.iloc[1:]
    assert h["overall"] == demo_table.overall("fpr")
    assert (h["overall_low"], h["overall_high"]) == demo_table.overall_interval("fpr")
    assert h["n_tested"] == f["fpr_p"].notna().sum() == demo_table.n_tested["fpr"]
    # significant: corrected p at most alpha and the corrected interval excluding 0 (for a rate,
    # Fisher's test and Newcombe's interval: a finding needs both)
    excludes = (f["fpr_divergence_adj_low"] > 0) | (f["fpr_divergence_adj_high"] < 0)
    assert h["n_significant"] == ((f["fpr_q"] <= 0.05) & excludes).sum()
    assert h["family"] == "metric" and h["n_family"] == demo_table.n_tested["fpr"]
    assert h["verdicts"] == {k: v for k, v in f["fpr_verdict"].value_counts().items()}
    assert h['min_size'].n_min == demo_table.assessment.min_size["fpr"].n_min


def test_the_significant_tile_says_over_how_many_tests_of_which_metric(demo_table):
    """Issue 43, point 4: each metric is its own family by default and the headline says so, per
    metric; with the joint family the tile counts every metric's tests."""
    from divergence import assess
    from divergence.present.cards import headline_tiles

    for m in ("fpr", "fnr"):
        tile = {t.label: t for t in headline_tiles(demo_table, m)}["Significant"]
        assert tile.caption == f"after correction over {demo_table.n_tested[m]:,} tests of {m}, q ≤ 0.05"
    joint = assess(demo_table, family="scan")
    tile = {t.label: t for t in headline_tiles(joint, "fnr")}["Significant"]
    assert tile.caption == f"after correction over {sum(joint.n_tested.values()):,} tests of every metric, q ≤ 0.05"


def test_guess_positive():  # the roles themselves: tests/data/test_roles.py
    assert guess_positive(pd.Series([0, 1, 1, 0])) == 1
    assert guess_positive(pd.Series(["<=50K", ">50K"])) == ">50K"
    assert guess_positive(pd.Series(["b", "a", None])) == "b"


@pytest.mark.parametrize("text, spec", [("", None), ("  ", None), ("4", 4), ("30, 50", [30.0, 50.0]),
                                        ("0.5;1.5", [0.5, 1.5]), ("40,", [40.0])])
def test_parse_bin_spec(text, spec):
    assert parse_bin_spec(text, "age") == spec


@pytest.mark.parametrize("text, message", [
    ("abc", "Bins of 'age': write a number of bins"), ("50, 30", "edges must be finite and increasing"),
    ("0", "at least 1"),
])
def test_parse_bin_spec_errors(text, message):
    with pytest.raises(DivergenceInputError, match=message):
        parse_bin_spec(text, "age")


def test_split_rows():
    df = pd.DataFrame({"period": ["a", "b", "a", "c"], "x": [1, 2, 3, 4]})
    mine, confirm = split_rows(df, "period", ["b", "c"])
    assert mine["x"].tolist() == [1, 3] and confirm["x"].tolist() == [2, 4]
    with pytest.raises(DivergenceInputError, match="leaves no rows to confirm"):
        split_rows(df, "period", ["z"])
    with pytest.raises(DivergenceInputError, match="Split column 'nope' is not in the data"):
        split_rows(df, "nope", ["a"])
    # a year read as a number matches the same year written as text (a plan from YAML), and back
    years = pd.DataFrame({"year": [2023, 2024, 2024, 2025], "x": [1, 2, 3, 4]})
    for wanted in (["2024"], [2024.0], [2024]):
        assert split_rows(years, "year", wanted)[1]["x"].tolist() == [2, 3]
    text = years.astype({"year": str})
    assert split_rows(text, "year", [2024])[1]["x"].tolist() == [2, 3]


def test_slice_table_figure_draws_the_display(demo_table):
    view = slice_view(demo_table, metric="fpr", top_n=5)
    shown = display_frame(demo_table, view.rows, "fpr")
    fig = slice_table_figure(shown)
    cells = fig.data[0].cells.values
    assert [list(c) for c in cells] == [shown[c].tolist() for c in shown.columns]
    assert [h.replace("<b>", "").replace("</b>", "") for h in fig.data[0].header.values] == list(shown.columns)
    verdict_fill = fig.data[0].cells.fill.color[list(shown.columns).index("Verdict")]
    assert verdict_fill[0] == "rgba(217,72,15,0.28)"  # 'above'


def test_interval_figure_draws_each_interval(demo_table):
    view = slice_view(demo_table, metric="fpr", sort_by="fpr_divergence", top_n=12)
    fig = interval_figure(demo_table, view.rows, "fpr", level_label="95% intervals")
    drawn = {}
    for tr in fig.data:
        if tr.name == "distinct finding":
            continue
        for x, lo, hi, idx, symbol in zip(tr.x, tr.error_x.arrayminus, tr.error_x.array, tr.customdata,
                                          [tr.marker.symbol] * len(tr.x)):
            drawn[int(idx)] = (x, x - lo, x + hi, symbol)
    assert sorted(drawn) == sorted(view.rows.index)
    # the distinct findings also as large labelled stars, exactly those rows (issue 45 point 6)
    stars = [tr for tr in fig.data if tr.name == "distinct finding"]
    found = view.rows.index[view.rows["fpr_finding"].astype(bool)]
    assert len(stars) == 1 and len(found) >= 1
    assert sorted(int(i) for i in stars[0].customdata) == sorted(found)
    assert stars[0].marker.symbol == "star" and stars[0].marker.size > 9 and set(stars[0].text) == {"finding"}
    for idx, (x, lo, hi, symbol) in drawn.items():
        r = demo_table.frame.loc[idx]
        assert x == pytest.approx(100 * r["fpr"]) and lo == pytest.approx(100 * r["fpr_ci_low"])
        assert hi == pytest.approx(100 * r["fpr_ci_high"])
        assert symbol == ("circle" if r["fpr_meets_min_size"] else "circle-open")
    line = [s for s in fig.layout.shapes if s.type == "line"][0]
    band = [s for s in fig.layout.shapes if s.type == "rect"][0]
    assert line.x0 == pytest.approx(100 * demo_table.overall("fpr"))
    low, high = demo_table.overall_interval("fpr")
    assert (band.x0, band.x1) == (pytest.approx(100 * low), pytest.approx(100 * high))
    lo_axis, hi_axis = fig.layout.xaxis.range  # the band and every interval are inside the axis
    assert lo_axis < 100 * min(low, view.rows["fpr_ci_low"].min()) and hi_axis > 100 * view.rows["fpr_ci_high"].max()
    assert fig.layout.xaxis.title.text.startswith("FPR (%): 95% intervals")


def test_table_csv_round_trip(demo_table):
    back = pd.read_csv(io.BytesIO(table_csv(demo_table.frame)), keep_default_na=False, na_values=[""])
    assert len(back) == len(demo_table)
    np.testing.assert_array_equal(back["fpr_q"].to_numpy()[1:], demo_table.frame["fpr_q"].to_numpy()[1:])
    assert pd.isna(back["itemset"].iloc[0]) and back["itemset"].iloc[1] == demo_table.frame["itemset"].iloc[1]


def test_figure_html_is_self_contained(demo_table):
    html = figure_html(interval_figure(demo_table, slice_view(demo_table, top_n=3).rows), title="Intervals")
    assert "<title>Intervals</title>" in html and "Plotly.newPlot" in html and "plotly.js v" in html
    assert "<script src=" not in html  # nothing fetched: opens offline


@pytest.mark.slow
def test_figure_png():
    if not png_supported():
        pytest.skip("kaleido or Chromium (/usr/bin/chromium) missing: PNG export unavailable here")
    import plotly.graph_objects as go

    png = figure_png(go.Figure(go.Bar(x=[1, 2], y=[3, 4])), width=400, height=300, scale=1)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (400, 300)
    # issue 32 point 1: the exporter's Chromium (a child of this process) sends anything it would fetch
    # on its own to a proxy where nothing listens, so no outside name is looked up
    from divergence.present.export import NO_PROXY

    browsers = [c for c in _descendant_cmdlines() if "chromium" in c and "--type=" not in c]  # not its helpers
    assert browsers, "no exporter Chromium found among this process's children"
    assert all(f"--proxy-server={NO_PROXY}" in c for c in browsers), browsers


def _descendant_cmdlines() -> list[str]:
    """The command lines of this process's descendants (Linux /proc)."""
    import os

    parent = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                parent[int(pid)] = int(fh.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
    mine, grew = {os.getpid()}, True
    while grew:
        more = {p for p, pp in parent.items() if pp in mine} - mine
        mine |= more
        grew = bool(more)
    out = []
    for pid in mine - {os.getpid()}:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                out.append(fh.read().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return out


def test_one_default_sort_for_table_view_report_and_app():
    """The default order is decided once (SliceTable.default_sort_column: each slice's position
    in the default order, ``M_order``, for every metric); the view, the sort options, ``top`` and
    the report all follow it."""
    from divergence.report.page import _sorted_rows  # the report's own ordering

    rng = np.random.default_rng(4)
    n = 600
    df = pd.DataFrame({"a": rng.choice(["x", "y", "z"], n), "b": rng.choice(["u", "v"], n),
                       "label": rng.choice(["no", "yes"], n)})
    df["pred"] = np.where(rng.random(n) < 0.7, df["label"], rng.choice(["no", "yes"], n))
    table = scan(df, target="label", prediction="pred", positive="yes", metrics=["error", "fpr"],
                 min_support=0.05)
    want = {"error": "error_order", "fpr": "fpr_order"}
    for m, col in want.items():
        assert table.default_sort_column(m) == col
        assert next(iter(sort_options(table, m).values())) == col
        view = slice_view(table, metric=m, top_n=len(table))
        assert view.sort_by == col and not view.ascending  # "largest first": from the first slice
        assert list(table.top(5, metric=m)["itemset"].astype(str)) == list(view.rows["itemset"].astype(str))[:5]
        assert list(_sorted_rows(table, m)["itemset"].astype(str)) == list(view.rows["itemset"].astype(str))


def test_a_stuck_png_export_is_started_again_then_refused(monkeypatch):
    """kaleido's Chromium can get stuck on a call (plotly/Kaleido#441): after PNG_TIMEOUT the
    exporter is started again and the image drawn again; stuck twice, a line says so (the
    download never waits forever)."""
    import threading
    import time

    import plotly.graph_objects as go

    from divergence.present import export

    release = threading.Event()
    calls, restarts = [], []

    def to_image(self, **kw):
        calls.append(kw)
        if len(calls) == 1 or stuck_always:
            release.wait(5)  # stuck (released at the end of the test)
        return b"\x89PNG fake"

    monkeypatch.setattr(export, "png_supported", lambda: True)
    monkeypatch.setattr(export, "PNG_TIMEOUT", 0.2)
    monkeypatch.setattr(export, "_restart_exporter", lambda: restarts.append(1))
    monkeypatch.setattr(export, "_start_exporter", lambda: None)
    monkeypatch.setattr(go.Figure, "to_image", to_image)
    stuck_always = False
    start = time.monotonic()
    assert figure_png(go.Figure(), width=10, height=10) == b"\x89PNG fake"
    assert len(calls) == 2 and len(restarts) == 1 and time.monotonic() - start < 3
    stuck_always = True
    with pytest.raises(DivergenceInputError, match=r"PNG export did not answer within 0.2 s, twice"):
        figure_png(go.Figure(), width=10, height=10)
    assert len(calls) == 4 and len(restarts) == 3
    release.set()


def test_every_exported_figure_says_its_data_metric_settings_and_time():
    from datetime import datetime

    from divergence import scan
    from divergence.data.datasets import DEMO_ROLES, load_demo
    from divergence.present.export import export_caption, figure_html, titled_figure
    from divergence.present.figures import interval_figure, slice_table_figure
    from divergence.present.views import display_frame

    t = scan(load_demo(), **DEMO_ROLES["classification"], min_support=0.05, max_length=2)
    when = datetime(2026, 12, 1, 18, 10, tzinfo=UTC)
    cap = export_caption(t, "fpr", data_label="credit.csv", when=when)
    assert cap == ("credit.csv · FPR (fpr) · support ≥ 0.05, up to 2 items, exploratory, 95% confidence, "
                   "Benjamini–Hochberg, no replication · exported 2026-12-01 18:10 UTC")
    # a metric whose label is its name is said once ('error', not 'error (error)')
    e = scan(load_demo(2000), **dict(DEMO_ROLES["classification"], metrics=["error"]), min_support=0.05, max_length=1)
    assert export_caption(e, "error", data_label="credit.csv", when=when).startswith("credit.csv · error · support")
    table_fig = slice_table_figure(display_frame(t, t.top(5, metric="fpr"), "fpr"), height=None)
    titled = titled_figure(table_fig, "The slice table (as shown)", cap)
    assert titled.layout.title.text == f"The slice table (as shown)<br><sup>{cap}</sup>"
    assert not table_fig.layout.title.text  # the page's figure is left as it was
    own = interval_figure(t, t.top(5, metric="fpr"), "fpr")
    kept = titled_figure(own, "Interval plot", cap).layout.title.text
    assert kept.endswith(f"<br><sup>{cap}</sup>") and kept.startswith(own.layout.title.text or "Interval plot")
    page = figure_html(titled, title="The slice table")
    assert "credit.csv" in page and "exported 2026-12-01 18:10 UTC" in page


def test_a_finding_whose_honest_estimate_is_about_zero_is_not_a_card():
    """Issue 30 point 3: a card said "reliably lower" while its own shrunk estimate was −1.3e-7 pp. A
    distinct finding whose honest estimate (replicated, else shrunk) is within a tenth of δ of zero
    gets no card; the others keep theirs."""
    from divergence import scan
    from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, DEMO_TRUTH, load_demo
    from divergence.present.cards import findings

    t = scan(load_demo(), **DEMO_ROLES["classification"], attributes=DEMO_ATTRIBUTES, min_support=0.02)
    cards, _ = findings(t, "fpr")
    assert [c.itemset for c in cards][:1] == [DEMO_TRUTH["elevated_fpr"]]
    i = cards[0].index
    shrunk = t.columns["fpr_divergence_shrunk"].copy()
    shrunk[i] = -1.3e-9
    about_zero = dataclasses.replace(t, columns={**t.columns, "fpr_divergence_shrunk": shrunk})
    assert DEMO_TRUTH["elevated_fpr"] not in [c.itemset for c in findings(about_zero, "fpr")[0]]
