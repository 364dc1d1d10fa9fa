"""Issue 23 in headless Chromium, with screenshots a person looks at: the Data page's tree binning,
a cut typed in the slice editor, the Ranking task measuring quality per query."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_browser import ARTIFACTS, _choose, _goto, _no_exception, _settle, browser, start_app  # noqa: F401

pytestmark = pytest.mark.e2e


def _radio(page, text: str) -> None:
    """Choose a radio option. A rerun still on its way (the upload's own) can draw the radio again
    and drop the click: while the option is in view and not chosen, click it again. (A choice that
    closes the expander around it, or redraws it elsewhere, is taken as made.)"""
    page.get_by_text(text, exact=True).first.click()
    _settle(page)
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    option = page.get_by_role("radio", name=text, exact=True)
    for _ in range(4):
        try:
            if option.count() == 0 or not option.first.is_visible() or option.first.is_checked(timeout=5_000):
                return
        except PlaywrightTimeout:  # drawn away between the look and the check: taken as made (the caller
            return                 # then waits for what the choice shows)
        page.get_by_text(text, exact=True).first.click()
        _settle(page)
    assert option.first.is_checked(), f"the radio option {text!r} could not be chosen"


def _run(page) -> None:
    _goto(page, "2 · Outcome and thresholds")
    page.get_by_role("button", name="Run the scan").click()
    page.get_by_text("slices mined").first.wait_for(timeout=240_000)
    _settle(page)


def test_tree_binning_and_a_typed_cut(browser, start_app):  # noqa: F811
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.goto(start_app())
    _settle(page)
    _goto(page, "1 · Data")
    page.get_by_text("Binning of numeric attributes").first.click()
    _settle(page)
    _radio(page, "Where the outcome changes (tree)")
    note = page.get_by_text("Tree binning: the cut points are chosen").first
    note.wait_for(state="attached", timeout=60_000)
    if not note.is_visible():  # the expander's label names the binning: a new expander, closed
        page.get_by_text("Binning of numeric attributes").first.click()
        _settle(page)
    note.wait_for(timeout=60_000)
    page.get_by_text("Binning of numeric attributes").first.scroll_into_view_if_needed()
    page.screenshot(path=ARTIFACTS / "issue23_data_tree_binning.png")
    _no_exception(page)
    _run(page)
    _goto(page, "3 · Slices")
    page.get_by_text("The open slice").first.wait_for(timeout=120_000)
    _settle(page)
    box = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Its items").locator("input").first
    box.scroll_into_view_if_needed()
    box.click()
    box.fill("income<=20")
    box.press("Enter")
    _settle(page)
    page.get_by_text("typed by hand").first.wait_for(timeout=120_000)
    page.keyboard.press("Escape")  # close the options list
    page.mouse.click(5, 500)
    _settle(page)
    page.get_by_text("typed by hand").first.scroll_into_view_if_needed()
    page.screenshot(path=ARTIFACTS / "issue23_typed_cut.png", full_page=False)
    _no_exception(page)
    page.close()


def _query_file(tmp_path: Path) -> Path:
    rng = np.random.default_rng(7)
    nq, per = 1500, 10
    q = np.repeat(np.arange(nq), per)
    device = rng.choice(["mobile", "desktop", "tablet"], nq)[q]
    market = rng.choice(["us", "de", "fr"], nq)[q]
    rel = rng.integers(0, 4, q.size) * (rng.random(q.size) < 0.35)
    worse = (device == "mobile") & (market == "de")
    df = pd.DataFrame({"query_id": q, "device": device, "market": market, "doc_words": rng.integers(50, 900, q.size),
                       "grade": rel, "ranker_score": rel + rng.normal(0, np.where(worse, 2.5, 0.7))})
    path = tmp_path / "search_eval.csv"
    df.to_csv(path, index=False)
    return path


def test_ranking_task_per_query(browser, start_app, tmp_path):  # noqa: F811
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.goto(start_app())
    _settle(page)
    _goto(page, "1 · Data")
    _radio(page, "Upload a file")
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(_query_file(tmp_path)))
    # the data caption, not the file's name: the uploader shows the name before the worker has read the
    # file, and the read's role guess (task: classification) then undid a Ranking chosen meanwhile
    page.get_by_text("15,000 rows × 6 columns").first.wait_for(timeout=120_000)
    _settle(page)
    _radio(page, "Ranking")
    _choose(page, "Score to rank by", "ranker_score")
    _radio(page, "Per query (NDCG, MRR, precision)")
    _choose(page, "Query column", "query_id")
    _choose(page, "Relevance column (0 = not relevant)", "grade")
    page.get_by_text("Quality measured").first.scroll_into_view_if_needed()
    page.screenshot(path=ARTIFACTS / "issue23_ranking_per_query_data.png")
    _no_exception(page)
    _goto(page, "2 · Outcome and thresholds")
    page.screenshot(path=ARTIFACTS / "issue23_ranking_per_query_metrics.png")
    page.get_by_role("button", name="Run the scan").click()
    page.get_by_text("slices mined").first.wait_for(timeout=240_000)
    _settle(page)
    _goto(page, "3 · Slices")
    page.get_by_text("device=mobile, market=de").first.wait_for(timeout=120_000)
    page.screenshot(path=ARTIFACTS / "issue23_ranking_per_query_slices.png")
    _no_exception(page)
    page.close()
