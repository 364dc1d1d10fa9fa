"""AppTest for every page: set widgets, run, and assert on the numbers shown against the engine.

The references are computed with the engine directly, with the dashboard's default settings
(built-in dataset, FPR and FNR, support 0.02, 95% confidence, BH, no bootstrap (the settings' default),
redundancy ε = 0.05 standard deviations of the metric).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from apptest_readers import (
    APP,
    charts,
    decode,
    finish_scan,
    fresh_app,
    go,
    keyed,
    left_out,
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
from divergence.present.cards import headline
from divergence.present.formats import format_count, format_percent, format_value, md_text
from divergence.present.views import display_frame, redundancy_epsilon, slice_view
from divergence.report.plan import parse_plan

STATS = dict(confidence=0.95, correction="bh", bootstrap=0, seed=0, exploratory=True)


@pytest.fixture(scope="module")
def reference():
    """The default result, computed by the engine as the app computes it."""
    table = scan(load_demo(), attributes=DEMO_ATTRIBUTES, min_support=0.02, **DEMO_ROLES["classification"])
    return assess(table, **STATS)


@pytest.fixture
def app():
    return fresh_app(90)


_metrics, _decode, _charts, _table_cells = metrics, decode, charts, table_cells


def _errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def _expected_view(table, metric="fpr", eps=0.05, **kw):
    eps = redundancy_epsilon(table, metric, eps)
    exclude = redundant_itemsets(table, eps, metric=metric) if eps else None
    return slice_view(table, metric=metric, exclude=exclude, top_n=kw.pop("top_n", 25), **kw)


# ---------------------------------------------------------------- Slices page (the landing page)

def _card_heads(at) -> list[str]:
    """The itemset of each finding card: the code span drawn under the card's verdict badge."""
    values = [md.value for md in at.markdown]
    return [v.strip("`").strip() for k, v in enumerate(values[1:], 1)
            if v.startswith("`") and values[k - 1].startswith("<span style='background:")]


def test_opens_on_the_built_in_data_with_a_finding(app, reference):
    at = app
    h = headline(reference, "fpr")
    m = _metrics(at)
    assert m["FPR, whole dataset"] == format_percent(reference.overall("fpr")) == "10.2%"
    assert m["Slices tested"] == format_count(h["n_tested"]) == format_count(len(reference) - 1)
    assert m["Significant"] == format_count(h["n_significant"])
    # the tiles count distinct findings and add up: one finding (above), covering every significant slice
    assert m["Distinct findings"] == "1" and h["n_findings"] + h["n_explained"] == h["n_significant"]
    assert m["Above"] == format_count(h["findings_by_verdict"]["above"]) == "1"
    assert m["Below"] == "0"
    assert m["Not significant"] == format_count(h["n_not_significant"]) == format_count(h["n_tested"] - h["n_significant"])
    # the one card is the planted slice, with its numbers in plain words; its spillover is grouped under it
    planted = reference.row(DEMO_TRUTH["elevated_fpr"])
    cards = [md.value for md in at.markdown if "<b>Who:</b>" in md.value]
    heads = _card_heads(at)
    assert heads[0] == "region=South, education=Primary" and len(cards) == 1
    header = next(md.value for md in at.markdown if md.value.startswith("**One distinct finding**"))
    assert "each a different cohort" not in header and f"{format_count(h['n_significant'])} significant" in header
    assert format_percent(planted["fpr"]) in cards[0] and format_count(planted["fpr_count"]) in cards[0]
    assert "What to do:" in cards[0]
    # the table is the engine's view: redundant slices hidden, top 25 by divergence
    cells = _table_cells(at)
    view = _expected_view(reference)
    assert cells["Slice"] == view.rows["itemset"].tolist()
    assert cells["FPR"] == [format_percent(x) for x in view.rows["fpr"]]
    assert cells["q"][0] == display_frame(reference, view.rows, "fpr")["q"].iloc[0]
    caption = next(c.value for c in at.caption if c.value.startswith("Showing"))
    assert caption.startswith(f"Showing 25 of {format_count(view.n_matching)} matching slices "
                              f"({format_count(len(reference) - 1)} mined), in the default order: distinct findings "
                              "first")
    assert cells["Slice"][0] == DEMO_TRUTH["elevated_fpr"] and cells["Finding"][0].startswith("distinct finding, effect +")


