"""End to end in headless Chromium (Debian's /usr/bin/chromium driven by Playwright; never a
browser download): turn on the comparison on the Data page, read the Compare page, open a
slice, download the comparison and the pre-release report. Screenshots compare_*.png go to
$DIVERGENCE_ARTIFACTS, or tests/e2e/artifacts (ignored by git).
"""
from __future__ import annotations

import re
from pathlib import Path

import app_server
import pytest
from test_browser import _IDLE, ARTIFACTS, browser  # noqa: F401 (fixture)

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def app_url():
    """`streamlit run app.py`, stopped at the end of the module."""
    url, proc, log = app_server.start(ARTIFACTS / "server_compare.log", wait=60)
    yield url
    app_server.stop(proc, log, timeout=20)


def _settle(page) -> None:
    """Wait for the app's own idle signal (no script run, nothing still drawing): no fixed sleep."""
    page.wait_for_function(_IDLE, timeout=120_000)


def _goto(page, title: str) -> None:
    page.get_by_role("link", name=title).first.click()
    _settle(page)


def _no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, "a traceback is on screen"


def test_compare_journey(browser, app_url):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(app_url)
    page.get_by_text("What to do:").first.wait_for(timeout=120_000)

    # the Compare page before a reference is chosen says where to choose it
    _goto(page, "7 · Compare models")
    page.get_by_text("No reference model is chosen").wait_for(timeout=30_000)
    _no_exception(page)

    _goto(page, "1 · Data")
    toggle = page.get_by_text("Compare the model with a reference model")
    toggle.wait_for(timeout=30_000)
    toggle.click()
    _settle(page)
    page.get_by_text("Compared on the Compare page").wait_for(timeout=30_000)
    page.get_by_text("Compare models", exact=True).first.scroll_into_view_if_needed()
    _no_exception(page)
    page.screenshot(path=ARTIFACTS / "compare_1_data_page.png")

    _goto(page, "7 · Compare models")
    page.get_by_text("Worse than the reference:").wait_for(timeout=120_000)
    page.get_by_text("region=South, education=Primary").first.wait_for()
    page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot .main-svg').first.wait_for(timeout=60_000)
    _no_exception(page)
    page.screenshot(path=ARTIFACTS / "compare_2_headline_table.png")

    chart = page.locator('[data-testid="stPlotlyChart"]').filter(has_text="change in FPR (model − reference)")
    chart.locator(".main-svg").first.wait_for(timeout=60_000)
    chart.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    page.screenshot(path=ARTIFACTS / "compare_3_intervals.png")
    # a click on a slice's interval opens it below: the second point drawn (the first is the distinct
    # finding region=South, education=Primary, open already; the slices it explains that meet the
    # minimum size, education=Primary and region=South, come before its refinements and are drawn
    # filled, in a trace of their own)
    point = chart.locator(".scatterlayer .point").nth(1).bounding_box()
    page.mouse.click(point["x"] + point["width"] / 2, point["y"] + point["height"] / 2)
    _settle(page)
    from playwright.sync_api import expect

    title = page.locator('[data-testid="stPlotlyChart"]').filter(has_text="contribution to the change")
    # the clicked slice: one item, one bar
    expect(title.locator(".ytick text")).to_have_count(1, timeout=60_000)
    expect(title.locator(".ytick text", has_text=re.compile(r"^(education=Primary|region=South)$"))).to_have_count(1)
    _no_exception(page)

    shapley = page.locator('[data-testid="stPlotlyChart"]').filter(has_text="contribution to the change")
    shapley.locator(".main-svg").first.wait_for(timeout=60_000)
    shapley.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    assert shapley.locator(".ytick text", has_text="region=South").count() == 1
    _no_exception(page)
    page.screenshot(path=ARTIFACTS / "compare_4_shapley.png")

    with page.expect_download(timeout=60_000) as csv_download:
        page.get_by_role("button", name="The comparison").click()
    header = Path(csv_download.value.path()).read_text().splitlines()[0]
    assert header.startswith('"itemset","length","support","count","fpr","fpr_reference","fpr_change"')
    with page.expect_download(timeout=120_000) as report_download:
        page.get_by_role("button", name="Pre-release report").click()
    report = Path(report_download.value.path()).read_text()
    assert "Comparison with the reference model" in report and "Pre-release check" in report
    report_path = ARTIFACTS / "compare_report.html"
    report_path.write_text(report)
    _no_exception(page)
    page.close()
