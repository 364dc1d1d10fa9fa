"""`streamlit run app.py` (guarded, as `make app` starts it: ui.guard) for the browser tests: one way to start it and wait for its health
check, one way to stop it (its whole process group: the scan workers go with it)."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import IO

import pytest
from conftest import ROOT


def start(log_path: Path, *, theme: str = "light", wait: float = 180.0, env: dict | None = None
          ) -> tuple[str, subprocess.Popen, IO]:
    """Start the app on a free port in its own process group; (url, process, open log) once
    its health endpoint answers, else the test fails naming the log. ``env``: variables set for
    the server (e.g. DIVERGENCE_DATA_FOLDER)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(log_path, "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ui.guard", "run", "app.py", "--server.headless", "true", "--server.address",
         "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none", "--theme.base", theme],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env=None if env is None else {**os.environ, **env})
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + wait  # a loaded machine starts slowly
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                return url, proc, log
        except OSError:
            time.sleep(0.2)
    stop(proc, log)
    pytest.fail(f"the app did not start on port {port}; see {log_path}")


def stop(proc: subprocess.Popen, log: IO, timeout: float = 30.0) -> None:
    """Stop the app and everything it started."""
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=timeout)
    log.close()


def random_table_csv(path: Path, rows: int, attributes: int, values: int, seed: int = 0) -> Path:
    """A table of ``attributes`` random columns of ``values`` values and a random 0/1 ``label`` and
    ``pred``: mining it at a low support keeps a worker busy for as long as its size says."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"a{i}": rng.integers(0, values, rows) for i in range(attributes)})
    df["label"], df["pred"] = rng.integers(0, 2, rows), rng.integers(0, 2, rows)
    df.to_csv(path, index=False)
    return path
