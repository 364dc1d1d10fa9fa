"""divergence.present.formats: one source for the numbers, verdict names and colours, and the words the
app and the report use; and the figures drawn from it (units, legends, thresholds)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from divergence import VERDICTS, overlap, scan
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, DEMO_TRUTH, load_demo
from divergence.explain.shapley import global_divergence, item_contributions
from divergence.present.cards import findings
from divergence.present.figures import contribution_figure, item_values_figure, lattice_figure, overlap_figure
from divergence.present.formats import (
    ACTIONS,
    GLOSSARY,
    VERDICT_COLORS,
    VERDICT_TEXT,
    column_help,
    format_threshold,
    verdict_color,
    verdict_label,
    verdict_legend,
)
from divergence.present.views import display_frame, redundancy_epsilon
from divergence.report.page import build_report

STATS = dict(confidence=0.95, correction="bh", bootstrap=200, seed=0)
COLOUR = re.compile(r"^(#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?|rgba?\([\d.,\s]+\))$")


@pytest.fixture(scope="module")
def fpr_table():
    return scan(load_demo(), attributes=DEMO_ATTRIBUTES, min_support=0.02, **DEMO_ROLES["classification"], **STATS)


@pytest.fixture(scope="module")
def regression_table():
    return scan(load_demo(), attributes=DEMO_ATTRIBUTES, min_support=0.02, **DEMO_ROLES["regression"], **STATS)


def test_every_verdict_has_a_colour_a_sentence_and_a_legend_line():
    assert [v for v, _, _ in verdict_legend()][:len(VERDICTS)] == list(VERDICTS)
    for v in VERDICTS:
        assert COLOUR.match(VERDICT_COLORS[v]) and VERDICT_TEXT[v]
    assert len({VERDICT_COLORS[v] for v in VERDICTS}) == len(VERDICTS)  # told apart by colour
    assert verdict_color("a verdict from the future") == "#868e96"
    assert set(ACTIONS) >= {"defect", "hard cohort", "above", "below"}


def test_glossary_covers_every_term_and_column(fpr_table, regression_table):
    for term in ("q", "p", "t", "n_min", "bootstrap", "lift", "lift shortfall", "δ", "ε", "support", "shapley",
                 "corrective", "indicative", "divergence", "interval", "verdict"):
        assert GLOSSARY[term]
    for table, m in ((fpr_table, "fpr"), (regression_table, "abs_error")):
        shown = display_frame(table, table.frame.iloc[1:4], m, also=["length", "support", f"{m}_t", f"{m}_p",
                                                                      f"{m}_meets_min_size"])
        for col in shown.columns:
            assert column_help(col)


@pytest.mark.parametrize("x, binary, text", [(0.05, True, "5 pp"), (7.15186, False, "7.2"), (0.0301, True, "3 pp"),
                                             (1234.5, False, "1,234"), (None, False, "–")])
def test_thresholds_are_rounded_for_titles(x, binary, text):
    assert format_threshold(x, binary) == text


def test_verdict_label_flags_a_significant_slice_below_the_minimum_size():
    assert verdict_label("above", 0.3, 1e-16, False) == "above · indicative"
    assert verdict_label("defect", 0.3, 1e-16, False) == "defect · indicative"
    assert verdict_label("above", 0.3, 1e-16, True) == "above"
    assert verdict_label("above", 0.3, 1e-16) == "above"
    assert verdict_label("too small", 0.3, 0.4, False) == "too small"  # not significant: nothing to flag
    assert verdict_label("noise", 0.3, 0.4, True) == "noise"
    assert verdict_label("", 0.0, np.nan) == "–"


def test_redundancy_epsilon_is_in_units_of_the_metric_spread(fpr_table, regression_table):
    for table, m in ((fpr_table, "fpr"), (regression_table, "abs_error")):
        sigma = table.assessment.min_size[m].sigma
        assert redundancy_epsilon(table, m, 0.05) == pytest.approx(0.05 * sigma)
    p = fpr_table.overall("fpr")
    assert redundancy_epsilon(fpr_table, "fpr", 1.0) == pytest.approx(np.sqrt(p * (1 - p)))


def test_findings_cards_say_who_what_how_sure_and_what_to_do(fpr_table, regression_table):
    cards, total = findings(fpr_table, "fpr")
    assert cards[0].itemset == DEMO_TRUTH["elevated_fpr"] and cards[0].verdict == "above"
    r = fpr_table.row(DEMO_TRUTH["elevated_fpr"])
    # below the minimum size (415 negatives against n_min 791): the card says indicative, as the table
    assert not r["fpr_meets_min_size"] and not cards[0].meets and cards[0].badge == "above · indicative"
    assert "indicative" in cards[0].sure and "n_min = 791" in cards[0].sure
    assert cards[0].who == (f"{r['count']:,} rows (5.90% of all); FPR measured on {r['fpr_count']:,}; accounts for "
                            "114 other significant slices (refinements, wider slices holding its rows, slices it lifts "
                            "or lowers)")
    assert cards[0].what == ("FPR 39.0% [34.5%, 43.8%] against 10.2% for the whole dataset (+28.9 pp; +28.8 pp shrunk "
                             "for the winner's curse); given the other findings, +30.7 [25.7, 35.9] pp (its effect "
                             "in the findings' model)")
    # q over the family: fpr's slices by default (each metric its own family, issue 43)
    assert cards[0].sure.startswith("q = 2.2e-56 (Benjamini–Hochberg over 1,337 tests: the 1,337 slices tested for "
                                    "fpr)")
    # the cards are the distinct findings: here the planted one alone, every spillover explained by it
    assert total == int(fpr_table.frame["fpr_finding"].sum()) == 1 and cards[0].distinct and cards[0].covers == 115
    # no card refines another
    items = [set(c.itemset.split(", ")) for c in cards]
    assert not any(a < b or b < a for i, a in enumerate(items) for b in items[i + 1:])
    cards, _ = findings(regression_table, "abs_error")
    by_slice = {c.itemset: c for c in cards}
    assert by_slice[DEMO_TRUTH["defect"]].verdict == "defect"
    assert by_slice[DEMO_TRUTH["hard_cohort"]].verdict == "hard cohort"
    assert by_slice[DEMO_TRUTH["defect"]].todo == ACTIONS["defect"]
    assert "best constant guess" in by_slice[DEMO_TRUTH["hard_cohort"]].what


def test_lattice_legend_has_plain_colours_and_divergences_in_pp(fpr_table):
    fig = lattice_figure(fpr_table, DEMO_TRUTH["elevated_fpr"], metric="fpr", threshold=0.05)
    legend = [tr for tr in fig.data if tr.showlegend is not False and tr.name]
    assert legend
    for tr in legend:  # an array of values mapped to a colour scale has no legend colour (drawn black)
        if tr.marker is not None and tr.marker.color is not None:
            assert isinstance(tr.marker.color, str) and COLOUR.match(tr.marker.color), tr.name
            assert tr.marker.color not in ("#000", "#000000", "black")
    assert "5 pp" in fig.layout.title.text and "0.05" not in fig.layout.title.text
    labels = [t for tr in fig.data if tr.mode == "markers+text" for t in tr.text]
    row = fpr_table.row(DEMO_TRUTH["elevated_fpr"])
    assert f"+{100 * row['fpr_divergence']:.1f} pp" in labels


def test_bar_charts_in_pp_for_a_rate(fpr_table):
    contrib = item_contributions(fpr_table, DEMO_TRUTH["elevated_fpr"], metric="fpr")
    fig = contribution_figure(contrib, binary=True)
    drawn = {y: x for tr in fig.data for x, y in zip(tr.x, tr.y)}
    assert drawn == pytest.approx({i: 100 * c for i, c in zip(contrib["item"], contrib["contribution"])})
    assert "+28.9 pp" in fig.layout.title.text and fig.layout.xaxis.title.text.endswith("(pp)")
    values = global_divergence(fpr_table, metric="fpr")
    fig = item_values_figure(values, value="individual", metric="fpr", binary=True, top=5)
    assert fig.layout.xaxis.title.text.endswith("(pp)")


def test_overlap_figure(fpr_table):
    slices = [DEMO_TRUTH["elevated_fpr"], "education=Primary", "region=South"]
    shared = overlap(fpr_table, slices)
    fig = overlap_figure(shared)
    z = np.array(fig.data[0].z, dtype=float)
    own = np.diag(shared.to_numpy())
    np.testing.assert_allclose(z, shared.to_numpy() / own[:, None])
    assert z[0, 1] == 1.0  # every row of South & Primary is a Primary row
    assert fig.data[0].text[0][0] == f"{int(own[0]):,} rows"


def test_report_draws_from_the_same_formats(fpr_table):
    html = build_report(fpr_table, data_label="built-in")
    cards, _ = findings(fpr_table, "fpr")
    assert html.count("class='card'") >= len(cards)
    for c in cards:  # the same words as the app's cards
        assert c.what.replace("&", "&amp;") in html.replace("&#x27;", "'")
    r = fpr_table.row(DEMO_TRUTH["elevated_fpr"])
    assert ">+28.9 pp</td>" in html and ">2.2e-56</td>" in html and ">39.0%</td>" in html
    assert f">{r['count']:,}</td>" in html
    for v, colour, text in verdict_legend(["above", "too small"]):
        assert f"background:{colour}" in html
    assert 'title="' + column_help("q").replace("'", "&#x27;") + '"' in html
    f = fpr_table.frame
    imprecise = f[~f["fpr_meets_min_size"] & f["fpr_verdict"].isin(["above", "below"])]
    assert len(imprecise) and "above · indicative" in html


def test_verdict_lists_and_colours_have_one_home():
    """The verdict lists live in divergence.vocabulary, one each; the engine, formats, the
    report, the views and the comparison read them from there, and every verdict has a colour, a
    sentence and (for a finding) an action."""
    import importlib

    from divergence import vocabulary
    from divergence.comparison.compare import COMPARE_VERDICTS
    from divergence.present import cards, compare_views, formats
    from divergence.report import page

    assess, compare = (importlib.import_module(f"divergence.{m}") for m in ("stats.assess", "comparison.compare"))

    assert assess.VERDICTS is vocabulary.VERDICTS and compare.COMPARE_VERDICTS is vocabulary.COMPARE_VERDICTS
    assert formats.FINDING_VERDICTS is vocabulary.FINDING_VERDICTS
    assert page.FINDING_VERDICTS is formats.FINDING_VERDICTS
    assert compare_views.COMPARE_VERDICT_COLORS is formats.COMPARE_VERDICT_COLORS
    assert set(formats.COMPARE_VERDICT_COLORS) == set(COMPARE_VERDICTS)
    assert set(vocabulary.VERDICTS) <= set(formats.VERDICT_COLORS) and set(vocabulary.VERDICTS) <= set(formats.VERDICT_TEXT)
    assert set(vocabulary.FINDING_VERDICTS) <= set(vocabulary.VERDICTS)
    assert all(v in formats.ACTIONS for v in vocabulary.FINDING_VERDICTS)
    # finding cards: the finding verdicts that ask for an action, in the same order
    assert cards._FINDING_ORDER == ("defect", "hard cohort", "undetermined", "above", "below")
    assert set(cards._FINDING_ORDER) < set(formats.FINDING_VERDICTS)


def test_wrap_itemset_breaks_after_commas():
    from divergence.present.formats import wrap_itemset

    # text for a figure: Plotly shows an entity as its character
    assert wrap_itemset("age=<25, sex=Male") == "age=&lt;25, sex=Male"
    assert wrap_itemset("age=<25, sex=Male, race=Other", 18) == "age=&lt;25, sex=Male,<br>race=Other"
    assert wrap_itemset("a=1, b=2, c=3", 4) == "a=1,<br>b=2,<br>c=3"
    assert wrap_itemset("one-long-item=value", 5) == "one-long-item=value"  # an item is never cut


def test_one_sentence_for_the_multiple_testing_family():
    import dataclasses

    from divergence.present.formats import family_sentence
    from divergence.table import Assessment

    def assessment(**kw) -> Assessment:
        return Assessment(confidence=0.95, bootstrap=0, seed=0, top_k=None, min_size={}, corrected_level={},
                          exploratory=True, replication=None, replication_rows=None, bootstrap_skipped=False,
                          intervals="analytic", verdicts_from="rows", **kw)

    both = assessment(n_tested={"fpr": 1337, "fnr": 1337}, family_size={"fpr": 2674, "fnr": 2674}, family="scan",
                      correction="bh")
    assert family_sentence(both, "fpr") == ("Benjamini–Hochberg over 2,674 tests: the 1,337 slices tested for each "
                                            "of fpr and fnr")
    alone = assessment(n_tested={"fpr": 1337, "fnr": 1200}, family_size={"fpr": 1337, "fnr": 1200}, family="metric",
                       correction="holm")
    assert family_sentence(alone, "fnr") == "Holm over 1,200 tests: the 1,200 slices tested for fnr"
    uneven = dataclasses.replace(both, n_tested={"fpr": 1337, "fnr": 1300}, family_size={"fpr": 2637, "fnr": 2637})
    assert family_sentence(uneven, "fnr").endswith("the slices tested for fpr (1,337), fnr (1,300)")
    assert family_sentence(both, "fpr", extra=2).endswith("and 2 more: this slice, typed by hand, once per metric")
    assert family_sentence(both, "fpr", extra=2).startswith("Benjamini–Hochberg over 2,676 tests")


def test_md_text_breaks_bare_autolinks():
    """Issue 33 F18, issue 47: GitHub's markdown turns a bare URL, a www. name or an address into a live
    link. A backslash escape did not stop Streamlit's (it finds addresses in the text after the escapes
    are read: tests/e2e/test_links_browser.py checks what the browser draws); a word joiner (U+2060)
    inside the pattern does, and draws nothing."""
    from divergence.present.formats import md_text

    wj = "\u2060"
    assert md_text("see http://evil.example/x and HTTPS://a.b") == f"see http:{wj}//evil.example/x and HTTPS:{wj}//a.b"
    assert md_text("www.evil.example") == f"www{wj}.evil.example"
    assert md_text("me@evil.example") == f"me@{wj}evil.example"
    assert md_text("ndcg@10") == "ndcg@10" and md_text("a: b") == "a: b"


def test_one_word_for_a_significant_slice_below_the_minimum_size():
    """issue 30 point 8: 'indicative' is the one word for a significant slice below n_min on every
    surface (table, cards, CLI, report, dashboard, docs); the retired words appear nowhere."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    files = [*root.glob("divergence/**/*.py"), *root.glob("divergence/**/*.j2"), *root.glob("ui/*.py"),
             *root.glob("pages/*.py"), root / "app.py", root / "README.md",
             *[p for p in root.glob("docs/*.md") if p.name != "CHANGELOG.md"]]
    retired = re.compile(r"\b(imprecise|underpowered|under-powered|too small to be sure|provisional finding)\b", re.I)
    found = [f"{p.relative_to(root)}: {m.group(0)}" for p in files for m in retired.finditer(p.read_text("utf-8"))]
    assert not found, found
    from divergence.present.formats import verdict_label

    assert verdict_label("above", None, None, False) == "above · indicative"
