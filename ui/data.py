"""The data in use: the built-in dataset, an upload, a local path read by DuckDB, a second file for
replication, a slice plan loaded from a file; switching between them (the running scan of the
old data is stopped, the new table's roles guessed); and the data in plain words.
"""
from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
import uuid

import pandas as pd
import streamlit as st

from divergence import DivergenceInputError
from divergence.data.io import LoadedTable, load_table
from divergence.data.roles import guess_roles
from divergence.engines.duckdb_engine import files_under, preview_source
from divergence.present.formats import md_code, md_text
from divergence.report.plan import parse_plan
from ui import cache, job, pool, settings, state, worker
from ui.state import BUILT_IN, DEMO_SETTINGS, KC, LOCAL_PATH, K

SOURCES = {BUILT_IN: "Built-in dataset (credit applications)", "upload": "Upload a file",
           LOCAL_PATH: "Local path (large data: DuckDB)"}
#: the environment variable naming the only folder local paths may be read under (set by the
#: server's owner: `make app DATA_FOLDER=...`); unset, the dashboard reads no file of the machine
DATA_FOLDER_VARIABLE = "DIVERGENCE_DATA_FOLDER"


def data_folder() -> str | None:
    """The folder local paths are read under (links followed), or None: local paths are off."""
    folder = os.environ.get(DATA_FOLDER_VARIABLE, "").strip()
    if not folder:
        return None
    real = os.path.realpath(folder)
    return real if os.path.isdir(real) else None


def sources() -> dict[str, str]:
    """The data sources offered: the local path only when the server's owner set a data folder."""
    return {k: v for k, v in SOURCES.items() if k != LOCAL_PATH or data_folder() is not None}


def path_files(path: str) -> list[str]:
    """The files a local path names, each inside the data folder (links followed), or one line why not.
    An upload too large for memory, spooled by this server, is read where the server put it."""
    if path in SPOOLED:
        return [path]
    folder = data_folder()
    if folder is None:
        raise DivergenceInputError(f"Local paths are off: the server's owner has not set a data folder "
                                   f"({DATA_FOLDER_VARIABLE}).")
    return files_under(folder, path)[0]
#: the files an uploader takes (CSV with any delimiter, or Parquet)
UPLOAD_TYPES = ["csv", "tsv", "txt", "parquet", "pq", "parq"]
#: rows read for the preview of a local path (column types, role guesses, the checks on this page)
PREVIEW_ROWS = 1000
ANALYTIC_NOTE = ("Intervals are analytic for DuckDB scans: the scan keeps no rows, so there is nothing to "
                 "bootstrap (and median baselines are not computed).")


def read_uploaded(name: str, buffer) -> LoadedTable:
    """Read an uploaded CSV or Parquet file with the engine's one reader (the command line's and
    DuckDB's too): delimiter, encoding, byte-order mark and repeated column names, each said in
    its notes. Not cached: the frame is kept in session state, and a cached copy of a 1 GB file
    would double the memory. ``buffer``: the upload's bytes as they are (no copy)."""
    return load_table(buffer, name=name)


def content_key(name: str, buffer) -> str:
    """A cache key naming the file and its content."""
    return f"{name}:{len(buffer)}:{hashlib.blake2b(buffer, digest_size=12).hexdigest()}"


def path_fingerprint(path: str) -> str:
    """A cache key for a local path: the files it names with their sizes and modification
    times, so a changed, added or removed file gives a new key (and a new scan)."""
    files = path_files(path)
    parts = []
    for f in files:
        st_ = os.stat(f)
        parts.append(f"{f}:{st_.st_size}:{st_.st_mtime_ns}")
    digest = hashlib.blake2b("\n".join(parts).encode(), digest_size=12).hexdigest()
    return f"path:{path}:{len(files)} files:{digest}"


def replicate_key() -> str:
    """The replication file's content key ('' when none was uploaded)."""
    return str(state.get(K.REPLICATE_KEY) or "") if state.get(K.REPLICATION) == "file" else ""


# ----------------------------------------------------------------------------- switching the data


def use_built_in() -> None:
    """Switch to the built-in dataset with its column roles."""
    job.cancel_scan(quiet=True)
    ss = st.session_state
    ss[K.FRAME] = cache.demo_frame()
    ss.update({K.SOURCE: BUILT_IN, K.DATA_NAME: BUILT_IN, K.DATA_KEY: BUILT_IN, K.UPLOAD_ERROR: None,
               K.PATH: None, K.PATH_ROWS: None, K.DATA_NOTES: [], K.RUN_ERROR: None, K.RUN_NOTICE: None})
    state.update(**state.role_defaults())
    state.update(**DEMO_SETTINGS)
    ss.update({K.SELECTED: None, K.TYPED: None})


