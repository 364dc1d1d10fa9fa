"""The built-in first screen as someone who has not seen the product reads it, in headless
Chromium: the headline tiles (that add up), the one distinct finding as a card, and the slice
table in the default order with its Finding column. Screenshots in $DIVERGENCE_ARTIFACTS or
tests/e2e/artifacts (findings_first_screen.png, findings_table.png)."""
from __future__ import annotations

import os
from pathlib import Path

import app_server
import pytest
from test_browser import _IDLE

pytestmark = pytest.mark.e2e

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(os.environ.get("DIVERGENCE_ARTIFACTS") or Path(__file__).parent / "artifacts")


def test_first_screen_reads_as_one_finding_and_tiles_that_add_up():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (make browser) to run the browser tests")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
    url, proc, log = app_server.start(ARTIFACTS / "server_findings.log", wait=180)
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            page.goto(url)
            page.get_by_text("One distinct finding").first.wait_for(timeout=180_000)
            page.wait_for_function(_IDLE, timeout=120_000)
            assert page.locator('[data-testid="stException"]').count() == 0
            text = page.locator('[data-testid="stMain"]').inner_text()
            assert "region=South, education=Primary" in text and "each a different cohort" not in text
            for label in ("Slices tested", "Significant", "Distinct findings", "Not significant"):
                assert label in text
            page.screenshot(path=ARTIFACTS / "findings_first_screen.png")
            grid = page.locator('[data-testid="stDataFrame"]').first
            grid.scroll_into_view_if_needed()
            page.wait_for_function(_IDLE, timeout=60_000)
            page.screenshot(path=ARTIFACTS / "findings_table.png")
            browser.close()
    finally:
        app_server.stop(proc, log, timeout=20)
