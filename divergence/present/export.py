"""What leaves the dashboard as a file: the slice table as CSV (formulas neutralised), a figure as a
standalone HTML page or a PNG (kaleido driving the machine's Chromium, which reaches nothing outside
this machine), and the caption that says what a figure shows.
"""
from __future__ import annotations

import html as _html
import threading
from datetime import UTC
from typing import TYPE_CHECKING, cast

import pandas as pd
import plotly.graph_objects as go

from ..errors import DivergenceInputError
from ..table import SliceTable
from .formats import metric_label, plotly_text

if TYPE_CHECKING:
    from datetime import datetime

__all__ = ["table_csv", "export_caption", "titled_figure", "figure_html", "figure_png", "png_supported",
           "warm_png_exporter", "PNG_EXPORTER", "NO_PROXY", "CHROMIUM", "PNG_TIMEOUT", "EXPORTER_OPTIONS"]


def table_csv(frame: pd.DataFrame, *, neutralise_formulas: bool = True) -> bytes:
    """A slice table as CSV bytes (full precision, undefined values as empty cells; text a
    spreadsheet would run as a formula gets a leading apostrophe unless told otherwise)."""
    import io

    from ..table import write_csv

    buffer = io.BytesIO()
    write_csv(frame.reset_index(drop=True), buffer, neutralise_formulas=neutralise_formulas)
    return buffer.getvalue()


def export_caption(table: SliceTable, metric: str | None = None, *, data_label: str = "",
                   when: datetime | None = None) -> str:
    """What an exported figure came from, in one line: the data, the metric, the settings (support,
    longest slice, kind of search, confidence and correction, replication) and the time it was
    exported (UTC), e.g. ``raw.csv · FPR (fpr) · support ≥ 0.02, up to 3 items, exploratory,
    95% confidence, Benjamini–Hochberg · exported 2026-12-01 18:10 UTC``."""
    from datetime import datetime

    from ..vocabulary import CORRECTION_NAMES

    a = table.assessment
    m = table.metric(metric)
    label = metric_label(m.name) if m.name else ""
    parts = [data_label or "data", (label if label == m.name else f"{label} ({m.name})") if m.name else ""]
    settings = [f"support ≥ {table.min_support:g}"]
    if table.max_length:
        settings.append(f"up to {table.max_length} items")
    if a is not None:
        settings.append("exploratory" if a.exploratory else "pre-registered plan")
        settings.append(f"{a.confidence:.0%} confidence, {CORRECTION_NAMES.get(a.correction, a.correction)}")
        settings.append(f"replicated on {a.replication}" if a.replication else "no replication")
    parts.append(", ".join(settings))
    stamp = (when or datetime.now(UTC)).astimezone(UTC)
    parts.append(f"exported {stamp:%Y-%m-%d %H:%M} UTC")
    return " · ".join(p for p in parts if p)


def titled_figure(fig: go.Figure, heading: str, caption: str) -> go.Figure:
    """A copy of ``fig`` for export, titled with ``heading`` (or the figure's own title) and the
    ``caption`` line of :func:`export_caption` under it: a PNG or HTML file says what it shows."""
    out = go.Figure(fig)
    own = out.layout.title.text if out.layout.title and out.layout.title.text else ""
    text = own if own else plotly_text(heading)
    out.update_layout(title=dict(text=f"{text}<br><sup>{plotly_text(caption)}</sup>", x=0.01, xanchor="left"))
    top = out.layout.margin.t if out.layout.margin and out.layout.margin.t is not None else 0
    out.update_layout(margin=dict(t=max(int(top), 110 if "<br>" in own else 90)))
    return out


def figure_html(fig: go.Figure, *, title: str = "divergence") -> str:
    """A figure as a self-contained HTML page (plotly.js inlined: opens offline); its text made inert
    (:func:`divergence.present.figures.inert_figure`)."""
    from .figures import inert_figure

    fig = inert_figure(fig)
    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    natural = int(meta.get("natural_width", 0))  # a table: at least as wide as its cells (the page scrolls)
    if meta.get("natural_height"):  # and as tall as its rows, wrapped: none hidden behind a scroll bar
        margin = fig.layout.margin
        tall = int(meta["natural_height"]) + int(margin.t or 0) + int(margin.b or 0) + 8
        if tall > int(fig.layout.height or 0):
            fig = go.Figure(fig).update_layout(height=tall)
    return fig.to_html(include_plotlyjs=True, full_html=True, default_width=f"{natural}px" if natural else "100%",
                       config={"displaylogo": False}).replace("<head>", f"<head><title>{_html.escape(title)}</title>", 1)


#: where Debian's chromium lives; kaleido draws static images with it
CHROMIUM = "/usr/bin/chromium"


def png_supported() -> bool:
    """Whether static images can be drawn here: kaleido installed and a Chromium to drive."""
    import importlib.util
    import os
    import shutil

    if importlib.util.find_spec("kaleido") is None:
        return False
    return bool(os.environ.get("BROWSER_PATH") or os.path.exists(CHROMIUM)
                or shutil.which("chromium") or shutil.which("google-chrome"))


