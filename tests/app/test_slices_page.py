"""AppTest of the Slices page's direct manipulation and plain language (issue 13): sort by a
header click, open by a row click, the selection kept across reruns, any slice found or edited
by typing items (its statistics from the engine), the planted findings of the built-in data in
one click, findings as cards, the verdict legend. Numbers are checked against the engine."""
from __future__ import annotations

import pytest
import streamlit as st
from apptest_readers import (
    APP,
    charts,
    click_header,
    grid_key,
    keyed,
    metrics,
    open_row,
    run_scan,
    setting,
    table_cells,
)
from streamlit.testing.v1 import AppTest

import divergence
from divergence import assess, redundant_itemsets, scan
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, DEMO_TRUTH, load_demo
from divergence.present.formats import (
    VERDICT_TEXT,
    family_sentence,
    format_count,
    format_divergence,
    format_p,
    format_value,
)
from divergence.present.views import redundancy_epsilon, slice_view

STATS = dict(confidence=0.95, correction="bh", bootstrap=0, seed=0, exploratory=True)


@pytest.fixture(scope="module")
def reference():
    table = scan(load_demo(), attributes=DEMO_ATTRIBUTES, min_support=0.02, **DEMO_ROLES["classification"])
    return assess(table, **STATS)


@pytest.fixture(scope="module", autouse=True)
def _fresh_caches():
    """Caches cleared once per module: each test's app then finds the built-in scan cached (the
    tests here read results, they do not count scans), which keeps the module quick under load."""
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture
def app():
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    assert not at.exception
    return at


def _view(table, metric="fpr", **kw):
    eps = redundancy_epsilon(table, metric, 0.05)
    return slice_view(table, metric=metric, exclude=redundant_itemsets(table, eps, metric=metric),
                      top_n=kw.pop("top_n", 25), **kw)


def _bar_items(at) -> list[str]:
    spec = next(s for s in charts(at) if s["data"] and s["data"][0]["type"] == "bar")
    return sorted(y for tr in spec["data"] for y in tr["y"])


def _type_items(at: AppTest, items: list[str]) -> AppTest:
    keyed(at.multiselect, "w:slice_items").set_value(items).run()
    assert not at.exception, at.exception
    return at


def test_header_click_sorts_every_slice_and_again_reverses(app, reference):
    at = click_header(app, "Rows")
    assert not at.exception
    assert table_cells(at)["Slice"] == _view(reference, sort_by="count", ascending=False).rows["itemset"].tolist()
    assert keyed(at.selectbox, "w:sort_by").value == "Rows"
    at = click_header(at, "Rows")  # the sorted column again: the other way
    assert table_cells(at)["Slice"] == _view(reference, sort_by="count", ascending=True).rows["itemset"].tolist()
    assert any("sorted by Rows, smallest first" in c.value for c in at.caption)
    at = click_header(at, "q")
    assert table_cells(at)["Slice"] == _view(reference, sort_by="fpr_q", ascending=True).rows["itemset"].tolist()


def test_row_click_opens_and_the_selection_survives_reruns(app, reference):
    view = _view(reference)
    chosen = view.rows["itemset"].iloc[4]
    at = open_row(app, chosen)
    assert _bar_items(at) == sorted(chosen.split(", "))
    assert metrics(at)["Rows"] == format_count(reference.row(chosen)["count"])
    # another widget reruns the page: the same row stays selected, the same slice open
    keyed(at.selectbox, "w:top_n").set_value(50).run()
    sel = at.session_state[grid_key(at)]["selection"]
    assert table_cells(at)["Slice"][sel["rows"][0]] == chosen
    assert _bar_items(at) == sorted(chosen.split(", "))


def test_find_a_mined_slice_by_typing_its_items(app, reference):
    # channel=App is mined but not in the top 25 by FPR divergence
    assert "channel=App" not in _view(reference).rows["itemset"].tolist()
    at = _type_items(app, ["channel=App"])
    row = reference.row("channel=App")
    m = metrics(at)
    assert m["Rows"] == format_count(row["count"]) and m["FPR"] == format_value(row["fpr"], True)
    assert m["q"] == format_p(row["fpr_q"]) and m["Verdict"] == row["fpr_verdict"]
    assert not any("Not mined" in i.value for i in at.info)
    # back to the table's slice
    at.button(key="back-to-table").click().run()
    assert _bar_items(at) == sorted(_view(reference).rows["itemset"].iloc[0].split(", "))


