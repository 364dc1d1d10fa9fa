"""Does the dashboard keep answering while it scans? Prints a table; rerun it to compare.

    python benchmarks/speed/bench_responsiveness.py                      # this checkout
    python benchmarks/speed/bench_responsiveness.py --app-dir /tmp/old   # another checkout, e.g. before the worker
    python benchmarks/speed/bench_responsiveness.py --wide 25000         # the raw wide table of bench_raw.py instead

A real server (`streamlit run app.py`) driven by headless Chromium (Debian's /usr/bin/chromium,
Playwright): the raw ProPublica file (../shared/data, or $DIVERGENCE_DATA) is uploaded with only
its roles given (target two_year_recid, score decile_score, threshold 8), then scanned with at
most 3 items per slice. While the scan runs, a thread asks the health endpoint
(`/_stcore/health`) every quarter second, and a second browser session opens the app; the table
gives the health endpoint's answer times (median, 95th percentile, worst), the second session's
time to its first finding, and the scan's duration. Then, where the app has a Cancel button, a
scan of every itemset (support 0.0003, which runs for a minute) is cancelled after 3 s of
mining: seconds until the notice is shown and until its worker process is gone.
"""
from __future__ import annotations

import argparse
import os
import re
import runpy
import socket
import statistics
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("DIVERGENCE_DATA", ROOT.parent / "shared" / "data"))
# the same reading of /proc as the browser tests
scan_workers = runpy.run_path(str(ROOT / "tests" / "e2e" / "processes.py"))["scan_workers"]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def start_server(app_dir: Path, port: int, log: Path) -> subprocess.Popen:
    """The server as bench_first_card starts it (one way to start and wait for it, written once)."""
    from bench_first_card import start_server as start

    return start(app_dir, port, log)


def stop_server(proc: subprocess.Popen) -> str:
    """The server stopped as bench_first_card stops it: 'stopped', or what happened instead."""
    from bench_first_card import stop_server as stop

    return stop(proc)


def print_results(app_dir: Path, results: dict) -> None:
    print(f"app: {app_dir}   load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    width = max(map(len, results))
    for k, v in results.items():
        print(f"{k:<{width}}  {v}")


class Health(threading.Thread):
    """Asks the health endpoint every quarter second; records how long each answer took."""

    def __init__(self, url: str):
        super().__init__(daemon=True)
        self.url, self.times, self.stop = url, [], threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            t0 = time.monotonic()
            try:
                urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=300).read()
            except OSError:
                pass
            self.times.append(time.monotonic() - t0)
            self.stop.wait(0.25)


def settle(page) -> None:
    page.wait_for_timeout(300)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=600_000)
    page.locator('[data-stale="true"]').first.wait_for(state="detached", timeout=600_000)


def goto(page, title: str) -> None:
    page.get_by_role("link", name=title).first.click()
    settle(page)


def pick(page, label: str, option: str) -> None:
    box = page.get_by_role("combobox", name=label)
    if box.input_value() == option:
        return
    box.click()
    box.fill(option)
    page.get_by_role("option", name=option, exact=True).click()
    settle(page)


def number(page, label: str, value: str) -> None:
    box = page.get_by_role("spinbutton", name=label)
    box.fill(value)
    box.press("Enter")
    settle(page)


def summary(times: list[float]) -> str:
    if not times:
        return "-"
    q = sorted(times)
    p95 = q[min(len(q) - 1, int(0.95 * len(q)))]
    return f"{statistics.median(q):.3f} / {p95:.3f} / {q[-1]:.3f} (n={len(q)})"


