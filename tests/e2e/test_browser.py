"""End to end in headless Chromium (Debian's /usr/bin/chromium driven by Playwright; never a
browser download): the analyst's journey through the real upload input, and every page in
the light and the dark theme at 1280x800, with screenshots a person can look at.

Screenshots go to $DIVERGENCE_ARTIFACTS, or tests/e2e/artifacts (ignored by git).
Table contents are asserted in tests/app (AppTest); here: rendering, clicks, navigation.
"""
from __future__ import annotations

import os
from pathlib import Path

import app_server
import pytest

from divergence.data.datasets import load_demo

pytestmark = pytest.mark.e2e

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(os.environ.get("DIVERGENCE_ARTIFACTS") or Path(__file__).parent / "artifacts")
PAGES = [("1 · Data", "data", "Column roles"), ("2 · Outcome and thresholds", "outcome", "Run the scan"),
         ("3 · Slices", "slices", "The open slice"), ("4 · Intervals", "intervals", "Rows the findings share"),
         ("5 · Attributes", "attributes", "Global divergence"), ("6 · Export", "export", "Slice plan")]


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (make browser) to run the browser tests")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        _patient(b)
        yield b
        b.close()


#: how long a wait or an action without a timeout of its own may take (Playwright's default is 30 s):
#: on CI's two busy cores a rerun after an upload or a scan has taken longer; a page that never comes
#: still fails, later
PATIENCE_MS = 90_000


def _patient(b) -> None:
    """Every page and context this browser opens waits up to :data:`PATIENCE_MS` by default."""
    new_page, new_context = b.new_page, b.new_context

    def page(*args, **kwargs):
        opened = new_page(*args, **kwargs)
        opened.context.set_default_timeout(PATIENCE_MS)
        return opened

    def context(*args, **kwargs):
        opened = new_context(*args, **kwargs)
        opened.set_default_timeout(PATIENCE_MS)
        return opened

    b.new_page, b.new_context = page, context


@pytest.fixture(scope="module")
def start_app():
    """Start `streamlit run app.py` (one server per theme); stopped at the end of the module."""
    started = []

    def start(theme: str = "light", env: dict | None = None) -> str:
        url, proc, log = app_server.start(ARTIFACTS / f"server_{theme}.log", theme=theme, wait=180, env=env)
        started.append((proc, log))
        return url

    yield start
    for proc, log in started:
        app_server.stop(proc, log, timeout=20)


