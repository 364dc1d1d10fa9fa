"""How soon a finding card is on screen: in a new session, and after the confidence changes.

    python benchmarks/speed/bench_first_card.py                       # 5 runs of each, this checkout
    python benchmarks/speed/bench_first_card.py --runs 3 --port 8655  # fewer runs, a given port
    python benchmarks/speed/bench_first_card.py --app-dir /tmp/old    # another checkout's app.py

A real server (`streamlit run app.py`, kept running throughout) driven by headless Chromium (Debian's
/usr/bin/chromium through Playwright, 1280x800); prints a table (seconds: median, worst, runs).

1. First finding card in a new session: a new browser context (a new Streamlit session) opens the
   app's URL; the clock runs from `page.goto` until the first finding card of the built-in dataset
   (the bordered container on the Slices page holding "Who: / What: / How sure: / What to do:" and
   its "Open this slice" button) is visible. The first run is "cold" (fresh server: the scan of the
   built-in data runs in a worker), the others "warm" (the server keeps that result).
2. After changing the confidence: in the last session, on the Outcome page, the Confidence
   selectbox is set to another value through the browser (the page re-assesses the kept mined table
   at once; "Run the scan" is clicked only if the page asks for it), then "See the slices" is clicked;
   the clock runs from the click on the option until the Slices page shows the new result:
   its caption names the new confidence and the first card's "What:" line (the slice's interval)
   differs from the one shown before. Each run takes the next value of 90%, 99%, 80%, 99.9%, 95%,
   ... so the first four are new to the server (re-assessed on the kept mined table) and later ones
   are results it already holds ("taken from the cache"): the rows are split by what the Outcome
   page said ran ("mined in" would mean a full re-scan).

Screenshots (checked by hand when the benchmark changes): /tmp/first_card_*.png.
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 800}
SHOTS = "/tmp/first_card_"
#: the confidences chosen in turn (the app starts at 0.95): each new to the server once, then cached
CYCLE = [0.9, 0.99, 0.8, 0.999, 0.95]

#: no script run going on and every element drawn (as tests/e2e/test_browser.py waits)
IDLE = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app !== null && app.getAttribute('data-test-script-state') === 'notRunning'
        && document.querySelector('[data-testid="stStatusWidget"]') === null
        && document.querySelector('[data-testid="stSkeleton"]') === null;
}"""

#: the first finding card's "What:" line (its interval), or null: the innermost block around "How sure:"
CARD_WHAT = """() => {
    const b = [...document.querySelectorAll('b')].find(e => e.textContent.trim() === 'How sure:');
    const card = b && b.closest('[data-testid="stVerticalBlock"]');
    if (!card || card.closest('[data-stale="true"]')) return null;
    const line = card.innerText.split('\\n').find(l => l.startsWith('What:'));
    return line === undefined ? null : line;
}"""

#: the new result on the Slices page: its caption names the confidence, the card's interval changed
NEW_CARD = """([confidence, before]) => {
    const caption = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
        .find(e => e.innerText.startsWith('Results of'));
    if (!caption || !caption.innerText.includes(confidence + ' confidence')) return false;
    const what = (%s)();
    return what !== null && what !== before;
}""" % CARD_WHAT


class Failed(Exception):
    """A step did not happen in time: the message says which."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def start_server(app_dir: Path, port: int, log: Path, wait: float = 120.0) -> subprocess.Popen:
    """`streamlit run app.py` in its own process group, output to ``log``; returns once its health
    endpoint answers ``ok`` (else stops it and fails naming the log)."""
    env = dict(os.environ)
    if app_dir != ROOT:
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # leave another checkout as it is
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.address",
         "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none", "--theme.base", "light"],
        cwd=app_dir, stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True, env=env)
    deadline = time.time() + wait
    while time.time() < deadline:
        if proc.poll() is not None:
            raise Failed(f"the server exited with code {proc.returncode} before answering; see {log}")
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1).read() == b"ok":
                return proc
        except OSError:
            time.sleep(0.2)
    stop_server(proc)
    raise Failed(f"the server's health endpoint did not answer ok within {wait:.0f} s; see {log}")


def stop_server(proc: subprocess.Popen) -> str:
    """Stop the server's process group (its scan workers with it)."""
    if proc.poll() is not None:
        return f"had exited (code {proc.returncode})"
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        return "stopped"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        return "ignored SIGTERM for 30 s: killed"
    except ProcessLookupError:
        return "gone"