def use_frame(df: pd.DataFrame, name: str, key: str, *, path: str | None = None, rows: int | None = None,
              notes: list[str] | None = None, guess=None) -> None:
    """Analyse a new table: guess its roles (the user confirms them), default attributes.

    With ``path``, ``df`` is the first rows of that local path and ``rows`` its row count;
    ``notes`` are the reader's (shown on the Data page); ``guess``: the roles guessed already
    (by the worker that read the upload).
    """
    job.cancel_scan(quiet=True)
    ss = st.session_state
    ss[K.FRAME] = df
    ss.update({K.SOURCE: LOCAL_PATH if path is not None else "upload", K.DATA_NAME: name, K.DATA_KEY: key,
               K.UPLOAD_ERROR: None, K.PATH: path, K.PATH_ROWS: rows, K.PATH_ERROR: None,
               K.DATA_NOTES: list(notes or []),
               K.RUN_ERROR: None, K.RUN_NOTICE: None})  # the previous data's run error says nothing about this data
    state.update(**state.role_defaults())
    if guess is None:
        guess = cache.off_server("guess", df, label="guessing the column roles") if cache.wide(df) else guess_roles(df)
    settings.apply_role_guess(guess)
    settings.fit_metrics_to_target()  # a target of more than two classes: error, not FPR and FNR
    ss.update({K.SELECTED: None, K.TYPED: None})
    ss[K.VIEW_METRIC] = None


def load_path(text: str, *, keep_roles: bool = False) -> bool:
    """Preview a local path (first rows and row count, read by DuckDB) and analyse it.

    A bad path raises DivergenceInputError naming the problem; nothing is changed then.
    ``keep_roles`` keeps the settings when the columns are unchanged (the same path re-read);
    the return value says whether they were kept.
    """
    text = text.strip()
    if not text:
        raise DivergenceInputError("Type the path of a CSV or Parquet file, a folder of them, or a glob.")
    key = path_fingerprint(text)
    head, total = preview_source(path_files(text), rows=PREVIEW_ROWS)
    old = state.get(K.FRAME)
    if keep_roles and old is not None and list(old.columns) == list(head.columns):
        st.session_state.update({K.FRAME: head, K.DATA_KEY: key, K.PATH_ROWS: total, K.PATH_ERROR: None})
        return True
    use_frame(head, text, key, path=text, rows=total)
    return False


def on_path() -> None:
    """Callback of the local-path box: preview the path; keep every setting when it fails."""
    text = state.get(K.PATH_TEXT) or ""
    try:
        load_path(text, keep_roles=text.strip() == state.get(K.PATH))
    except DivergenceInputError as exc:
        st.session_state[K.PATH_ERROR] = str(exc)
    except (OSError, ValueError) as exc:  # what the file system says of a path (no traceback on the page)
        reason = getattr(exc, "strerror", None) or str(exc).splitlines()[0][:200]
        st.session_state[K.PATH_ERROR] = f"Cannot read that path: {reason}."


def on_source() -> None:
    """Callback of the source radio: the built-in data at once; a path typed before is re-read."""
    source = state.get(K.SOURCE)
    if source == BUILT_IN:
        use_built_in()
    elif source == LOCAL_PATH and state.get(K.PATH_TEXT) and not state.is_large() and data_folder() is not None:
        on_path()


# ----------------------------------------------------------------------------- uploads, read by a worker

#: uploads spooled for a worker to read, and those too large for memory that DuckDB reads where
#: they lie (paths this server made: trusted as local paths whatever the data folder)
SPOOLED: set[str] = set()
_spool_lock = threading.Lock()
_spool_root: list[str] = []


def _spool_dir() -> str:
    """A private folder of this server for uploads (0700), removed when the server exits."""
    with _spool_lock:
        if not _spool_root:
            folder = tempfile.mkdtemp(prefix="divergence-uploads-")
            atexit.register(shutil.rmtree, folder, True)
            _spool_root.append(folder)
        return _spool_root[0]