def test_edit_a_slice_below_the_support(app, reference):
    items = ["sex=Female", "region=South", "education=Primary", "channel=App"]
    at = _type_items(app, items)
    expected = divergence.measure_slice(reference, items)
    assert not expected.mined
    row = expected.row
    m = metrics(at)
    assert m["Rows"] == format_count(row["count"]) == "60"
    assert m["FPR"] == format_value(row["fpr"], True) and m["Divergence"] == format_divergence(row["fpr_divergence"], True)
    # inside the planted slice: significant at 60 rows, so it keeps its verdict, its size below n_min
    assert m["q"] == format_p(row["fpr_q"]) and m["Verdict"] == row["fpr_verdict"] == "above"
    assert not row["fpr_meets_min_size"]
    assert any("indicative" in c.value for c in at.caption)
    note = next(i.value for i in at.info if "Not mined" in i.value)
    assert "below the minimum support 0.02" in note and f"{expected.n_family['fpr']:,} in the family" in note
    family = next(c.value for c in at.caption if c.value.startswith("p = "))
    extra = expected.table.assessment.family_size["fpr"] - reference.assessment.family_size["fpr"]
    assert family == f"p = {format_p(row['fpr_p'])}; q: {family_sentence(reference.assessment, 'fpr', extra=extra)}"
    # one family per metric: the slice and the one of its subsets the scan did not mine (below the support)
    assert family.endswith("2 more: this slice, typed by hand, and 1 of its subsets the scan did not mine")
    assert _bar_items(at) == sorted(items)
    lattice = next(s for s in charts(at) if any(tr.get("mode") == "markers+text" for tr in s["data"]))
    assert "Lattice of sex=Female, region=South, education=Primary, channel=App" in lattice["layout"]["title"]["text"]


def test_edit_with_a_column_left_out_of_the_scan(app):
    at = app
    at.switch_page("pages/data.py").run()
    keyed(at.multiselect, "w:attributes_pick").set_value(["age", "sex", "region", "education", "employment"]).run()
    at.switch_page("pages/outcome.py").run()
    run_scan(at)
    at.switch_page("pages/slices.py").run()
    options = keyed(at.multiselect, "w:slice_items").options
    assert "channel=App · not scanned" in options and "applicant_id" not in " ".join(options)
    at = _type_items(at, ["region=South", "channel=App"])
    table = at.session_state["result"]["table"]
    expected = divergence.measure_slice(table, ["region=South", "channel=App"], data=load_demo())
    assert metrics(at)["Rows"] == format_count(expected.row["count"])
    assert metrics(at)["FPR"] == format_value(expected.row["fpr"], True)
    assert any("'channel' was left out of the scan's attributes" in i.value for i in at.info)


def test_bad_edit_is_named_and_the_page_stays(app):
    at = _type_items(app, ["region=South", "region=North"])
    assert any("one item per attribute: 'region' appears twice" in e.value for e in at.error)
    assert table_cells(at)["Slice"]  # the table is still there


@pytest.mark.parametrize("case, metric, verdict", [("defect", "abs_error", "defect"),
                                                   ("hard_cohort", "abs_error", "hard cohort"),
                                                   ("elevated_fpr", "fpr", "above")])
def test_planted_findings_in_one_click(app, case, metric, verdict):
    at = app
    at.button(key=f"demo-{case}").click().run()
    assert not at.exception
    itemset = DEMO_TRUTH[case]
    assert _bar_items(at) == sorted(itemset.split(", "))
    assert metrics(at)["Verdict"] == verdict
    assert at.session_state["view_metric"] == metric
    table = at.session_state["result"]["table"]
    assert metrics(at)["Rows"] == format_count(table.row(itemset)["count"])