def test_slice_detail_shows_its_shapley_contributions(app, reference):
    at = app
    assert keyed(at.multiselect, "w:slice_items").value == ["region=South", "education=Primary"]
    spec = next(s for s in _charts(at) if s["data"][0]["type"] == "bar")
    drawn = {y: x for tr in spec["data"] for x, y in zip(tr["x"], tr["y"])}
    expected = divergence.item_contributions(reference, DEMO_TRUTH["elevated_fpr"], metric="fpr")
    # a rate's contributions are drawn in percentage points
    assert drawn == pytest.approx(dict(zip(expected["item"], 100 * expected["contribution"])))
    # open another slice: click its row
    other = _expected_view(reference).rows["itemset"].iloc[3]
    at = open_row(at, other)
    spec = next(s for s in _charts(at) if s["data"][0]["type"] == "bar")
    assert sorted(y for tr in spec["data"] for y in tr["y"]) == sorted(other.split(", "))
    assert _metrics(at)["Rows"] == format_count(reference.row(other)["count"])


def test_sort_and_filter_never_remine(app, reference, monkeypatch):
    import ui.worker as worker

    requests = []
    original = worker.start
    monkeypatch.setattr(worker, "start", lambda request, **kw: requests.append(request) or original(request, **kw))
    at = app
    keyed(at.selectbox, "w:sort_by").set_value("Rows").run()
    keyed(at.selectbox, "w:sort_asc").set_value(True).run()
    keyed(at.multiselect, "w:f_verdicts").set_value(["noise", "above"]).run()
    keyed(at.multiselect, "w:f_attributes").set_value(["channel"]).run()
    keyed(at.selectbox, "w:top_n").set_value(10).run()
    assert not at.exception and requests == []
    view = _expected_view(reference, sort_by="count", ascending=True, verdicts=["noise", "above"],
                          attributes=["channel"], top_n=10)
    assert _table_cells(at)["Slice"] == view.rows["itemset"].tolist()
    assert _table_cells(at)["Rows"] == [format_count(c) for c in view.rows["count"]]
    # redundant slices back in view
    keyed(at.checkbox, "w:f_prune").uncheck().run()
    view = _expected_view(reference, eps=0, sort_by="count", ascending=True, verdicts=["noise", "above"],
                          attributes=["channel"], top_n=10)
    assert _table_cells(at)["Slice"] == view.rows["itemset"].tolist() and requests == []
    # a statistics setting re-assesses the mining result kept in the server; a scan setting mines again
    at = go(at, "outcome")
    keyed(at.selectbox, "w:confidence").set_value(0.9).run()
    finish_scan(at)  # started by the change itself: no Run needed for a statistics setting
    assert len(requests) == 1 and requests[0].mined is not None and requests[0].frame is None
    assert at.session_state["result"]["table"].assessment.confidence == 0.9
    keyed(at.number_input, "w:min_support").set_value(0.05).run()
    run_scan(at)
    assert len(requests) == 2 and requests[1].mined is None
    # settings changed back: the stored result at once, no worker
    keyed(at.number_input, "w:min_support").set_value(0.02).run()
    keyed(at.selectbox, "w:confidence").set_value(0.95).run()
    run_scan(at)
    assert len(requests) == 2 and "taken from the cache" in at.success[0].value
    assert at.session_state["result"]["table"].frame.equals(reference.frame)


def test_second_metric(app, reference):
    at = app
    keyed(at.radio, "w:view_metric").set_value("fnr").run()
    h = headline(reference, "fnr")
    m = _metrics(at)
    assert m["FNR, whole dataset"] == format_percent(reference.overall("fnr"))
    assert m["Significant"] == format_count(h["n_significant"])
    assert _table_cells(at)["Slice"] == _expected_view(reference, metric="fnr").rows["itemset"].tolist()
    # no finding for FNR: the page says so above the open slice, which is the table's first row, for
    # reference (issue 45 point 6: it was opened under "No finding" without a word)
    assert h["n_findings"] == 0 and any(i.value.startswith("No finding for FNR") for i in at.info)
    assert any("none is opened: below is the table's first slice" in i.value for i in at.info)
    assert keyed(at.multiselect, "w:slice_items").value == _expected_view(reference, metric="fnr").rows[
        "itemset"].iloc[0].split(", ")
    # with a finding (FPR) the first distinct finding is open and nothing more is said
    keyed(at.radio, "w:view_metric").set_value("fpr").run()
    assert not any("none is opened" in i.value for i in at.info)
    assert keyed(at.multiselect, "w:slice_items").value == DEMO_TRUTH["elevated_fpr"].split(", ")


