"""Issue 47 F18, in the browser: what Streamlit draws, not the markdown we send. Bare addresses in the
data (a column name, values, a repeated header name) became live links although ``md_text`` escaped
them: Streamlit's markdown finds bare addresses in the text after the escapes are read. Every page of
a session on such a file is searched for a link to them (none may be drawn, the text must be there)."""
from __future__ import annotations

import numpy as np
import pytest
from test_browser import ARTIFACTS, _goto, _no_exception, _settle, browser, start_app  # noqa: F401 (fixtures)

pytestmark = pytest.mark.e2e

HOST = "198.51.100.7"  # TEST-NET-2
URL_COLUMN = f"see http://{HOST}/column"
REPEATED = f"http://{HOST}/repeated"
VALUES = [f"http://{HOST}/value", "www.evil-site.example", "me@evil-site.example"]


def _hostile_csv(path) -> None:
    """Bare addresses as a column name, as values, and as a header name given twice (the Data page's note)."""
    rng = np.random.default_rng(0)
    n = 2000
    label = rng.integers(0, 2, n)
    site = rng.choice(VALUES, n)
    pred = np.where((site == VALUES[0]) & (rng.random(n) < 0.6), 1, label)
    region = rng.choice(["north", "south"], n)
    rows = [f'label,pred,"{URL_COLUMN}",{REPEATED},{REPEATED},region']
    rows += [f"{a},{b},{c},{d},{e},{f}" for a, b, c, d, e, f in
             zip(label, pred, site, rng.choice(["x", "y"], n), rng.choice(["p", "q"], n), region)]
    path.write_text("\n".join(rows) + "\n")


def _links(page) -> list[str]:
    """The addresses of the links drawn to the data's hosts."""
    hrefs = page.locator("a").evaluate_all("els => els.map(e => e.getAttribute('href') || '')")
    return [h for h in hrefs if HOST in h or "evil-site" in h]


def test_bare_addresses_in_the_data_are_drawn_as_text_on_every_page(browser, start_app, tmp_path):
    path = tmp_path / "evaluation.csv"
    _hostile_csv(path)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(start_app())
    page.get_by_text("What to do:").first.wait_for(timeout=120_000)
    _goto(page, "1 · Data")
    page.get_by_text("Upload a file").click()
    _settle(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(path))
    page.get_by_text("more than once in the header").first.wait_for(timeout=60_000)
    _settle(page)
    _no_exception(page)
    text = page.inner_text("body").replace("\u2060", "")
    assert REPEATED in text  # the note names the header as it is written
    assert _links(page) == [], "Data page"
    page.screenshot(path=ARTIFACTS / "links_data_page.png")
    _goto(page, "2 · Outcome and thresholds")
    page.get_by_role("button", name="Run the scan").click()
    page.get_by_text("slices mined in").wait_for(timeout=120_000)
    for title in ("3 · Slices", "4 · Intervals", "5 · Attributes", "6 · Export", "7 · Compare models", "1 · Data"):
        _goto(page, title)
        _no_exception(page)
        if title == "6 · Export":
            page.get_by_text("Figures").first.wait_for(timeout=60_000)
            _settle(page)
            page.screenshot(path=ARTIFACTS / "links_export_page.png", full_page=True)
            shown = page.inner_text("body").replace("\u2060", "")
            assert URL_COLUMN in shown or VALUES[0] in shown or "www.evil-site.example" in shown
        assert _links(page) == [], title
    page.close()
