"""End to end in headless Chromium, against hostile files and under load (issue 21): a file whose
name, column names and values carry HTML and markdown plants nothing and makes the browser fetch
nothing outside; a 1 MB gzip bomb uploaded through the real input is refused while the server's
health endpoint keeps answering within 2 s; a scan waiting for a free worker says so; without a
data folder the Data page offers no local path, and with one /etc/passwd is refused. Screenshots
in $DIVERGENCE_ARTIFACTS or tests/e2e/artifacts."""
from __future__ import annotations

import os
import threading
import time
import urllib.parse
import urllib.request
import zlib
from pathlib import Path

import app_server
import numpy as np
import pandas as pd
import pytest
from processes import scan_workers
from test_browser import ARTIFACTS, _goto, _no_exception, _settle, browser  # noqa: F401 (fixtures)

pytestmark = pytest.mark.e2e

OUTSIDE = "198.51.100.7"  # TEST-NET-2: no request may go there (nor anywhere but 127.0.0.1)
HOSTILE_COLUMN = f"![c](http://{OUTSIDE}/column.png)"
HOSTILE_VALUE = f"a`<img src=http://{OUTSIDE}/value.png onerror=window.__planted=1>`"


@pytest.fixture
def server(tmp_path):
    started = []

    def start(**env) -> str:
        url, proc, log = app_server.start(tmp_path / f"server{len(started)}.log", env=env or None)
        started.append((proc, log))
        return url

    yield start
    for proc, log in started:
        app_server.stop(proc, log, timeout=30)


def _page(browser, url, requests):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.on("request", lambda r: requests.append(r.url))
    page.goto(url)
    page.get_by_text("What to do:").first.wait_for(timeout=120_000)
    return page