# ---------------------------------------------------------------- Data page

def test_data_page_preview_and_roles(app):
    at = go(app, "data")
    assert at.dataframe[0].value.shape == (200, 13)
    assert "10,000 rows × 13 columns" in at.markdown[0].value
    assert keyed(at.selectbox, "w:target").value == "defaulted"
    assert keyed(at.selectbox, "w:positive").value == "yes"
    measured = next(c.value for c in at.caption if c.value.startswith("Measured"))
    negatives = int((load_demo()["defaulted"] == "no").sum())
    assert f"**fpr** (false-positive rate), defined on {negatives:,} rows" in measured


def _settings(at):
    keys = ["target", "prediction", "positive", "attributes", "min_support", "metrics", "confidence"]
    return {k: setting(at, k) for k in keys}


def test_non_binary_target_is_named_and_everything_else_kept(app):
    at = go(app, "data")
    before = _settings(at)
    keyed(at.selectbox, "w:target").set_value("income").run()
    assert not at.exception
    assert any("Target column 'income' is not binary" in e for e in _errors(at))
    after = _settings(at)
    assert after == dict(before, target="income")
    # running anyway keeps the previous result and says why beside the run button
    at = go(at, "outcome")
    run_scan(at)
    assert any("Target column 'income' is not binary" in e for e in _errors(at))
    at.switch_page("pages/slices.py").run()
    assert not at.exception and _metrics(at)["FPR, whole dataset"] == "10.2%"
    assert any("settings changed" in i.value for i in at.info)


def test_numeric_score_picked_as_predicted_labels(app):
    at = go(app, "data")
    keyed(at.selectbox, "w:prediction").set_value("default_score").run()
    assert any("Prediction column 'default_score' is not binary" in e for e in _errors(at))
    assert setting(at, "target") == "defaulted" and setting(at, "positive") == "yes"
    # the same column as a score with a threshold is fine
    keyed(at.radio, "w:pred_kind").set_value("score").run()
    keyed(at.selectbox, "w:score").set_value("default_score").run()
    assert not _errors(at) and not at.exception


def test_empty_attribute_list(app):
    at = go(app, "data")
    keyed(at.multiselect, "w:attributes_pick").set_value([]).run()
    assert "Choose at least one attribute column to slice by." in _errors(at)
    assert setting(at, "attributes") == [] and setting(at, "target") == "defaulted"
    at = go(at, "outcome")
    run_scan(at)
    assert "There is no attribute column to slice by." in _errors(at)


def test_unreadable_upload_keeps_the_data(app):
    at = go(app, "data")
    keyed(at.radio, "w:source").set_value("upload").run()
    at.file_uploader[0].set_value(("broken.parquet", b"this is not parquet", "application/octet-stream")).run()
    assert not at.exception
    assert any(e.startswith("Could not read 'broken.parquet' as Parquet") for e in _errors(at))
    assert at.session_state["data_name"] == "built-in" and len(at.session_state["frame"]) == 10_000
    assert setting(at, "target") == "defaulted"


def _upload_frame(n=4000) -> pd.DataFrame:
    df = load_demo(n)
    return pd.DataFrame({"row": df["applicant_id"], "age": df["age"], "region": df["region"],
                         "education": df["education"], "channel": df["channel"],
                         "label": (df["defaulted"] == "yes").astype(int),
                         "pred": (df["predicted_default"] == "yes").astype(int)})


