"""End to end in headless Chromium: a local folder of Parquet files as the data source, scanned
by DuckDB, with screenshots of the Data page and the Slices page (in $DIVERGENCE_ARTIFACTS or
tests/e2e/artifacts). Numbers are asserted in tests/app/test_large_data.py (AppTest).
"""
from __future__ import annotations

import pytest
from test_browser import ARTIFACTS, _goto, _no_exception, _settle, browser, start_app  # noqa: F401 (fixtures)

from divergence.data.datasets import load_demo

pytestmark = pytest.mark.e2e

PATH_LABEL = "Path of a CSV or Parquet file, a folder of them, or a glob"


def _folder(tmp_path):
    df = load_demo(6000)
    out = df[["age", "sex", "region", "education", "channel"]].copy()
    out["label"] = (df["defaulted"] == "yes").astype(int)
    out["pred"] = (df["predicted_default"] == "yes").astype(int)
    folder = tmp_path / "evals"
    folder.mkdir()
    out.iloc[:3000].to_parquet(folder / "part-0.parquet", index=False)
    out.iloc[3000:].to_parquet(folder / "part-1.parquet", index=False)
    return folder


def _type_path(page, text: str) -> None:
    box = page.get_by_role("textbox", name=PATH_LABEL)
    box.fill(text)
    box.press("Enter")
    _settle(page)


def test_local_path_journey(browser, start_app, tmp_path):  # noqa: F811 (fixtures)
    folder = _folder(tmp_path)
    url = start_app("light", env={"DIVERGENCE_DATA_FOLDER": str(tmp_path)})  # local paths only under it
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url)
    page.get_by_text("What to do:").first.wait_for(timeout=120_000)
    _goto(page, "1 · Data")
    page.get_by_text("Local path (large data: DuckDB)").click()
    _settle(page)
    _type_path(page, str(tmp_path / "nowhere"))
    page.get_by_text(f"File or folder '{tmp_path / 'nowhere'}' does not exist.").wait_for(timeout=30_000)
    _no_exception(page)
    page.screenshot(path=ARTIFACTS / "large_data_0_bad_path.png")

    _type_path(page, str(folder))
    page.get_by_text("6,000 rows × 7 columns").first.wait_for(timeout=30_000)
    page.locator('[data-testid="stDataFrame"] canvas').first.wait_for()
    page.get_by_text("Measured on the first 1,000 rows").first.wait_for()
    page.locator('[data-testid="stDataFrame"] tbody td').first.wait_for(state="attached")  # the grid has drawn
    _no_exception(page)
    page.screenshot(path=ARTIFACTS / "large_data_1_data_page.png")
    page.get_by_text("A local path is scanned without loading its rows").scroll_into_view_if_needed()
    page.screenshot(path=ARTIFACTS / "large_data_1_data_page_roles.png")

    _goto(page, "2 · Outcome and thresholds")
    assert page.get_by_role("spinbutton", name="Bootstrap replicates (0: none)").is_disabled()
    page.get_by_text("Intervals are analytic for DuckDB scans").first.scroll_into_view_if_needed()
    page.screenshot(path=ARTIFACTS / "large_data_2_outcome.png")
    page.get_by_role("button", name="Run the scan").click()
    page.get_by_text("slices mined in").wait_for(timeout=60_000)
    _no_exception(page)

    _goto(page, "3 · Slices")
    page.get_by_text("scanned by DuckDB, intervals analytic").wait_for(timeout=30_000)
    chart = page.locator('[data-testid="stPlotlyChart"]').filter(has_text="contribution to the fpr divergence")
    chart.locator(".main-svg").first.wait_for(timeout=30_000)
    _no_exception(page)
    page.screenshot(path=ARTIFACTS / "large_data_3_slices.png")
    page.close()