def step(page, what: str, action, log: Path) -> None:
    """Run a Playwright wait; on a timeout fail saying what was not seen (screenshot and log named)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        action()
    except PlaywrightTimeout as exc:
        shot = f"{SHOTS}failure.png"
        try:
            page.screenshot(path=shot)
        except Exception:  # noqa: BLE001  (the page may be gone)
            shot = "(no screenshot)"
        first = str(exc).splitlines()[0]
        raise Failed(f"timed out waiting for {what} ({first}); screenshot {shot}, server log {log}") from None


def no_traceback(page, where: str) -> None:
    if page.locator('[data-testid="stException"]').count():
        page.screenshot(path=f"{SHOTS}failure.png")
        raise Failed(f"a traceback is on screen {where}; screenshot {SHOTS}failure.png")


def card_locator(page):
    """The first finding card: the innermost block holding the "How sure:" label and the card's button
    (its ancestors hold layout wrappers; the card holds none)."""
    return (page.locator('[data-testid="stVerticalBlock"]')
            .filter(has=page.locator("b", has_text="How sure:"))
            .filter(has=page.get_by_role("button", name="Open this slice"))
            .filter(has_not=page.locator('[data-testid="stLayoutWrapper"]'))
            .first)


def settle(page, log: Path, timeout: float = 60_000) -> None:
    step(page, "the page to finish its script run", lambda: page.wait_for_function(IDLE, timeout=timeout), log)


def open_session(browser, url: str, log: Path, timeout: float, shot: str | None):
    """A new context opens the app; seconds to the load event, to the card's words ("How sure:"), to
    the whole card (its button drawn too: an element's code loads after its words); the page; the
    card's top edge (px)."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    t0 = time.monotonic()
    page.goto(url, timeout=timeout)
    loaded = time.monotonic() - t0
    words = page.locator("b", has_text="How sure:").first
    step(page, "the first finding card's words", lambda: words.wait_for(state="visible", timeout=timeout), log)
    text = time.monotonic() - t0
    card = card_locator(page)
    step(page, "the first finding card of the built-in dataset",
         lambda: card.wait_for(state="visible", timeout=timeout), log)
    seconds = time.monotonic() - t0
    box = card.bounding_box()
    if box is None or box["y"] >= VIEWPORT["height"]:
        raise Failed(f"the first finding card is not on the first screen (its top at {box and box['y']:.0f} px)")
    no_traceback(page, "after the first card")
    if shot:
        page.screenshot(path=shot)
    return loaded, text, seconds, page, box["y"]


def option_label(c: float) -> str:
    """The Confidence selectbox's text for ``c`` (pages/outcome.py's format)."""
    return f"{c:.1%}".replace(".0%", "%")


def caption_label(c: float) -> str:
    """The confidence as the Slices page's caption writes it (ui/render._level: 95%, 99.9%)."""
    return f"{c:.1%}".replace(".0%", "%")


def goto_page(page, title: str, log: Path) -> None:
    page.get_by_role("link", name=title).first.click()
    settle(page, log)


def change_confidence(page, value: float, before: str, log: Path, shot_prefix: str | None) -> dict:
    """On the Outcome page: choose ``value``, run, open the Slices page; the times, the page's message
    and the first card's "What:" line (``before``: the line shown before the change)."""
    goto_page(page, "2 · Outcome and thresholds", log)
    box = page.get_by_role("combobox", name="Confidence")
    step(page, "the Confidence selectbox", lambda: box.wait_for(timeout=30_000), log)
    before_value = box.input_value()
    box.scroll_into_view_if_needed()
    box.click()
    option = page.get_by_role("option", name=option_label(value), exact=True)
    step(page, f"the option {option_label(value)}", lambda: option.wait_for(timeout=30_000), log)
    t0 = time.monotonic()
    option.click()
    # a statistics change re-assesses the kept mined table at once (ui.run.reassess_if_kept); Run is
    # clicked only where the page asks for it (the mined table was not kept)
    message = page.get_by_text(re.compile(r"slices (re-assessed in|mined in|taken from the cache)"))
    stale = page.get_by_text("The settings changed since the last run")
    step(page, "the Outcome page's message, or its notice that the settings changed",
         lambda: message.or_(stale).first.wait_for(timeout=120_000), log)
    t_stale = t_click = time.monotonic()
    clicked = False
    if not message.count():
        settle(page, log)
        t_click = time.monotonic()
        page.get_by_role("button", name="Run the scan").click()
        clicked = True
        step(page, "the Outcome page's message on the finished run", lambda: message.first.wait_for(timeout=120_000),
             log)
    t_msg = time.monotonic()
    text = message.first.inner_text().strip()
    no_traceback(page, "after the run")
    settle(page, log)
    if shot_prefix:
        page.get_by_role("button", name="Run the scan").scroll_into_view_if_needed()
        page.screenshot(path=f"{shot_prefix}_outcome.png")
    t_link = time.monotonic()
    link = page.get_by_role("link", name="See the slices")
    step(page, "the link to the Slices page", lambda: link.wait_for(timeout=30_000), log)
    link.click()
    step(page, f"the Slices page with {caption_label(value)} confidence and a new first card",
         lambda: page.wait_for_function(NEW_CARD, arg=[caption_label(value), before], timeout=60_000), log)
    t_card = time.monotonic()
    after = page.evaluate(CARD_WHAT)
    no_traceback(page, "after the new card")
    if shot_prefix:
        settle(page, log)
        card_locator(page).scroll_into_view_if_needed()
        page.screenshot(path=f"{shot_prefix}_slices.png")
    how = ("re-assessed" if "re-assessed" in text else "taken from the cache" if "from the cache" in text
           else "mined (full scan)")
    return dict(how=how, text=text, frm=before_value, to=option_label(value), before=before, after=after,
               stale=t_stale - t0, run=t_msg - t_click, slices=t_card - t_link, total=t_card - t0,
               clicked=clicked, automation=(t_click - t_stale) + (t_link - t_msg))


def row(name: str, times: list[float]) -> tuple[str, str, str, str]:
    if not times:
        return name, "-", "-", "0"
    return name, f"{statistics.median(times):.2f}", f"{max(times):.2f}", str(len(times))


def measure(app_dir: Path, port: int, runs: int, log: Path) -> tuple[list[tuple], list[str]]:
    from playwright.sync_api import sync_playwright

    url = f"http://127.0.0.1:{port}"
    rows: list[tuple] = []
    notes: list[str] = []
    t_server = time.monotonic()
    proc = start_server(app_dir, port, log)
    notes.append(f"server healthy after {time.monotonic() - t_server:.1f} s (pid {proc.pid}, log {log})")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                # 1. the first card in new sessions (the first on a fresh server: cold)
                loads, texts, cards, page, tops = [], [], [], None, []
                for k in range(runs):
                    if page is not None:
                        page.context.close()
                    shot = f"{SHOTS}cold.png" if k == 0 else (f"{SHOTS}warm.png" if k == runs - 1 else None)
                    loaded, text, seconds, page, top = open_session(browser, url, log, 180_000 if k == 0 else 90_000,
                                                                    shot)
                    loads.append(loaded)
                    texts.append(text)
                    cards.append(seconds)
                    tops.append(top)
                for name, part in (("cold", slice(0, 1)), ("warm", slice(1, None))):
                    rows.append(row(f"new session, {name}: goto -> load event", loads[part]))
                    rows.append(row(f"new session, {name}: goto -> card's words shown", texts[part]))
                    rows.append(row(f"new session, {name}: goto -> first finding card", cards[part]))
                notes.append(f"first card's top edge at {min(tops):.0f}-{max(tops):.0f} px of {VIEWPORT['height']} "
                             "(on the first screen)")

                # 2. the confidence changed in the last session (its card shown)
                settle(page, log)
                what = page.evaluate(CARD_WHAT)
                if what is None:
                    raise Failed("the first card has no 'What:' line to compare after a change")
                changes = []
                for k in range(runs):
                    value = CYCLE[k % len(CYCLE)]
                    prefix = f"{SHOTS}confidence_{k + 1}" if k < 2 else None
                    changes.append(change_confidence(page, value, what, log, prefix))
                    what = changes[-1]["after"]
                page.context.close()
            finally:
                browser.close()
    finally:
        notes.append(f"server {stop_server(proc)}")

    rows.append(row("confidence: option chosen -> the page's message (no Run)",
                    [c["stale"] for c in changes if not c["clicked"]]))
    for how in ("re-assessed", "taken from the cache", "mined (full scan)"):
        mine = [c for c in changes if c["how"] == how]
        if not mine:
            continue
        if any(c["clicked"] for c in mine):
            rows.append(row(f"confidence [{how}]: Run the scan -> message", [c["run"] for c in mine if c["clicked"]]))
        rows.append(row(f"confidence [{how}]: See the slices -> new card", [c["slices"] for c in mine]))
        rows.append(row(f"confidence [{how}]: option chosen -> new card (total)", [c["total"] for c in mine]))
    for k, c in enumerate(changes, 1):
        notes.append(f"change {k}: {c['frm']} -> {c['to']}: page said \"{c['text']}\"; total {c['total']:.2f} s "
                     f"(of which {c['automation']:.2f} s the script's waits between clicks)")
        notes.append(f"          card before: {c['before']}")
        notes.append(f"          card after:  {c['after']}")
    if any(c["how"].startswith("mined") for c in changes):
        notes.append("NOTE: a confidence change ran a full scan (mined), not a re-assessment")
    return rows, notes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="new sessions, and confidence changes (default 5)")
    ap.add_argument("--port", type=int, default=None, help="the server's port (default: a free one)")
    ap.add_argument("--app-dir", type=Path, default=ROOT, help="the checkout whose app.py to run (default: this one)")
    args = ap.parse_args()
    if args.runs < 1:
        raise SystemExit("--runs must be at least 1")
    app_dir = args.app_dir.resolve()
    if not (app_dir / "app.py").exists():
        raise SystemExit(f"no app.py in {app_dir}")
    if not os.path.exists(CHROMIUM):
        raise SystemExit(f"{CHROMIUM} is missing (Debian's chromium; never a Playwright browser download)")
    port = args.port or free_port()
    if port_in_use(port):
        raise SystemExit(f"port {port} is already in use: choose another with --port")
    log = Path(f"/tmp/bench_first_card_{port}.log")
    load0 = os.getloadavg()
    t0 = time.monotonic()
    try:
        rows, notes = measure(app_dir, port, args.runs, log)
    except Failed as exc:
        raise SystemExit(f"bench_first_card: {exc}") from None
    load1 = os.getloadavg()
    print(f"app: {app_dir}   port {port}   {os.cpu_count()} cores   Chromium {VIEWPORT['width']}x{VIEWPORT['height']}")
    print("load average at start: {:.2f} {:.2f} {:.2f}".format(*load0))
    print("load average at end:   {:.2f} {:.2f} {:.2f}".format(*load1))
    header = ("measurement (seconds)", "median", "worst", "runs")
    width = max(len(r[0]) for r in [header, *rows])
    print(f"{header[0]:<{width}}  {header[1]:>7}  {header[2]:>7}  {header[3]:>4}")
    for name, med, worst, n in rows:
        print(f"{name:<{width}}  {med:>7}  {worst:>7}  {n:>4}")
    for note in notes:
        print(note)
    print(f"screenshots: {SHOTS}*.png   whole run {time.monotonic() - t0:.0f} s")


if __name__ == "__main__":
    main()
