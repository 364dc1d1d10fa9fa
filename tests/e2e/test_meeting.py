"""The dashboard in a review meeting, in headless Chromium (Debian's, driven by Playwright):
sort by clicking a header, open a slice by clicking its row, the selection kept across reruns,
nothing fetched from outside the machine (a meeting room may be offline), and no colour
warnings from the figures. Numbers are asserted in tests/app (AppTest); here, what the
browser does. No fixed sleeps: every wait is on the exact condition.
"""
from __future__ import annotations

import pytest
from test_browser import (  # noqa: F401
    _HEADER_H,
    _MARKER_W,
    _SLICE_W,
    ARTIFACTS,
    PAGES,
    _choose,
    _goto,
    _no_exception,
    _settle,
    browser,
    click_grid_header,
    click_grid_row,
    start_app,
)

pytestmark = pytest.mark.e2e

VERDICT_W, FINDING_W = 150, 280  # the Verdict and Finding columns' widths, set by the app (ui/render.slice_grid)


def _grid(page):
    return page.locator('[data-testid="stDataFrame"]').filter(has_text="Verdict").first


def test_sort_open_offline_and_clean_figures(browser, start_app):  # noqa: F811 (fixtures)
    url = start_app("light")
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    requests, console = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: console.append(m.text))
    page.goto(url)
    page.get_by_text("What to do:").first.wait_for(timeout=120_000)
    page.locator('[data-testid="stPlotlyChart"]').filter(has_text="Lattice of").locator(".main-svg").first.wait_for(
        timeout=60_000)
    _settle(page)
    page.screenshot(path=ARTIFACTS / "meeting_1_first_screen.png")

    # a click on a header sorts every slice of the result by that column; a second click reverses
    grid = _grid(page)
    rows_header = _MARKER_W + _SLICE_W + VERDICT_W + FINDING_W + 20
    click_grid_header(page, grid, rows_header, "Rows ▼")
    page.get_by_text("sorted by Rows, largest first").wait_for(timeout=60_000)
    click_grid_header(page, grid, rows_header, "Rows ▲")
    page.get_by_text("sorted by Rows, smallest first").wait_for(timeout=60_000)
    _no_exception(page)

    # a click on a row opens its slice; the row stays selected when another widget reruns the page
    opened = click_grid_row(page, grid, 2)
    _choose(page, "Show", "top 50")
    page.get_by_text("Showing 50 of").wait_for(timeout=60_000)
    selected = grid.locator('tr[aria-selected="true"] td').first
    selected.wait_for(state="attached", timeout=60_000)
    assert selected.inner_text().strip() == opened
    grid.scroll_into_view_if_needed()
    page.screenshot(path=ARTIFACTS / "meeting_2_sorted_and_open.png")

    # every page of the app: no request leaves this machine, no colour warning from a figure
    for title, name, landmark in PAGES:
        _goto(page, title)
        page.get_by_text(landmark).first.wait_for(timeout=60_000)
        _no_exception(page)
    _goto(page, "3 · Slices")
    page.locator('[data-testid="stPlotlyChart"]').filter(has_text="Lattice of").locator(".main-svg").first.wait_for(
        timeout=60_000)
    outside = [u for u in requests if not u.startswith((url, "data:", "blob:"))]
    assert outside == [], f"requests left the machine: {outside[:3]}"
    warnings = [c for c in console if "Invalid color specifier" in c]
    assert warnings == [], warnings[:3]
    page.close()