def _spool(name: str, data: bytes) -> str:
    """The upload's bytes written to a file a worker can read (in chunks: no copy in memory); a
    compressed upload keeps its compression's suffix, so DuckDB reads it too."""
    from divergence.data.io import MAGIC

    base = "".join(c if c.isalnum() or c in "._-" else "_" for c in os.path.basename(name))[-80:] or "upload"
    kind = next((k for k, m in MAGIC.items() if bytes(data[:8]).startswith(m)), None)
    suffix = {"gzip": ".gz", "zstd": ".zst", "bz2": ".bz2", "xz": ".xz", "zip": ".zip"}.get(kind, "")
    if suffix and base.lower().endswith(suffix):
        suffix = ""
    path = os.path.join(_spool_dir(), f"{uuid.uuid4().hex[:12]}-{base}{suffix}")
    view = memoryview(data)
    with open(path, "wb") as fh:
        for start in range(0, len(view), 16 << 20):
            fh.write(view[start:start + (16 << 20)])
    return path


def _unspool(path: str | None) -> None:
    if path and path not in SPOOLED:
        try:
            os.unlink(path)
        except OSError:
            pass


def upload_memory() -> int:
    """Bytes an upload's frame may take while it is read (twice its size: the reader's peak):
    ``DIVERGENCE_UPLOAD_MEMORY``, else what one worker may hold. A larger upload is read by DuckDB."""
    try:
        value = int(float(os.environ.get("DIVERGENCE_UPLOAD_MEMORY", "")))
    except ValueError:
        value = 0
    return value if value > 0 else worker.POOL.limits.memory


def start_read(widget: str, kind: str) -> None:
    """Callback of an uploader: the file goes to a worker process to be read (the server never
    parses an upload: a hostile file costs a worker, never the server); the page follows it."""
    up = st.session_state.get(widget)
    if up is None:
        return
    previous = st.session_state.get(K.READ_JOB)
    if previous is not None:
        previous["job"].cancel()
        _unspool(previous.get("path"))
    data = up.getvalue()  # the bytes the upload holds, not a copy (getbuffer() copies them)
    key = content_key(up.name, data)
    path = _spool(up.name, data)
    request = worker.TaskRequest("read", (path, up.name, upload_memory()))
    read = worker.start(request, label=f"reading {up.name}", owner_alive=cache.session_alive(), meta={"task": "read"})
    st.session_state[K.READ_JOB] = dict(job=read, kind=kind, name=up.name, key=key, path=path)
    st.session_state[K.UPLOAD_ERROR if kind == "data" else K.REPLICATE_ERROR] = None


def on_upload() -> None:
    """Callback of the file uploader: a worker reads the file; every setting stays when it fails."""
    start_read("w:upload", "data")


def on_replicate_upload() -> None:
    """Callback of the second-file uploader (replication data)."""
    start_read("w:replicate_upload", "replicate")


def cancel_read() -> None:
    """Stop reading an upload; the data and settings in use stay."""
    read = st.session_state.get(K.READ_JOB)
    if read is not None:
        read["job"].cancel()


def follow_read() -> None:
    """Follow the worker reading an upload here until it ends (its progress and a Cancel button),
    then take its table: the Data page, right under the uploader."""
    ss = st.session_state
    read = ss.get(K.READ_JOB)
    if read is None:
        return
    reading = read["job"]
    if reading.running:
        slot = st.empty()
        with slot.container():
            c1, c2 = st.columns([5, 1], vertical_alignment="center")
            bar = c1.empty()
            c2.button("Cancel", key="cancel-read", icon=":material/stop:", on_click=cancel_read, width="stretch",
                      help="Stops reading the file; the data and settings in use are kept.")
        while reading.running:
            seen = reading.updates
            fraction, text = job.progress_text(reading)
            text = text.replace(f"mining {reading.label}", reading.label)
            bar.info(md_text(text if reading.progress.get("stage") == pool.WAITING else
                             f"Reading {read['name']} in a worker process: {reading.progress.get('stage') or 'starting'} "
                             f"({reading.elapsed:.0f} s)…"), icon=":material/hourglass_top:")
            reading.wait(0.25, seen=seen)
        slot.empty()
    ss[K.READ_JOB] = None
    error_key = K.UPLOAD_ERROR if read["kind"] == "data" else K.REPLICATE_ERROR
    if reading.state != "done":
        _unspool(read["path"])
        if reading.state == "error":
            ss[error_key] = reading.error
        return
    result = reading.result
    if "too_large" in result:
        _too_large(read, result, error_key)
    else:
        _unspool(read["path"])
        loaded = result["loaded"]
        if read["kind"] == "data":
            _remember_summary(read["key"], result["summary"])
            use_frame(loaded.frame, read["name"], read["key"], notes=loaded.notes, guess=result["guess"])
        else:
            ss.update({K.REPLICATE_FRAME: loaded.frame, K.REPLICATE_NAME: read["name"], K.REPLICATE_ERROR: None,
                       K.REPLICATE_NOTES: loaded.notes, K.REPLICATE_KEY: read["key"]})
    st.rerun()