def measure(app_dir: Path) -> dict:
    from playwright.sync_api import sync_playwright

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    proc = start_server(app_dir, port, Path(f"/tmp/bench_responsiveness_{port}.log"))
    out: dict = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            t0 = time.monotonic()
            page.goto(url)
            page.get_by_text("How sure:").first.wait_for(timeout=600_000)
            out["first open (s)"] = f"{time.monotonic() - t0:.1f}"
            idle = Health(url)
            idle.start()
            page.wait_for_timeout(3000)
            idle.stop.set()
            idle.join()
            out["health idle: median / p95 / max (s)"] = summary(idle.times)

            goto(page, "1 · Data")
            page.get_by_text("Upload a file").click()
            settle(page)
            page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
                DATA / "compas-scores-two-years.csv")
            page.get_by_text("7,214 rows × 53 columns").first.wait_for(timeout=120_000)
            settle(page)
            pick(page, "Target (the true value)", "two_year_recid")
            page.get_by_text("A score and a threshold").click()
            settle(page)
            pick(page, "Score column", "decile_score")
            number(page, "Threshold (score ≥ threshold predicts positive)", "8")
            goto(page, "2 · Outcome and thresholds")
            pick(page, "Maximum items per slice", "3")

            health = Health(url)
            health.start()
            t0 = time.monotonic()
            page.get_by_role("button", name="Run the scan").click()
            page.wait_for_timeout(2000)
            t1 = time.monotonic()
            second = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
            second.goto(url)
            second.get_by_text("How sure:").first.wait_for(timeout=900_000)
            out["second session opened during the scan: first finding after (s)"] = f"{time.monotonic() - t1:.1f}"
            second.context.close()
            page.get_by_text("slices mined in").wait_for(timeout=900_000)
            health.stop.set()
            health.join()
            out["scan, max 3 items per slice (s)"] = f"{time.monotonic() - t0:.1f}"
            out["health during the scan: median / p95 / max (s)"] = summary(health.times)

            if page.get_by_text("Every itemset (exhaustive").count():
                number(page, "Minimum support (share of rows)", "0.0003")
                pick(page, "Maximum items per slice", "no limit")
                page.get_by_text("Every itemset (exhaustive").click()
                settle(page)
                health = Health(url)
                health.start()
                page.get_by_role("button", name="Run the scan").click()
                page.get_by_text(re.compile(r"Mining: [1-9][\d,]* slices so far")).first.wait_for(timeout=300_000)
                page.wait_for_timeout(3000)
                assert scan_workers(proc.pid), "no worker is running"
                t0 = time.monotonic()
                page.get_by_role("button", name="Cancel").click()
                page.get_by_text("Scan cancelled after").first.wait_for(timeout=60_000)
                out["cancel: notice shown after (s)"] = f"{time.monotonic() - t0:.2f}"
                while scan_workers(proc.pid) and time.monotonic() - t0 < 60:
                    time.sleep(0.05)
                out["cancel: worker process gone after (s)"] = f"{time.monotonic() - t0:.2f}"
                health.stop.set()
                health.join()
                out["health during the long scan: median / p95 / max (s)"] = summary(health.times)
            browser.close()
    finally:
        stopped = stop_server(proc)
        if stopped != "stopped":
            out["server"] = stopped
    return out


def measure_wide(app_dir: Path, rows: int) -> dict:
    """The raw wide table of benchmarks/speed/bench_raw.py (``rows`` x 60: ids, names, dates, free text) uploaded
    with its roles only and scanned with the defaults: seconds from Run to the result on screen, the
    health endpoint's answers meanwhile, and the result's line."""
    import tempfile

    from bench_raw import synthetic  # beside this script
    from playwright.sync_api import sync_playwright

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"wide_{rows}.csv"
        synthetic(rows).to_csv(path, index=False)
        proc = start_server(app_dir, port, Path(f"/tmp/bench_responsiveness_{port}.log"))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.goto(url)
                page.get_by_text("How sure:").first.wait_for(timeout=600_000)
                goto(page, "1 · Data")
                page.get_by_text("Upload a file").click()
                settle(page)
                t0 = time.monotonic()
                page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(path)
                page.get_by_text(re.compile(rf"{rows:,} rows × \d+ columns")).first.wait_for(timeout=300_000)
                settle(page)
                out["upload: preview on screen after (s)"] = f"{time.monotonic() - t0:.1f}"
                pick(page, "Target (the true value)", "y")
                page.get_by_text("A score and a threshold").click()
                settle(page)
                pick(page, "Score column", "score")
                number(page, "Threshold (score ≥ threshold predicts positive)", "0.5")
                goto(page, "2 · Outcome and thresholds")
                health = Health(url)
                health.start()
                t0 = time.monotonic()
                page.get_by_role("button", name="Run the scan").click()
                page.get_by_text("slices mined in").first.wait_for(timeout=900_000)
                out["Run to the result on screen (s)"] = f"{time.monotonic() - t0:.1f}"
                health.stop.set()
                health.join()
                out["health during the scan: median / p95 / max (s)"] = summary(health.times)
                out["result"] = page.get_by_text("slices mined in").first.inner_text()
                browser.close()
        finally:
            stopped = stop_server(proc)
            if stopped != "stopped":
                out["server"] = stopped
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--app-dir", type=Path, default=ROOT, help="the checkout whose app.py to run")
    ap.add_argument("--wide", type=int, default=None, metavar="ROWS",
                    help="instead: the raw wide table of bench_raw.py with ROWS rows, uploaded and scanned with its roles")
    args = ap.parse_args()
    if args.wide:
        print_results(args.app_dir.resolve(), measure_wide(args.app_dir.resolve(), args.wide))
        return
    if not (DATA / "compas-scores-two-years.csv").exists():
        raise SystemExit(f"compas-scores-two-years.csv not found in {DATA} (set DIVERGENCE_DATA)")
    print_results(args.app_dir.resolve(), measure(args.app_dir.resolve()))


if __name__ == "__main__":
    main()
