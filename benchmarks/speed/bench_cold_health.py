"""Does the dashboard's health check answer while two sessions' first scans compile the kernels?

    python benchmarks/speed/bench_cold_health.py [--sessions 2] [--kernels jit|auto]

Issue 47 N9. A real server (``python -m ui.guard run app.py``, as ``make app``) with numba's JIT and an
empty numba cache (``DIVERGENCE_KERNELS=jit``, ``NUMBA_CACHE_DIR`` a fresh folder): the first run after
installing without the ahead-of-time build. ``--sessions`` browser pages (headless Chromium) open the
app at once; each one's first screen scans the built-in dataset, so every kernel compiles. A thread asks
``/_stcore/health`` every 0.1 s (10 s time-out) until every page shows its first finding. Prints the
answer times (median, 95th percentile, worst), the answers that took more than 1 s or failed, the
seconds to the last first finding, and which processes compiled (the server must not).
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class Health(threading.Thread):
    """Asks the health endpoint every 0.1 s; keeps every answer time (a failure counts as its time-out)."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url, self.times, self.failed, self.stop = url, [], 0, threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            t0 = time.monotonic()
            try:
                urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=10).read()
            except OSError:
                self.failed += 1
            self.times.append(time.monotonic() - t0)
            time.sleep(0.1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=2)
    ap.add_argument("--kernels", default="jit", choices=["jit", "auto"],
                    help="jit: numba's JIT from an empty cache (default); auto: the build when there is one")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        log_path = Path(tmp) / "server.log"
        env = dict(os.environ, DIVERGENCE_KERNELS=args.kernels, NUMBA_CACHE_DIR=str(Path(tmp) / "numba"))
        with open(log_path, "w") as log:
            proc = subprocess.Popen([sys.executable, "-m", "ui.guard", "run", "app.py", "--server.headless", "true",
                                     "--server.address", "127.0.0.1", "--server.port", str(port),
                                     "--server.fileWatcherType", "none"], cwd=ROOT, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True, env=env)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.time() + 180
            while time.time() < deadline:
                try:
                    if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                        break
                except OSError:
                    time.sleep(0.2)
            health = Health(url)
            health.start()
            t0 = time.monotonic()
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                pages = [browser.new_context().new_page() for _ in range(args.sessions)]
                for page in pages:
                    page.goto(url, wait_until="commit")
                for page in pages:
                    page.get_by_text("What to do:").first.wait_for(timeout=600_000)
                first = time.monotonic() - t0
                browser.close()
            health.stop.set()
            health.join(15)
        finally:
            os.killpg(proc.pid, 15)
            proc.wait(30)
        times = sorted(health.times)
        said = log_path.read_text().count("compiling the kernels")
        print(f"sessions {args.sessions}, kernels {args.kernels}, load average {os.getloadavg()[0]:.1f} on "
              f"{os.cpu_count()} cores")
        print(f"health: {len(times)} answers; median {statistics.median(times):.3f} s, 95th percentile "
              f"{times[int(0.95 * (len(times) - 1))]:.3f} s, worst {times[-1]:.3f} s; over 1 s: "
              f"{sum(t > 1 for t in times)}; failed: {health.failed}")
        print(f"every session's first finding after {first:.1f} s")
        print(f"the server's log says 'compiling the kernels' {said} time(s) (a worker's message lands there too)")


if __name__ == "__main__":
    main()