def test_upload_a_csv_choose_columns_and_run(app):
    df = _upload_frame()
    at = go(app, "data")
    keyed(at.radio, "w:source").set_value("upload").run()
    at.file_uploader[0].set_value(("loans.csv", df.to_csv(index=False).encode(), "text/csv")).run()
    assert not at.exception and not _errors(at)
    assert at.session_state["data_name"] == "loans.csv"
    # the roles are guessed, the row number left out of the attributes, and both said
    assert (keyed(at.selectbox, "w:target").value, keyed(at.selectbox, "w:prediction").value,
            keyed(at.selectbox, "w:positive").value) == ("label", "pred", 1)
    assert keyed(at.multiselect, "w:attributes_pick").value == ["age", "region", "education", "channel"]
    assert list(left_out(at)) == ["row"] and left_out(at)["row"] in ("row index", "identifier")
    keyed(at.multiselect, "w:attributes_pick").set_value(["age", "region", "education"]).run()
    at = go(at, "outcome")
    keyed(at.number_input, "w:min_support").set_value(0.05).run()
    run_scan(at)
    assert not _errors(at)
    table = assess(scan(df, target="label", prediction="pred", positive=1, metrics=["fpr", "fnr"],
                        attributes=["age", "region", "education"], min_support=0.05), **STATS)
    assert f"{len(table) - 1:,} slices mined" in at.success[0].value
    at = go(at, "slices")
    assert _metrics(at)["FPR, whole dataset"] == format_percent(table.overall("fpr"))
    assert _table_cells(at)["Slice"] == _expected_view(table).rows["itemset"].tolist()


# ---------------------------------------------------------------- Outcome page

def test_thresholds_min_size_and_persistence(app, reference):
    at = go(app, "outcome")
    sentences = [i.value for i in at.info]
    assert any(reference.assessment.min_size["fpr"].text in s for s in sentences)
    keyed(at.radio, "w:support_mode").set_value("rows").run()
    keyed(at.number_input, "w:support_rows").set_value(500).run()
    assert at.session_state["support_rows"] == 500 and at.session_state["support_mode"] == "rows"
    keyed(at.checkbox, "w:default_delta").uncheck().run()
    keyed(at.number_input, "w:delta").set_value(0.1).run()
    keyed(at.selectbox, "w:confidence").set_value(0.99).run()
    # n_min (the interval narrower than delta) and n_power (80% power at the bar alpha / m), as the
    # engine derives them, under the settings as they are now
    from divergence.stats.assess import min_size_derivation
    info = reference.assessment.min_size["fpr"]
    now = min_size_derivation(reference.overall("fpr"), info.sigma, True, 0.1, 0.99, "fpr",
                              n_total=info.n_total, tests=info.tests, correction=info.correction)
    assert now.n_min < info.n_min and "99%" in now.text and "0.01/" in now.power_text
    assert any(f"n_min = {now.n_min:,} rows" in i.value and f"n_power = {now.n_power:,}" in i.value
               for i in at.info)
    # settings survive a trip to another page
    at = go(at, "data")
    at = go(at, "outcome")
    assert keyed(at.number_input, "w:delta").value == 0.1
    assert keyed(at.selectbox, "w:confidence").value == 0.99
    assert at.session_state["support_rows"] == 500
    run_scan(at)
    assert at.session_state["result"]["table"].min_support == 500  # a row count, as typed
    expected = assess(scan(load_demo(), attributes=DEMO_ATTRIBUTES, min_support=500,
                           **DEMO_ROLES["classification"]), **dict(STATS, confidence=0.99, delta=0.1))
    at = go(at, "slices")
    h = headline(expected, "fpr")
    assert _metrics(at)["Slices tested"] == format_count(h["n_tested"])
    assert _metrics(at)["Not significant"] == format_count(h["n_not_significant"])


def test_a_statistics_change_reassesses_and_says_so(app):
    """A changed confidence or δ re-assesses the mined table the server kept at once, with no Run
    (issue 27: a statistics change feels instant), and the page says which of the two ran; a
    changed support waits for Run and mines again."""
    at = go(app, "outcome")
    keyed(at.radio, "w:support_mode").set_value("rows").run()
    keyed(at.number_input, "w:support_rows").set_value(333).run()  # a support no other test mines at
    run_scan(at)
    first = [m.value for m in at.success]
    assert any("slices mined in" in v for v in first), first
    keyed(at.selectbox, "w:confidence").set_value(0.9).run()
    keyed(at.checkbox, "w:default_delta").uncheck().run()
    keyed(at.number_input, "w:delta").set_value(0.037).run()  # settings no other test assesses with
    finish_scan(at)  # no Run clicked: the change started the re-assessment
    again = [m.value for m in at.success]
    assert any("re-assessed in" in v and "not mined again" in v for v in again), again
    assert at.session_state["result"]["table"].assessment.confidence == 0.9
    assert at.session_state["result"]["table"].assessment.min_size["fpr"].delta == 0.037
    assert at.session_state["result"]["reassessed"] and not at.session_state["result"]["cached"]
    keyed(at.number_input, "w:support_rows").set_value(334).run()  # mining again waits for Run
    job = at.session_state["scan_job"] if "scan_job" in at.session_state else None
    assert job is None or not job.running
    assert any("settings changed since the last run" in w.value for w in at.warning)