def _upload(page, path) -> None:
    _goto(page, "1 · Data")
    page.get_by_text("Upload a file").click()
    _settle(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(path)


def test_a_hostile_file_plants_nothing_and_fetches_nothing(browser, server, tmp_path):
    rng = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame({"label": rng.integers(0, 2, n), HOSTILE_COLUMN: rng.choice([HOSTILE_VALUE, "plain"], n),
                       "region": rng.choice(["north", "south"], n)})
    # the model errs on the hostile value: its slice is the first finding card
    df["pred"] = np.where((df[HOSTILE_COLUMN] == HOSTILE_VALUE) & (rng.random(n) < 0.6), 1, df["label"])
    path = tmp_path / "<img src=x onerror=window.__planted=2>.csv"
    df.to_csv(path, index=False)
    requests: list[str] = []
    page = _page(browser, server(), requests)
    _upload(page, path)
    page.get_by_text("3,000 rows × 4 columns").first.wait_for(timeout=60_000)
    _settle(page)
    _no_exception(page)
    page.screenshot(path=ARTIFACTS / "safety_hostile_data_page.png")
    _goto(page, "2 · Outcome and thresholds")
    page.get_by_role("button", name="Run the scan").click()
    page.get_by_text("slices mined in").wait_for(timeout=120_000)
    for title in ("3 · Slices", "4 · Intervals", "5 · Attributes", "6 · Export", "1 · Data"):
        _goto(page, title)
        page.wait_for_timeout(500)  # let any planted image try to load
        _no_exception(page)
        if title == "3 · Slices":
            page.get_by_text("What to do:").first.wait_for(timeout=60_000)
            page.screenshot(path=ARTIFACTS / "safety_hostile_slices_page.png")
            assert page.locator("code", has_text="<img src=").count() >= 1  # the value shown as text
        assert page.evaluate("() => window.__planted === undefined")
        assert page.locator(f"img[src*='{OUTSIDE}'], img[src='x']").count() == 0
    outside = [u for u in requests if urllib.parse.urlparse(u).hostname not in ("127.0.0.1", None)
               and not u.startswith(("data:", "blob:"))]
    assert outside == []
    page.close()


def _bomb(path) -> None:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    member = c.compress(b"0" * (64 << 20)) + c.flush()
    head = zlib.compressobj(9, zlib.DEFLATED, 31)
    path.write_bytes(head.compress(b"label,pred\n") + head.flush() + member * 16)  # ~1 MB, ~1 GB inflated


class _Health(threading.Thread):
    """Asks the server's health endpoint every tenth of a second; keeps the slowest answer."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url, self.worst, self.asked, self.stop = url, 0.0, 0, threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            t0 = time.monotonic()
            try:
                urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=10).read()
            except OSError:
                pass
            self.worst = max(self.worst, time.monotonic() - t0)
            self.asked += 1
            time.sleep(0.1)


def test_a_gzip_bomb_upload_is_refused_while_the_server_answers(browser, server, tmp_path):
    path = tmp_path / "evaluation.csv"
    _bomb(path)
    url = server()
    page = _page(browser, url, [])
    health = _Health(url)
    health.start()
    t0 = time.monotonic()
    _upload(page, path)
    page.get_by_text("decompresses to more than 100 times its").first.wait_for(timeout=120_000)
    seconds = time.monotonic() - t0
    health.stop.set()
    health.join(15)
    _no_exception(page)
    page.screenshot(path=ARTIFACTS / "safety_gzip_bomb_refused.png")
    print(f"gzip bomb ({path.stat().st_size:,} bytes): refused on screen after {seconds:.1f} s; health worst "
          f"{health.worst:.3f} s over {health.asked} requests")
    assert health.worst <= 2.0 and health.asked >= 5
    page.get_by_text("The data and settings in use are unchanged.").wait_for()
    page.close()


def _heavy_csv(tmp_path: Path) -> Path:
    """A scan that keeps a worker busy: 100,000 rows, 30 random attributes, mined at support 0.0003
    (at 4,000 rows a fast, idle machine finished it before a second session asked, and nothing
    waited; at 100,000 the budget cuts its mining after about 45 s)."""
    return app_server.random_table_csv(tmp_path / "heavy.csv", rows=100_000, attributes=30, values=3)


def _start_heavy_scan(page, path: Path) -> None:
    """Upload the heavy table, set its support and run the scan until it reports slices mined."""
    _upload(page, path)
    page.get_by_text("100,000 rows × 32 columns").first.wait_for(timeout=60_000)
    _goto(page, "2 · Outcome and thresholds")
    box = page.get_by_role("spinbutton", name="Minimum support (share of rows)")
    box.fill("0.0003")
    box.press("Enter")
    _settle(page)
    page.get_by_role("button", name="Run the scan").click()
    page.get_by_text("slices so far").first.wait_for(timeout=120_000)


def test_a_scan_waiting_for_a_free_worker_says_so(browser, server, tmp_path):
    path = _heavy_csv(tmp_path)
    url = server(DIVERGENCE_WORKERS="1")
    first = _page(browser, url, [])
    _start_heavy_scan(first, path)  # the one worker is busy
    second = _page(browser, url, [])  # a second session (its first result came from the server's cache)
    _goto(second, "2 · Outcome and thresholds")
    box = second.get_by_role("spinbutton", name="Minimum support (share of rows)")
    box.fill("0.1")
    box.press("Enter")
    _settle(second)
    second.get_by_role("button", name="Run the scan").click()  # a new scan: it waits in the queue
    second.get_by_text("Waiting for a free worker, next in line (the server runs 1 at once)").first.wait_for(
        timeout=120_000)
    second.screenshot(path=ARTIFACTS / "safety_waiting_for_a_worker.png")
    first.get_by_role("button", name="Cancel").first.click()
    second.get_by_text("slices mined in").wait_for(timeout=120_000)  # its turn came
    _no_exception(second)
    first.close()
    second.close()


def test_local_paths_only_under_the_data_folder(browser, server, tmp_path):
    page = _page(browser, server(), [])
    _goto(page, "1 · Data")
    assert page.get_by_text("Local path (large data: DuckDB)").count() == 0
    page.screenshot(path=ARTIFACTS / "safety_data_page_no_local_path.png")
    page.close()
    folder = tmp_path / "evals"
    folder.mkdir()
    (folder / "passwd").symlink_to("/etc/passwd")
    page = _page(browser, server(DIVERGENCE_DATA_FOLDER=str(folder)), [])
    _goto(page, "1 · Data")
    page.get_by_text("Local path (large data: DuckDB)").click()
    _settle(page)
    for typed in ("/etc/passwd", "passwd", "../../../../etc/passwd"):
        box = page.get_by_role("textbox", name="Path of a CSV or Parquet file, a folder of them, or a glob")
        box.fill(typed)
        box.press("Enter")
        _settle(page)
        page.get_by_text(f"'{typed}' is outside the data folder").first.wait_for(timeout=30_000)
        assert "root:x:0:0" not in page.content()
    _no_exception(page)
    page.screenshot(path=ARTIFACTS / "safety_data_page_outside_the_folder.png")
    page.close()


def test_a_closed_tabs_scan_is_stopped_within_seconds(browser, tmp_path):
    path = _heavy_csv(tmp_path)
    url, proc, log = app_server.start(tmp_path / "server.log")
    try:
        page = _page(browser, url, [])
        _start_heavy_scan(page, path)
        assert len(scan_workers(proc.pid)) == 1
        page.close()  # the tab is closed mid-scan
        t0 = time.monotonic()
        while scan_workers(proc.pid) and time.monotonic() - t0 < 30:
            time.sleep(0.1)
        seconds = time.monotonic() - t0
        print(f"closed tab: its scan's worker gone after {seconds:.1f} s")
        assert not scan_workers(proc.pid) and seconds < 8
    finally:
        app_server.stop(proc, log, timeout=30)