def test_finding_cards_open_their_slice_and_the_legend_explains_verdicts(app, reference):
    at = app
    values = [md.value for md in at.markdown]
    heads = [v.strip("`").strip() for k, v in enumerate(values[1:], 1)
             if v.startswith("`") and values[k - 1].startswith("<span style='background:")]
    first = heads[0]  # the built-in data's one distinct finding
    card_buttons = [b for b in at.button if b.key and b.key.startswith("card-")]
    assert len(card_buttons) == 1
    card_buttons[0].click().run()
    assert _bar_items(at) == sorted(first.split(", "))
    legend = " ".join(c.value for c in at.caption)
    for verdict in ("above", "below", "too small", "noise"):
        assert VERDICT_TEXT[verdict] in legend
    # a significant slice below the minimum size keeps its verdict in the table, flagged; too small is plain
    # (in the default order such slices come after every slice that meets it: the table's own formatting)
    from divergence.present.views import display_frame

    f = reference.frame
    small = f[(f["fpr_verdict"].isin(["above", "below"])) & ~f["fpr_meets_min_size"].astype(bool)].head(5)
    shown = list(display_frame(reference, small, "fpr")["Verdict"])
    assert shown and all(v in ("above · indicative", "below · indicative") for v in shown)
    plain = list(display_frame(reference, f[f["fpr_verdict"] == "too small"].head(5), "fpr")["Verdict"])
    assert plain and all(v == "too small" for v in plain)


def test_a_cut_typed_in_the_slice_editor_is_measured(app, reference):
    """A cut on a numeric column (income<=20) typed into the editor: its numbers from the engine."""
    at = _type_items(app, ["region=South", "income<=20"])
    assert not [e.value for e in at.error]
    want = divergence.measure_slice(reference, ["region=South", "income<=20"], data=load_demo())
    assert metrics(at)["Rows"] == format_count(want.row["count"])
    assert metrics(at)["FPR"] == format_value(want.row["fpr"], True)
    assert any("typed by hand" in i.value for i in at.info)
    assert keyed(at.multiselect, "w:slice_items").value == ["region=South", "income<=20"]
    assert sorted(_bar_items(at)) == ["income=<=20", "region=South"]


def test_the_finding_column_sits_beside_the_verdict(app):
    """Issue 30 point 8: "explained by" sat in the last column, off-screen at 1280 px, while the spillover
    row's bold 'above' showed. The grid's columns now start Slice, Verdict, Finding, and those three are
    narrow enough to leave the counts and the metric in view."""
    grid = app.dataframe[0].proto
    order = list(grid.column_order)
    assert order[:3] == ["Slice", "Verdict", "Finding"] and order[-1] == "Order"


def test_a_finding_inside_another_is_shown_under_it_on_the_page():
    """issue 30 point 2 on screen: a small file (900 passengers) whose third-class men are a finding
    inside the men's: its card comes right after the men's, says where it sits and how it differs from
    the rest of them, and the header does not call the cards different cohorts."""
    from apptest_readers import finish_scan, fresh_app, go, keyed
    from test_nested_findings import passengers

    at = go(fresh_app(300), "data")
    keyed(at.radio, "w:source").set_value("upload").run()
    at.file_uploader[0].set_value(("passengers.csv", passengers().to_csv(index=False).encode(), "text/csv")).run()
    keyed(at.selectbox, "w:target").set_value("survived").run()
    keyed(at.radio, "w:pred_kind").set_value("labels").run()
    if keyed(at.selectbox, "w:prediction").value != "predicted":
        keyed(at.selectbox, "w:prediction").set_value("predicted").run()
    if setting(at, "positive") != 1:
        keyed(at.selectbox, "w:positive").set_value(1).run()
    at = go(at, "outcome")
    at.button(key="run").click().run()
    at = go(finish_scan(at), "slices")
    assert not at.exception, at.exception
    texts = [m.value for m in at.markdown]
    header = next(t for t in texts if t.startswith("**Distinct findings**"))
    assert "each a different cohort" not in header and "lies inside another finding" in header
    codes = [t for t in texts if t.startswith("`gender=male")]
    assert codes[:2] == ["`gender=male`", "`gender=male, klass=3`"]  # the one inside right after its holder
    assert "↳ Inside finding 1 (“gender=male”)" in [c.value for c in at.caption]
    assert any("lower than the rest of “gender=male”" in t and "though above" in t for t in texts)