def _remember_summary(key: str, summary: pd.DataFrame) -> None:
    cache.SUMMARIES[key] = summary
    while len(cache.SUMMARIES) > 8:
        cache.SUMMARIES.pop(next(iter(cache.SUMMARIES)))


def _too_large(read: dict, result: dict, error_key: str) -> None:
    """An upload too large to hold in memory: DuckDB reads it where the server put it (as a local
    path), or, where DuckDB cannot read it, one line says what to do."""
    from divergence.data.io import size_text as _size

    est = result["too_large"]
    what = (f"{read['name']} would take about {_size(est.memory)} in memory (about {est.rows:,} rows x {est.columns:,} "
            f"columns), more than the {_size(result['max_memory'] / 2)} an upload may take on this server")
    path = read["path"]
    if read["kind"] != "data" or path.lower().endswith((".bz2", ".xz", ".zip")):
        _unspool(path)
        st.session_state[error_key] = (f"{what}: scan it with the command line (python -m divergence scan FILE "
                                       "--engine duckdb), or ask the server's owner for a data folder.")
        return
    SPOOLED.add(path)
    try:
        head, total = preview_source([path], rows=PREVIEW_ROWS)
    except DivergenceInputError as exc:
        SPOOLED.discard(path)
        _unspool(path)
        st.session_state[error_key] = str(exc)
        return
    use_frame(head, read["name"], path_fingerprint(path), path=path, rows=total,
              notes=[f"{what}: DuckDB reads it where the server stored it, like a local path (the preview, roles and "
                     "bins below come from its first rows; intervals are analytic)."])


def on_compare_toggle() -> None:
    """Turning the comparison on for the built-in data brings in its previous models; for another
    table, a column the attribute screen found holding another model's output is the reference."""
    if not state.get(KC.ON):
        return
    if state.get(K.DATA_NAME) != BUILT_IN:
        if not state.get(KC.REFERENCE) and not state.get(KC.REF_SCORE):
            offer = settings.offered_reference(state.get(K.FRAME))
            if offer is not None:
                state.update(**offer)
        return
    ss = st.session_state
    if "previous_default" not in state.get(K.FRAME).columns:
        # the same rows and columns plus three: every result cached on the built-in data stays valid
        ss[K.FRAME] = cache.demo_models_frame()
        cache.column_summary.clear()
    if not state.get(KC.REFERENCE) and not state.get(KC.REF_SCORE):
        task = state.get(K.TASK)
        ss[KC.REFERENCE] = {"classification": "previous_default", "regression": "previous_spend"}.get(task)
        ss[KC.REF_SCORE] = "previous_score"


def load_plan_text(text: bytes | str) -> None:
    """Read a plan file's text and apply it; a bad file leaves every setting as it was."""
    try:
        plan = parse_plan(text)
    except DivergenceInputError as exc:
        st.session_state[K.PLAN_ERROR] = str(exc)
        return
    st.session_state[K.PLAN_ERROR] = None
    settings.apply_plan(plan)
    on_compare_toggle()  # a plan comparing with the built-in data's previous models: they come in


def on_plan_upload() -> None:
    """Callback of the slice-plan uploader (Export page)."""
    up = st.session_state.get("w:plan_upload")
    if up is not None:
        load_plan_text(up.getvalue())


# ----------------------------------------------------------------------------- the data in words


def _data_name(quoted: bool) -> str:
    name = state.get(K.DATA_NAME)
    if name == BUILT_IN:
        return "the built-in dataset (credit applications)"
    return md_code(name) if quoted else str(name)


def data_label() -> str:
    """The data in use in plain words (for reports and notices)."""
    return f"{_data_name(False)}, {state.n_rows():,} rows" + (" (scanned by DuckDB)" if state.is_large() else "")


def data_caption() -> str:
    """The data in use, with its size, for the top of a page."""
    # the data in use, not the source radio (which may point at a source not read yet)
    where = " (a local path, scanned by DuckDB)" if state.is_large() else ""
    return f"Data: {_data_name(True)}{where}, {state.n_rows():,} rows × {state.get(K.FRAME).shape[1]} columns."
