"""Running a scan with the current settings: the worker request and its cache keys, a result the
server keeps taken at once, a scan started in a worker process (``ui.worker``; followed and
collected by ``ui.job``), and the result to show (the first visit waits for its scan).
"""
from __future__ import annotations

import datetime
import json
from collections.abc import Callable

import streamlit as st

from divergence import DivergenceInputError
from divergence.present.formats import format_count
from ui import cache, data, job, settings, state, worker
from ui.state import K


def _session_alive() -> Callable[[], bool] | None:
    """Whether the browser session starting a scan is still connected (a closed tab's scan is
    stopped after a grace period); None outside a server (AppTest)."""
    return cache.session_alive()


def _result_labels() -> dict:
    """What a result must carry to be labelled with the data and settings it came from, read
    when it is computed: the data in words (for captions and reports) and the time."""
    now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    return dict(data_label=data.data_label(), data_caption=data.data_caption(), data_name=state.get(K.DATA_NAME),
                created=now.isoformat().replace("+00:00", "Z"))


def _scan_spec() -> dict:
    """The current settings as a worker request with its cache keys (raises DivergenceInputError)."""
    missing = settings.missing_roles()
    if missing:
        raise DivergenceInputError(f"Choose {settings.and_list(missing)} on the Data page first.")
    path = state.get(K.PATH)
    if path is not None and data.path_fingerprint(path) != state.get(K.DATA_KEY):
        # the files changed since they were read: read them again, keeping the roles
        if not data.load_path(path, keep_roles=True):
            raise DivergenceInputError(f"The columns of {path} changed since it was read: check the column "
                                       "roles on the Data page, then run again.")
    run = settings.run_settings()  # the session's Settings as the form reads it: sent as it is
    plan = settings.current_plan(run)
    df = state.get(K.FRAME)
    rep = run.replication
    if path is not None and rep.kind in ("split", "holdout"):
        raise DivergenceInputError(
            f"Replication on {'a split column' if rep.kind == 'split' else 'a held-out share'} needs the rows in "
            "memory, and a local path is scanned by DuckDB without loading them: confirm on a second file "
            "(Data page), or choose none.")
    if rep.kind == "file" and rep.rows is None:
        raise DivergenceInputError("Replication: upload the second file on the Data page, or choose none.")
    if rep.kind == "split":  # checked and named here; the worker's scan splits the rows by the settings
        settings.split_frames()
    # the keys, derived from the Settings: its scan, its replication (the rows mined and confirmed on:
    # the mined table keeps them) with the second file's content, its statistics
    scan_json = json.dumps(run.scan_section(), sort_keys=True, default=str)
    rep_json = json.dumps(dict(rep.to_dict(), file=data.replicate_key()), sort_keys=True, default=str)
    stats = dict(run.sections()["statistics"], exploratory=plan.kind == "exploratory")
    stats_json = json.dumps(stats, sort_keys=True, default=str)
    data_key = state.get(K.DATA_KEY)
    engine = "duckdb" if path else "pandas"
    request = worker.ScanRequest(settings=run, statistics=dict(exploratory=stats["exploratory"]),
                                 frame=None if path else df, path=path,
                                 files=data.path_files(path) if path else None)  # checked again: in the data folder
    what = ("every slice" if path is None else
            f"{format_count(state.n_rows())} rows of {path} with DuckDB (binning, measuring, grouping identical "
            "rows), then every slice")
    return dict(request=request, mined_key=(data_key, engine, scan_json, rep_json), plan_key=settings.plan_key(plan),
                data_key=data_key, replicate_key=data.replicate_key(), labels=_result_labels(),
                key=(data_key, engine, scan_json, rep_json, stats_json),
                what=f"{what} with support ≥ {_support_words(run.mining.min_support)}")


def _support_words(min_support: float | int) -> str:
    return f"{min_support:,} rows" if min_support > 1 else f"{min_support:g}"


def start_scan(auto: bool = False) -> None:
    """Mine and assess with the current settings in a worker process (returns at once; the pages
    follow its progress). A result computed before with the same settings is taken at once.

    A bad setting is kept in ``K.RUN_ERROR`` and shown beside the run button; the previous
    result and every setting stay.
    """
    ss = st.session_state
    job.cancel_scan(quiet=True)
    ss[K.RUN_ERROR] = ss[K.RUN_NOTICE] = None
    try:
        spec = _scan_spec()
    except DivergenceInputError as exc:
        ss[K.RUN_ERROR] = str(exc)
        return
    cached = cache.assessed_results().get(spec["key"])
    if cached is not None:
        job.store_result(cached, spec, seconds=0.0, cached=True)
        return
    request = spec.pop("request")
    mined = cache.mined_results().get(spec["mined_key"])
    spec["reassessed"] = mined is not None
    if mined is not None:  # only the statistics changed: assess the cached mining result
        request.mined, request.frame, request.path, request.files = mined, None, None, None
    ss[K.JOB] = worker.start(request, label=spec["what"], auto=auto, owner_alive=_session_alive(), meta=spec)


def reassess_if_kept() -> None:
    """A statistics setting changed (confidence, correction, δ): where the current result's mined
    table is kept (or the new result is cached), start at once what Run would start, a
    re-assessment of a fraction of a second, instead of asking for Run; anything that would mine
    again still waits for Run."""
    running = job.scan_job()
    if state.result() is None or (running is not None and running.running and not running.meta.get("reassessed")):
        return  # a scan that mines is not interrupted by a statistics change: Run after it
    try:
        spec = _scan_spec()
    except DivergenceInputError:
        return  # Run says what is wrong
    kept = cache.mined_results().get(spec["mined_key"]) is not None
    if kept or cache.assessed_results().get(spec["key"]) is not None:
        start_scan()


def run_analysis() -> None:
    """Mine and assess with the current settings and wait here for the result, its progress and
    Cancel at the top of the page (a one-click view that needs the result at once)."""
    start_scan()
    job.wait_for_scan()


def ensure_result() -> dict | None:
    """The result to show: the first visit runs the defaults (a finding with no setting touched)
    and waits for them; a scan started by a click is followed without blocking the page."""
    if (state.result() is None and job.scan_job() is None and state.get(K.RUN_ERROR) is None
            and state.get(K.RUN_NOTICE) is None):
        start_scan(auto=True)
    running = job.scan_job()
    if running is not None and running.auto and state.result() is None:
        job.wait_for_scan()
    else:
        job.show_scan_status()
    return state.result()
