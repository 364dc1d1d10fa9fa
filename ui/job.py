"""This session's scan in its worker process (started by ``ui.run``): its progress on the page with
a Cancel button, cancelling it, and collecting its result into the results the server keeps and
into the session.
"""
from __future__ import annotations

import hashlib
import time

import streamlit as st

from divergence import SliceTable
from divergence.present.formats import format_count, md_text
from ui import cache, pool, state, worker
from ui.state import K


def scan_job() -> worker.Job | None:
    """The scan this session is running, if any."""
    return st.session_state.get(K.JOB)


def scan_running() -> bool:
    """Whether this session's scan is still running."""
    job = scan_job()
    return job is not None and job.running


def cancel_scan(quiet: bool = False) -> None:
    """Stop this session's running scan (its worker is terminated); the previous result and every
    setting stay. A scan that has just finished is collected instead."""
    ss = st.session_state
    job = scan_job()
    if job is None:
        return
    if not job.running:
        collect_scan()
        return
    job.cancel()
    ss[K.JOB] = None
    if not quiet:
        kept = "the previous result and every setting are kept" if state.result() is not None else "every setting is kept"
        ss[K.RUN_NOTICE] = f"Scan cancelled after {job.elapsed:.0f} s; {kept}."


def collect_scan() -> None:
    """Take a finished scan into the session: its result (cached), or its error beside Run."""
    ss = st.session_state
    job = scan_job()
    if job is None or job.running:
        return
    ss[K.JOB] = None
    if job.state == "done":
        assert job.result is not None  # a job done has its result
        mined, table = job.result
        spec = job.meta
        if mined is not None:  # the two share most of their arrays: half the size each
            cache.mined_results().put(spec["mined_key"], mined, job.result_bytes // 2)
        cache.assessed_results().put(spec["key"], table, job.result_bytes // (2 if mined is not None else 1))
        store_result(table, spec, seconds=job.elapsed, reassessed=bool(spec.get("reassessed")))
    elif job.state == "error":
        ss[K.RUN_ERROR] = job.error


def store_result(table: SliceTable, spec: dict, seconds: float, cached: bool = False,
                 reassessed: bool = False) -> None:
    """Make ``table`` the session's result, labelled with the settings and data of ``spec``;
    ``reassessed``: only the statistics were computed, on the mined table the server kept."""
    ss = st.session_state
    key = spec["plan_key"]
    ss[K.RUN_ERROR] = None
    # held by the server's results, not by the session (their memory budget bounds every session's)
    ss[K.RESULT] = state.HeldResult(table, spec["key"], plan=key, data_key=spec["data_key"], seconds=seconds,
                                    cached=cached, reassessed=reassessed,
                                    id=hashlib.blake2b((spec["data_key"] + key + spec["replicate_key"]).encode(),
                                                       digest_size=8).hexdigest(),
                                    **spec["labels"])
    if state.get(K.VIEW_METRIC) not in table.metric_names:
        # other metrics: the view starts again from their default sort, every verdict
        ss.update({K.VIEW_METRIC: table.metric_names[0], K.SORT_BY: None, K.F_VERDICTS: []})


# ----------------------------------------------------------------------------- its progress on the page


def progress_text(job: worker.Job) -> tuple[float | None, str]:
    """A running scan's progress in words (what the engine reported), with the share done when known."""
    p = job.progress or {}
    stage = str(p.get("stage") or "working")
    slices, length, fraction = p.get("slices"), p.get("length"), p.get("fraction")
    if stage == pool.WAITING:
        ahead = int(p.get("ahead") or 0)
        text = (f"Waiting for a free worker, {ahead} ahead" if ahead else "Waiting for a free worker, next in line") + \
            f" (the server runs {worker.POOL.limits.workers} at once)…"
    elif stage == "starting the worker":
        text = f"Starting: mining {job.label}…"
    elif stage == "statistics":
        text = f"{format_count(slices or 0)} slices mined; computing their statistics"
        if p.get("step"):  # which step, of how many
            k = int(float(fraction or 0.0) * int(p.get("steps") or 1) + 1e-9) + 1
            text += f": {p['step']} (step {k} of {p.get('steps')})"
        text += "…"
    elif stage in ("done", "sending the result"):
        text = f"{format_count(slices or 0)} slices: receiving the result…"
    else:
        parts = [stage[:1].upper() + stage[1:]]
        if slices is not None:
            parts.append(f"{format_count(slices)} slices so far")
        if length is not None:
            parts.append(f"slices of up to {length} item{'s' if length != 1 else ''}")
        text = ": ".join([parts[0], ", ".join(parts[1:])]) if len(parts) > 1 else parts[0] + "…"
    text += f" ({job.elapsed:.0f} s"
    # the time left from the share done where that share grows with the work: mining, and a step of the
    # statistics that says how far it is (the bootstrap); the steps themselves are of unequal cost
    if stage == "mining":
        left = time_left(fraction, time.monotonic() - job.stage_started)
    elif stage == "statistics" and p.get("step_fraction") is not None:
        left = time_left(p["step_fraction"], time.monotonic() - getattr(job, "step_started", job.stage_started))
        left = f"{left} in this step" if left else ""
    else:
        left = ""
    text += f"; {left})" if left else ")"
    if fraction is not None:
        fraction = min(max(float(fraction), 0.0), 1.0)
    return fraction, text


def time_left(fraction: float | None, seconds: float) -> str:
    """'about 40 s left' from the share of a stage done and the seconds it has taken ('' while too
    little is done to tell, or when a few seconds are left)."""
    if fraction is None or not 0.05 <= float(fraction) < 1.0 or seconds < 2.0:
        return ""
    left = seconds * (1.0 - float(fraction)) / float(fraction)
    if left < 5:
        return ""
    return f"about {left:.0f} s left" if left < 90 else f"about {left / 60:.0f} min left"


def _draw_progress(job: worker.Job, where) -> None:
    fraction, text = progress_text(job)
    text = md_text(text)  # the label names the data (a path, a file name)
    if fraction is None:
        where.info(text, icon=":material/hourglass_top:")
    else:
        where.progress(fraction, text=text)


def _cancel_button() -> None:
    st.button("Cancel", key="cancel-scan", icon=":material/stop:", on_click=cancel_scan, width="stretch",
              help="Stops the scan at once; the previous result and every setting are kept.")


@st.fragment(run_every=0.25)
def _scan_status() -> None:
    """A running scan's progress and its Cancel button, redrawn four times a second (a re-assessment
    of a fraction of a second is on screen that soon after it ends); the whole page
    is drawn again when the scan ends."""
    job = scan_job()
    if job is None or not job.running:
        st.rerun(scope="app")
    c1, c2 = st.columns([5, 1], vertical_alignment="center")
    _draw_progress(job, c1)
    with c2:
        _cancel_button()


def keep_status_slot() -> None:
    """Keep a place at the top of the page for the progress of a running scan (each page's first
    lines; the progress is drawn once per run)."""
    st.session_state["_scan_status_drawn"] = False
    st.session_state["_scan_slot"] = st.empty()


def _slot():
    return st.session_state.get("_scan_slot")


def show_scan_status(here: bool = False) -> None:
    """Draw the running scan's progress once per run: ``here`` (the run button's column), else at
    the top of the page."""
    ss = st.session_state
    if ss.get("_scan_status_drawn") or not scan_running():
        return
    ss["_scan_status_drawn"] = True
    if here or _slot() is None:
        _scan_status()
    else:
        with _slot().container():
            _scan_status()


def wait_for_scan() -> None:
    """Follow the running scan here until it ends (the first visit: nothing to show before it)."""
    ss = st.session_state
    job = scan_job()
    if job is None:
        return
    slot = _slot() or st.empty()
    ss["_scan_status_drawn"] = True
    with slot.container():
        c1, c2 = st.columns([5, 1], vertical_alignment="center")
        bar = c1.empty()
        with c2:
            _cancel_button()
    seen = -1
    while job.running:
        seen = job.updates
        _draw_progress(job, bar)  # also where a click (Cancel) interrupts this run
        job.wait(0.25, seen=seen)
    slot.empty()
    collect_scan()