def test_holdout_replication(app):
    at = go(app, "data")
    keyed(at.radio, "w:replication").set_value("holdout").run()
    at = go(at, "outcome")
    run_scan(at)
    assert not _errors(at)
    at = go(at, "slices")
    cells = _table_cells(at)
    assert "Replicated" in cells and "Replication" in cells
    expected = scan(load_demo(), attributes=DEMO_ATTRIBUTES, min_support=0.02, holdout=0.3,
                    **DEMO_ROLES["classification"], **STATS)
    assert cells["Slice"] == _expected_view(expected).rows["itemset"].tolist()
    assert cells["Replicated"] == ["yes" if r else "no" for r in _expected_view(expected).rows["fpr_replicated"]]


# ---------------------------------------------------------------- Intervals and Attributes pages

def test_interval_plot(app, reference):
    at = go(app, "intervals")
    spec = _charts(at)[0]
    view = _expected_view(reference)
    drawn = {}
    for tr in spec["data"]:
        for x, idx in zip(tr["x"], tr["customdata"]):
            drawn[int(idx)] = x
    assert sorted(drawn) == sorted(view.rows.index)
    for idx, x in drawn.items():
        assert x == pytest.approx(100 * reference.frame.loc[idx, "fpr"])
    assert "95% intervals" in spec["layout"]["xaxis"]["title"]["text"]
    names = {tr["name"] for tr in spec["data"]}
    assert "above" in names


def test_attributes_page(app, reference):
    at = go(app, "attributes")
    specs = _charts(at)
    assert len(specs) == 2
    values = divergence.global_divergence(reference, metric="fpr")
    drawn = {y: x for tr in specs[1]["data"] for x, y in zip(tr["x"], tr["y"])}
    top = values.loc[values["global"].abs().sort_values(ascending=False, kind="stable").index[:15]]
    assert drawn == pytest.approx(dict(zip(top["item"], 100 * top["global"])))  # a rate: in pp
    drawn = {y: x for tr in specs[0]["data"] for x, y in zip(tr["x"], tr["y"])}
    assert drawn["education=Primary"] == pytest.approx(100 * reference.row("education=Primary")["fpr_divergence"])


# ---------------------------------------------------------------- Export page

