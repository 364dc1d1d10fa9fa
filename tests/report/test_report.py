"""Standing reports: slice plans round-trip, a self-contained HTML report from the built-in
dataset and from COMPAS, errors that name the column, and the report in headless Chromium."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import ROOT, data_file

from divergence import DivergenceInputError
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_TRUTH, load_demo
from divergence.report.page import build_report
from divergence.report.plan import SlicePlan, load_plan, plan_hash, save_plan
from divergence.report.run import check_plan_fits, run_plan

ARTIFACTS = Path(os.environ.get("DIVERGENCE_ARTIFACTS") or ROOT / "tests" / "e2e" / "artifacts")

DEMO_PLAN = SlicePlan(
    kind="pre-registered",
    scan=dict(target="spend", prediction="predicted_spend", regression=True, metrics=["abs_error"],
              attributes=DEMO_ATTRIBUTES, bins={"age": [30, 50]}, min_support=0.02),
    statistics=dict(confidence=0.95, correction="bh", bootstrap=100, seed=3),
    slices=["channel=App"],
)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "divergence", *args], cwd=ROOT, capture_output=True, text=True)


def test_plan_round_trip_gives_the_same_result(tmp_path):
    path = save_plan(DEMO_PLAN, tmp_path / "plan.yaml")
    again = load_plan(path)
    assert again.scan == DEMO_PLAN.scan and again.statistics == DEMO_PLAN.statistics
    assert again.kind == "pre-registered" and again.slices == ["channel=App"]
    assert again.created and again.saved_hash == plan_hash(again) == plan_hash(DEMO_PLAN)
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", plan_hash(again))
    df = load_demo(3000)
    a, b = run_plan(DEMO_PLAN, df).frame, run_plan(again, df).frame
    pd.testing.assert_frame_equal(a, b)
    json_path = save_plan(again, tmp_path / "plan.json")
    assert load_plan(json_path).created == again.created  # the creation time survives re-saving


def test_hash_changes_with_the_content():
    other = SlicePlan(scan=dict(DEMO_PLAN.scan, min_support=0.03), statistics=DEMO_PLAN.statistics,
                      kind="pre-registered", slices=["channel=App"])
    assert plan_hash(other) != plan_hash(DEMO_PLAN)


def test_report_from_the_built_in_dataset(tmp_path):
    df = load_demo()
    table = run_plan(DEMO_PLAN, df)
    html = build_report(table, plan=DEMO_PLAN, plan_label="demo plan", data_label="built-in")
    assert "pre-registered plan" in html and plan_hash(DEMO_PLAN) in html
    # nothing fetched from elsewhere: every script inline (the browser test checks the requests)
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=[\"']?https?:", html)
    assert "Minimum slice size." in html and "n_min" in html
    # the planted defect is in the table with its verdict, and has its Shapley chart
    assert DEMO_TRUTH["defect"] in html and ">defect</span>" in html
    first = html.index('<table class="slices"')
    rows = re.findall(r"<tr><td data-v=\"([^\"]*)\"", html[first:])
    import html as html_lib

    top = table.frame["itemset"].iloc[table.default_order("abs_error")[0]]
    assert html_lib.unescape(rows[0]) == top  # in the default order: the distinct findings first
    assert bool(table.frame.iloc[table.default_order("abs_error")[0]]["abs_error_finding"])
    assert html.count('class="plotly-graph-div"') >= 3


def test_report_cli_on_compas_with_previous_cycle(tmp_path):
    compas = pd.read_csv(data_file("compas_discretized.csv"))
    half = len(compas) // 2
    now, before = tmp_path / "now.csv", tmp_path / "before.csv"
    compas.iloc[:half].to_csv(now, index=False)
    compas.iloc[half:].to_csv(before, index=False)
    plan = tmp_path / "plan.json"
    r = run("plan", "--target", "class", "--prediction", "predicted", "--positive", "1", "--metric", "fpr,fnr",
            "--min-support", "0.0175", "--pre-registered", "--slice", "age=<25, #prior=>3, sex=Male", "-o", str(plan))
    assert r.returncode == 0, r.stderr
    out = tmp_path / "report.html"
    r = run("report", str(plan), str(now), "--previous", str(before), "--output", str(out))
    assert r.returncode == 0, r.stderr
    html = out.read_text()
    # held and new count the distinct findings, the set the tiles count (issue 30 point 5), for each metric
    from divergence.report.plan import load_plan
    from divergence.report.run import run_plan

    table = run_plan(load_plan(plan), pd.read_csv(now), previous=pd.read_csv(before))
    counts = [tuple(map(int, m)) for m in re.findall(r"of the distinct findings, (\d+) held \(a finding's verdict "
                                                     r"in the previous cycle too\), (\d+) (?:is|are) new", html)]
    assert counts and [a + b for a, b in counts] == [int(table.frame[f"{m}_finding"].sum()) for m in ("fpr", "fnr")]
    # every distinct finding is in the interval plot, below the minimum size or not
    assert "distinct finding" in html and "open dots: below the minimum size, indicative" in html
    assert "Previous cycle</th>" in html and "Replicated</th>" in html
    assert "age=&lt;25, sex=Male, #prior=&gt;3" in html  # the pre-listed slice, escaped
    assert f"{half:,}" in html


def test_plan_that_does_not_fit_the_data():
    df = load_demo(500)
    with pytest.raises(DivergenceInputError, match="The plan's attribute column 'zip' is not in the data"):
        check_plan_fits(SlicePlan(scan=dict(outcome="spend", attributes=["zip"])), df)
    with pytest.raises(DivergenceInputError, match="The plan's target column 'y' is not in the data"):
        check_plan_fits(SlicePlan(scan=dict(target="y", prediction="predicted_spend", regression=True)), df)
    with pytest.raises(DivergenceInputError, match="bins for 'age' no longer fit: every value .* falls in one bin"):
        check_plan_fits(SlicePlan(scan=dict(outcome="spend", attributes=["age"], bins={"age": [200, 300]})), df)
    with pytest.raises(DivergenceInputError, match="pre-listed slice 'channel=Fax'"):
        run_plan(SlicePlan(scan=dict(outcome="spend", attributes=["channel"], min_support=0.05),
                           slices=["channel=Fax"]), df)


def test_report_cli_errors_leave_nothing_behind(tmp_path):
    data = tmp_path / "d.csv"
    load_demo(500).drop(columns=["region"]).to_csv(data, index=False)
    plan = tmp_path / "p.yaml"
    save_plan(SlicePlan(scan=dict(outcome="spend", attributes=["region"])), plan)
    out = tmp_path / "r.html"
    r = run("report", str(plan), str(data), "--output", str(out))
    assert r.returncode == 2 and "attribute column 'region' is not in the data" in r.stderr
    assert not out.exists() and not list(tmp_path.glob("*.tmp"))
    plan.write_text("scan: [not, a, mapping]\n")
    r = run("report", str(plan), str(data), "--output", str(out))
    assert r.returncode == 2 and "must be a mapping" in r.stderr and not out.exists()


@pytest.mark.e2e
def test_report_renders_offline_and_sorts_in_chromium(tmp_path):
    if not os.path.exists("/usr/bin/chromium"):
        pytest.skip("/usr/bin/chromium is missing: install Debian's chromium (make browser)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
    html = build_report(run_plan(DEMO_PLAN, load_demo()), plan=DEMO_PLAN, plan_label="demo plan")
    path = tmp_path / "report.html"
    path.write_text(html)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        page = browser.new_context(viewport={"width": 1280, "height": 800}, offline=True).new_page()
        requests = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto(path.as_uri())
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
        assert page.locator(".js-plotly-plot .main-svg").count() >= 3
        assert all(u.startswith(("file:", "data:", "blob:", "about:")) for u in requests)
        # the page never scrolls sideways in a 1280-pixel window (it was 1,610 pixels wide): headers wrap,
        # and a table wider still scrolls inside its own box, its header row kept in view
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        boxes = page.evaluate("Array.from(document.querySelectorAll('.table-box')).map(b => b.getBoundingClientRect().right)")
        assert boxes and max(boxes) <= 1280
        page.screenshot(path=str(ARTIFACTS / "report_top.png"))
        table = page.locator("table.slices").first
        rows_header = table.locator("th", has_text="Rows").first
        rows_header.click()  # ascending
        counts = [int(t.replace(",", "")) for t in table.locator("tbody tr td:nth-child(2)").all_inner_texts()]
        assert counts == sorted(counts)
        rows_header.click()  # descending
        counts = [int(t.replace(",", "")) for t in table.locator("tbody tr td:nth-child(2)").all_inner_texts()]
        assert counts == sorted(counts, reverse=True)
        table.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "report_sorted.png"))
        browser.close()


def test_report_sorts_by_the_shrunk_divergence_and_shows_replication(tmp_path):
    import html as html_lib

    df = load_demo()
    table = run_plan(DEMO_PLAN, df, previous=load_demo(seed=99))
    text = build_report(table, plan=DEMO_PLAN, sort_by="divergence_shrunk")
    assert "Slices, by shrunk divergence" in text
    heads = re.findall(r"<th[^>]*>([^<]*)</th>", text)
    for head in ("Shrunk divergence", "Bound nearest zero", "Achievable", "Replicated divergence"):
        assert head in heads
    assert "winner&#x27;s curse" in text or "winner's curse" in text
    first = text.index('<table class="slices"')
    rows = re.findall(r"<tr><td data-v=\"([^\"]*)\"", text[first:])
    f = table.frame.iloc[1:]
    assert html_lib.unescape(rows[0]) == f.loc[f["abs_error_divergence_shrunk"].idxmax(), "itemset"]
    with pytest.raises(DivergenceInputError, match="The report sorts by one of"):
        build_report(table, plan=DEMO_PLAN, sort_by="luck")


def test_a_report_of_a_table_not_assessed_is_refused_in_words():
    """A mined table has no intervals or verdicts: the report says what to do (it raised KeyError 'fpr_ci_low')."""
    from divergence import assess, mine

    kw = dict(target="defaulted", prediction="predicted_default", positive="yes", metrics=["fpr"],
              attributes=DEMO_ATTRIBUTES)
    mined = mine(load_demo(n_rows=3000), **kw)
    with pytest.raises(DivergenceInputError, match="needs the worst-slice statistics.*divergence.assess"):
        build_report(mined)
    assert "<html" in build_report(assess(mined)).lower()