#: no script run going on and every element drawn (an element's code loads after the run: a grey
#: skeleton until then, seconds on a fresh server; a test that read the page then missed the tiles)
_IDLE = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app !== null && app.getAttribute('data-test-script-state') === 'notRunning'
        && document.querySelector('[data-testid="stStatusWidget"]') === null
        && document.querySelector('[data-testid="stSkeleton"]') === null;
}"""


def _settle(page) -> None:
    """Wait until no script run is going on (no fixed sleep). A run an action has not started
    yet is not waited for: callers then wait for the exact condition they expect."""
    page.wait_for_function(_IDLE, timeout=120_000)


def _goto(page, title: str) -> None:
    # a run still going on (the first page after the server starts: app.py still runs after its
    # cards are drawn) could take the place of the click's (CI once saw the Data page never come)
    _settle(page)
    page.get_by_role("link", name=title).first.click()
    _settle(page)


def _choose(page, label: str, option) -> str:
    """Pick an option of the selectbox labelled ``label``: by its text, or the first whose
    text satisfies ``option`` (a function)."""
    box = page.get_by_role("combobox", name=label)
    box.wait_for(timeout=120_000)  # a rerun under load (the attribute screen after an upload) can take its time
    box.click()
    box.press("ArrowDown")  # opens the list
    if callable(option):
        options = page.get_by_role("option")
        texts = [options.nth(k).inner_text().strip() for k in range(options.count())]
        item = options.nth(next(k for k, t in enumerate(texts) if option(t)))
    else:
        item = page.get_by_role("option", name=option, exact=True)
    text = item.inner_text().strip()
    item.click()
    # the box shows the choice once the rerun it started has drawn the page again
    page.wait_for_function("([label, text]) => [...document.querySelectorAll('[data-testid=stSelectbox] input')]"
                           ".some(b => b.getAttribute('aria-label') === label && b.value === text)",
                           arg=[label, text], timeout=120_000)
    _settle(page)
    return text


# the slice table's geometry (st.dataframe): row markers, then the Slice column (300 px, set by the app)
_MARKER_W, _SLICE_W, _HEADER_H, _ROW_H = 33, 300, 36, 35


def click_grid_row(page, grid, row: int) -> str:
    """Click a cell of the slice table's row ``row`` (0 = first) and wait until its slice is open:
    the row is selected and the slice editor holds its items. Returns the slice."""
    grid.scroll_into_view_if_needed()
    itemset = grid.locator("tbody tr").nth(row).locator("td").first.inner_text().strip()
    box = grid.bounding_box()
    page.mouse.click(box["x"] + _MARKER_W + 60, box["y"] + _HEADER_H + _ROW_H * row + _ROW_H / 2)
    page.wait_for_function(
        "([slice]) => [...document.querySelectorAll('[data-testid=stDataFrame] tr[aria-selected=true] td:first-child')]"
        ".some(td => td.textContent.trim() === slice)", arg=[itemset], timeout=120_000)
    for item in itemset.split(", "):
        page.locator('[data-testid="stMultiSelect"]').filter(has_text=item).first.wait_for(timeout=60_000)
    _settle(page)
    return itemset


def click_grid_header(page, grid, x_offset: float, expect: str) -> None:
    """Click the slice table's header at ``x_offset`` px from its left edge; wait until a header
    reads ``expect`` (its name and the sort arrow)."""
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    page.mouse.click(box["x"] + x_offset, box["y"] + _HEADER_H / 2)
    grid.locator("thead th", has_text=expect).first.wait_for(state="attached", timeout=120_000)
    _settle(page)


def _no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, "a traceback is on screen"


def _upload_file(tmp_path: Path) -> Path:
    """A realistic upload whose roles are not guessable from the names: the user chooses them."""
    df = load_demo(5000)
    out = df[["age", "sex", "region", "education", "channel"]].copy()
    out["outcome_true"] = (df["defaulted"] == "yes").astype(int)
    out["model_says"] = (df["predicted_default"] == "yes").astype(int)
    path = tmp_path / "evaluation.csv"
    out.to_csv(path, index=False)
    return path


def test_journey_upload_choose_run_sort_open(browser, start_app, tmp_path):
    url = start_app("light")
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url)
    # the landing page shows a first finding on the built-in dataset, no setting touched
    page.get_by_text("What to do:").first.wait_for(timeout=120_000)
    page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot .main-svg').first.wait_for(timeout=60_000)
    _no_exception(page)
    page.screenshot(path=ARTIFACTS / "journey_1_first_finding.png")

    _goto(page, "1 · Data")
    page.get_by_text("Upload a file").click()
    _settle(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(_upload_file(tmp_path))
    page.get_by_text("evaluation.csv", exact=False).first.wait_for(timeout=30_000)
    _settle(page)
    page.get_by_text("5,000 rows × 7 columns").first.wait_for()
    _choose(page, "Target (the true value)", "outcome_true")
    _choose(page, "Prediction column", "model_says")
    page.get_by_text("Measured: fpr").first.wait_for()
    _no_exception(page)
    page.screenshot(path=ARTIFACTS / "journey_2_columns_chosen.png")

    _goto(page, "2 · Outcome and thresholds")
    page.get_by_role("button", name="Run the scan").click()
    page.get_by_text("slices mined in").wait_for(timeout=60_000)
    _no_exception(page)
    page.screenshot(path=ARTIFACTS / "journey_3_run.png")

    _goto(page, "3 · Slices")
    page.get_by_text("What to do:").first.wait_for(timeout=60_000)
    _choose(page, "Sort by", "Rows")
    page.get_by_text("sorted by Rows, largest first").wait_for(timeout=60_000)
    grid = page.locator('[data-testid="stDataFrame"]').filter(has_text="Verdict").first
    grid.locator("thead th", has_text="Rows ▼").first.wait_for(state="attached", timeout=60_000)  # the table re-sorted
    slices = grid.locator("tbody tr td:first-child").all_inner_texts()
    row = next(k for k, text in enumerate(slices) if ", " in text)  # the first slice of 2+ items
    opened = click_grid_row(page, grid, row)
    assert len(opened.split(", ")) >= 2
    chart = page.locator('[data-testid="stPlotlyChart"]').filter(has_text="contribution to the fpr divergence")
    chart.locator(".main-svg").first.wait_for(timeout=30_000)
    for item in opened.split(", "):  # one bar per item of the slice opened
        chart.locator(".ytick text", has_text=item).first.wait_for(timeout=30_000)
        assert chart.locator(".ytick text", has_text=item).count() == 1
    _no_exception(page)
    chart.scroll_into_view_if_needed()
    page.screenshot(path=ARTIFACTS / "journey_4_shapley.png")

    # export: the slice table as CSV, a figure as PNG (kaleido driving the same Chromium) and HTML
    _goto(page, "6 · Export")
    with page.expect_download(timeout=60_000) as csv_download:
        page.get_by_role("button", name="Every slice").click()
    csv_text = Path(csv_download.value.path()).read_text()
    assert csv_text.splitlines()[0].startswith('"itemset","length","support","count"')
    with page.expect_download(timeout=60_000) as html_download:
        page.get_by_role("button", name="HTML", exact=True).nth(1).click()
    assert csv_download.value.suggested_filename == "slices.csv"
    assert html_download.value.suggested_filename == "intervals.html"
    assert "Plotly.newPlot" in Path(html_download.value.path()).read_text()
    with page.expect_download(timeout=90_000) as png_download:
        page.get_by_role("button", name="PNG", exact=True).nth(1).click()
    png = Path(png_download.value.path()).read_bytes()
    assert png_download.value.suggested_filename == "intervals.png" and png[:8] == b"\x89PNG\r\n\x1a\n"
    (ARTIFACTS / "export_intervals.png").write_bytes(png)
    with page.expect_download(timeout=90_000) as report_download:
        page.get_by_role("button", name="Slice report").click()
    report = Path(report_download.value.path()).read_text()
    assert report_download.value.suggested_filename == "slice_report.html"
    assert "<h1>Slice report</h1>" in report and 'class="plotly-graph-div"' in report
    assert "the dashboard&#x27;s settings" in report and "sha256:" in report
    _no_exception(page)
    page.close()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_page_renders(browser, start_app, theme):
    url = start_app(theme)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    # a bookmarked page as the first request after the server starts: app.py still runs
    page.goto(f"{url}/intervals")
    page.get_by_text("What to do:").first.wait_for(timeout=120_000)
    _no_exception(page)
    for title, name, landmark in PAGES:
        _goto(page, title)
        page.get_by_text(landmark).first.wait_for(timeout=30_000)
        if name in ("slices", "intervals", "attributes"):
            page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot .main-svg').first.wait_for()
        if name in ("data", "slices"):  # the grid draws on a canvas a moment after the page
            page.locator('[data-testid="stDataFrame"] canvas').first.wait_for()
            page.locator('[data-testid="stDataFrame"] tbody td').first.wait_for(state="attached")
        _no_exception(page)
        page.screenshot(path=ARTIFACTS / f"{theme}_{name}.png")
    page.close()