def test_export_plan_and_load_it_back(app):
    at = go(app, "export")
    plan = parse_plan(at.code[0].value)
    assert plan.scan["target"] == "defaulted" and plan.scan["min_support"] == 0.02
    assert plan.scan["attributes"] == DEMO_ATTRIBUTES and plan.statistics["correction"] == "bh"
    assert plan.explain == {"redundancy": 0.05} and plan.kind == "exploratory"
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Slice plan (YAML)" in labels and any(l.startswith("Every slice (1,338 rows") for l in labels)
    # a later visit loads a changed plan
    text = at.code[0].value.replace("min_support: 0.02", "min_support: 0.04").replace("correction: bh",
                                                                                      "correction: holm")
    fresh = AppTest.from_file(APP, default_timeout=90)
    fresh.run()
    fresh = go(fresh, "export")
    fresh.file_uploader(key="w:plan_upload").set_value(("plan.yaml", text.encode(), "application/x-yaml")).run()
    assert not fresh.exception and not _errors(fresh)
    assert setting(fresh, "min_support") == 0.04 and setting(fresh, "correction") == "holm"
    assert parse_plan(fresh.code[0].value) == parse_plan(text)


def test_bad_plan_file_keeps_the_settings(app):
    at = go(app, "export")
    at.file_uploader(key="w:plan_upload").set_value(("plan.yaml", b"scan: {min_supp: 1}", "application/x-yaml")).run()
    assert any("Unknown key 'min_supp' in the plan's scan section" in e for e in _errors(at))
    assert setting(at, "min_support") == 0.02 and not at.exception


# ---------------------------------------------------------------- other tasks and replication sources

def test_regression_task_headline_names_defects_and_hard_cohorts(app):
    at = go(app, "data")
    keyed(at.radio, "w:task").set_value("regression").run()
    keyed(at.selectbox, "w:target").set_value("spend").run()
    keyed(at.selectbox, "w:prediction").set_value("predicted_spend").run()
    assert setting(at, "metrics") == ["abs_error"] and not _errors(at)
    at = go(at, "outcome")
    run_scan(at)
    at = go(at, "slices")
    expected = assess(scan(load_demo(), attributes=DEMO_ATTRIBUTES, min_support=0.02,
                           **DEMO_ROLES["regression"]), **STATS)
    h = headline(expected, "abs_error")
    m = _metrics(at)
    assert m["abs error, whole dataset"] == format_value(h["overall"], False)
    # one distinct defect and one distinct hard cohort: the planted ones
    assert m["Defects"] == format_count(h["findings_by_verdict"]["defect"]) == "1"
    assert m["Hard cohorts"] == format_count(h["findings_by_verdict"]["hard cohort"]) == "1"
    # in the default order, and the detail compares with the slice baseline
    assert "in the default order" in " ".join(c.value for c in at.caption)
    assert any("Is the target harder here?" in md.value and "Does the model gain less here?" in md.value
               for md in at.markdown)


def test_numeric_outcome_task(app):
    at = go(app, "data")
    keyed(at.radio, "w:task").set_value("outcome").run()
    keyed(at.multiselect, "w:outcome").set_value(["spend"]).run()
    assert not _errors(at)
    at = go(at, "outcome")
    run_scan(at)
    at = go(at, "slices")
    # the attributes chosen before (the built-in dataset's) are kept when the task changes
    assert setting(at, "attributes") == DEMO_ATTRIBUTES
    expected = assess(scan(load_demo(), outcome="spend", attributes=DEMO_ATTRIBUTES, min_support=0.02), **STATS)
    assert _metrics(at)["spend, whole dataset"] == format_value(expected.overall("spend"), False)
    assert _metrics(at)["Slices tested"] == format_count(headline(expected, "spend")["n_tested"])


def test_split_column_replication(app):
    df = load_demo()
    at = go(app, "data")
    keyed(at.radio, "w:replication").set_value("split").run()
    keyed(at.selectbox, "w:split_column").set_value("sex").run()
    keyed(at.multiselect, "w:split_values").set_value(["Female"]).run()
    assert "sex" not in keyed(at.multiselect, "w:attributes_pick").value  # the split column is not an attribute
    at = go(at, "outcome")
    run_scan(at)
    assert not _errors(at)
    at = go(at, "slices")
    attrs = [a for a in DEMO_ATTRIBUTES if a != "sex"]
    mine, confirm = df[df["sex"] == "Male"].reset_index(drop=True), df[df["sex"] == "Female"].reset_index(drop=True)
    expected = assess(scan(mine, attributes=attrs, min_support=0.02, **DEMO_ROLES["classification"]),
                      replicate=confirm, **STATS)
    cells = _table_cells(at)
    view = _expected_view(expected)
    assert cells["Slice"] == view.rows["itemset"].tolist()
    assert cells["Replicated"] == ["yes" if r else "no" for r in view.rows["fpr_replicated"]]
    assert "replicated on rows with sex in Female" in at.caption[0].value


def test_second_file_replication(app):
    df = load_demo(6000, seed=11)
    at = go(app, "data")
    keyed(at.radio, "w:replication").set_value("file").run()
    at.file_uploader(key="w:replicate_upload").set_value(
        ("next_month.csv", df.to_csv(index=False).encode(), "text/csv")).run()
    assert "Replication file: `next_month.csv`, 6,000 rows." in [c.value for c in at.caption]
    at = go(at, "outcome")
    run_scan(at)
    at = go(at, "slices")
    expected = assess(scan(load_demo(), attributes=DEMO_ATTRIBUTES, min_support=0.02,
                           **DEMO_ROLES["classification"]), replicate=df, **STATS)
    assert _table_cells(at)["Replicated"] == ["yes" if r else "no"
                                              for r in _expected_view(expected).rows["fpr_replicated"]]


def test_second_file_missing_is_an_error_beside_the_run_button(app):
    at = go(app, "data")
    keyed(at.radio, "w:replication").set_value("file").run()
    at = go(at, "outcome")
    run_scan(at)
    assert "Replication: upload the second file on the Data page, or choose none." in _errors(at)


def test_support_from_n_min(app, reference):
    at = go(app, "outcome")
    at.button(key="support-from-fpr-n_min").click().run()
    assert setting(at, "min_support") == pytest.approx(divergence.support_for_min_size(reference, "fpr"),
                                                            abs=1e-6)


def test_binning_a_numeric_attribute(app):
    at = go(app, "data")
    keyed(at.text_input, "w:bins:age").input("30, 50").run()
    assert setting(at, "bins") == {"age": [30.0, 50.0]}
    assert md_text("<=30 · (30,50] · >50") in [c.value for c in at.caption]  # shown as written
    keyed(at.text_input, "w:bins:income").input("a few").run()
    assert any(e.startswith("Bins of 'income': write a number of bins") for e in _errors(at))
    assert setting(at, "bins") == {"age": [30.0, 50.0]}
    at = go(at, "outcome")
    run_scan(at)
    at = go(at, "slices")
    expected = assess(scan(load_demo(), attributes=DEMO_ATTRIBUTES, bins={"age": [30.0, 50.0]}, min_support=0.02,
                           **DEMO_ROLES["classification"]), **STATS)
    assert _table_cells(at)["Slice"] == _expected_view(expected).rows["itemset"].tolist()


def test_ranking_task(app):
    at = go(app, "data")
    keyed(at.radio, "w:task").set_value("ranking").run()
    keyed(at.selectbox, "w:rank_by").set_value("default_score").run()
    assert not _errors(at)
    at = go(at, "outcome")
    keyed(at.radio, "w:gamma_kind").set_value("topk").run()
    keyed(at.number_input, "w:gamma_k").set_value(1000).run()
    assert setting(at, "gamma") == "topk:1000"
    run_scan(at)
    assert not _errors(at)
    at = go(at, "slices")
    expected = assess(scan(load_demo(), rank_by="default_score", gamma="topk:1000", attributes=DEMO_ATTRIBUTES,
                           min_support=0.02), **STATS)
    assert _metrics(at)["gamma, whole dataset"] == format_value(expected.overall("gamma"), True) == "10.0%"
    assert _table_cells(at)["Slice"] == _expected_view(expected, metric="gamma").rows["itemset"].tolist()


def test_ranking_task_per_query(app):
    """The Ranking task's quality per query: a query table uploaded, NDCG@10, MRR and precision@5 per
    query, sliced by the query's attributes; the numbers are the engine's."""
    rng = np.random.default_rng(3)
    nq, per = 400, 8
    q = np.repeat(np.arange(nq), per)
    device = rng.choice(["mobile", "desktop"], nq)[q]
    rel = rng.integers(0, 3, q.size) * (rng.random(q.size) < 0.4)
    df = pd.DataFrame({"query_id": q, "device": device, "market": rng.choice(["us", "de"], nq)[q],
                       "doc_len": rng.integers(1, 50, q.size), "relevance": rel,
                       "score": rel + rng.normal(0, np.where(device == "mobile", 2.0, 0.5))})
    at = go(app, "data")
    keyed(at.radio, "w:source").set_value("upload").run()
    at.file_uploader[0].set_value(("queries.csv", df.to_csv(index=False).encode(), "text/csv")).run()
    keyed(at.radio, "w:task").set_value("ranking").run()
    keyed(at.selectbox, "w:rank_by").set_value("score").run()
    keyed(at.radio, "w:rank_level").set_value("query").run()
    keyed(at.selectbox, "w:query").set_value("query_id").run()
    keyed(at.selectbox, "w:relevance").set_value("relevance").run()
    at = go(at, "outcome")
    assert keyed(at.multiselect, "w:query_metrics").value == ["ndcg@10", "mrr", "precision@5"]
    run_scan(at)
    assert not _errors(at)
    at = go(at, "slices")
    table = at.session_state["result"]["table"]
    assert table.n_rows == nq and "doc_len" not in table.attributes and "device" in table.attributes
    expected = scan(df, query="query_id", relevance="relevance", rank_by="score",
                    metrics=["ndcg@10", "mrr", "precision@5"], attributes=list(table.attributes), min_support=0.02)
    assert table.overall("ndcg@10") == pytest.approx(expected.overall("ndcg@10"), rel=1e-12)
    shown = _metrics(at)
    assert shown["ndcg@10, whole dataset"] == format_value(expected.overall("ndcg@10"), False), sorted(shown)