#: kaleido's persistent Chromium serves one image at a time: calls from several sessions queue here
_PNG_LOCK = threading.Lock()
#: guards the exporter's state (never held while an image is drawn)
_STATE_LOCK = threading.Lock()
#: the exporter's state in this process: 'cold', 'warming', 'ready', 'failed' (then also 'error')
PNG_EXPORTER: dict = {"state": "cold"}


#: the exporter's Chromium reaches nothing outside this machine: every request it would make on its own
#: (sign-in, updates, a start page) goes to a proxy address where nothing listens (the discard port), so
#: no outside name is even looked up; and no MathJax is fetched from a CDN (plotly.js is read from the
#: plotly package on disk)
NO_PROXY = "127.0.0.1:9"
EXPORTER_OPTIONS = {"mathjax": False}


def _use_machine_chromium() -> None:
    import os

    if not os.environ.get("BROWSER_PATH") and os.path.exists(CHROMIUM):
        os.environ["BROWSER_PATH"] = CHROMIUM
    os.environ["CHOREO_PROXY_SERVER"] = NO_PROXY  # read by kaleido's browser driver (choreographer)


def _start_exporter() -> None:
    """kaleido's persistent Chromium with :data:`EXPORTER_OPTIONS` (a no-op when it runs already)."""
    import kaleido

    _use_machine_chromium()
    kaleido.start_sync_server(silence_warnings=True, **EXPORTER_OPTIONS)


def warm_png_exporter() -> str:
    """Start kaleido's Chromium in a background thread, once per process, and draw a first tiny
    image with it: the first PNG a person asks for then takes about a second instead of the
    10-15 s of a cold start. Returns the exporter's state ('unsupported' without kaleido or
    Chromium)."""
    if not png_supported():
        return "unsupported"
    with _STATE_LOCK:
        if PNG_EXPORTER["state"] != "cold":
            return PNG_EXPORTER["state"]
        PNG_EXPORTER["state"] = "warming"

    def work() -> None:
        import warnings

        try:
            with _PNG_LOCK, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _start_exporter()
                go.Figure().to_image(format="png", width=16, height=16)
            PNG_EXPORTER["state"] = "ready"
        except Exception as exc:  # noqa: BLE001 - reported beside the PNG buttons
            PNG_EXPORTER.update(state="failed", error=str(exc))

    threading.Thread(target=work, name="png-exporter-warm-up", daemon=True).start()
    return "warming"


def figure_png(fig: go.Figure, *, width: int = 1280, height: int | None = None, scale: float = 2.0) -> bytes:
    """A figure as PNG bytes through kaleido and the machine's Chromium (never a download);
    the persistent exporter when :func:`warm_png_exporter` started it; its text made inert
    (:func:`divergence.present.figures.inert_figure`)."""
    import warnings

    from .figures import inert_figure

    fig = inert_figure(fig)

    if not png_supported():
        raise DivergenceInputError("PNG export needs the kaleido package and Chromium (/usr/bin/chromium).")
    h = height or int(fig.layout.height or 600)
    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    width = max(int(width), int(meta.get("natural_width", 0)))  # a table is never drawn narrower than its cells
    if meta.get("natural_height"):  # nor shorter: every row, wrapped, under its title's margin
        margin = fig.layout.margin
        h = max(h, int(meta["natural_height"]) + int(margin.t or 0) + int(margin.b or 0) + 8)
    with _PNG_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kaleido's server ignores per-call browser options, and says so
        _start_exporter()  # never plotly's own start, which would fetch MathJax from a CDN
        for attempt in range(2):
            done, png = _within(PNG_TIMEOUT, lambda: fig.to_image(format="png", width=width, height=h, scale=scale))
            if done:
                return cast(bytes, png)  # what fig.to_image returned
            # kaleido's persistent Chromium can get stuck on a call (plotly/Kaleido#441): start it again
            PNG_EXPORTER.update(state="cold")
            _within(PNG_TIMEOUT, _restart_exporter)
    raise DivergenceInputError(f"PNG export did not answer within {PNG_TIMEOUT:g} s, twice; try again, or "
                               "download the figure as HTML.")


#: seconds one image may take before the exporter is started again (a cold start takes 10-15 s)
PNG_TIMEOUT = 45.0


def _within(seconds: float, work) -> tuple[bool, object]:
    """(True, what ``work()`` returned) if it ends within ``seconds``, else (False, None); the
    work's error is raised. A call that never ends is left behind in a daemon thread."""
    box: dict = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread
            box["error"] = exc

    t = threading.Thread(target=run, name="png-export", daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        return False, None
    if "error" in box:
        raise box["error"]
    return True, box.get("value")


def _restart_exporter() -> None:
    import kaleido

    try:
        kaleido.stop_sync_server(silence_warnings=True)
    finally:
        _start_exporter()
