"""The shorter lengths of a large request, mined on another core while the whole request runs.

Past its budget, a request is complete up to the longest length that fits (:mod:`divergence.mining.mining`):
the whole request has half the work, then lengths 1, 2, 3, ... are mined afresh, each counted
against what remains, until one does not fit. Those passes depend only on the data, not on the
whole request, so once the whole request has done a fiftieth of the work budget (a large
request: about half a second of mining on the machines the budget was set on), they are started beside it in a second process. When the whole request fits, that
process is stopped and nothing changes; when it does not, the decision is the one the passes
run one after the other would take, from the same counts: pass k fits when the whole request's
work, the shorter passes' and pass k's work at its last check stay within the budget (a pass
with no check, one quota or less, always fits), and the first that does not ends the search.
The table is the same; the time is the longer of the two, not their sum.

The second process is a plain ``python -m divergence.mining.shorter FOLDER`` (a daemon worker of
the dashboard may start it): its inputs and its table travel as ``.npy`` files in FOLDER, its
record of each pass as one JSON line on its standard output, the length to return on its
standard input; it ends itself when its parent is gone.
"""
from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..budget import Budget, Overflow
from ..kernels.processes import free_cores, workers
from ..kernels.warm import child_env
from .mining_driver import Root, run

__all__ = ["ShorterLengths", "SPECULATE_AFTER", "can_speculate", "main"]

#: the share of the work budget the whole request spends before the shorter lengths start beside it
SPECULATE_AFTER = 0.02
#: inputs larger than this are not copied for a second process (the passes then run in turn)
MAX_BYTES = 1 << 30
#: the arrays a pass reads, saved for the second process
_INPUTS = ("codes", "weights", "fps", "n_values", "item_hash", "total", "expand", "root_attr", "root_val",
           "root_tallies", "root_fp", "root_ih")
_PARTS = ("parent", "attr", "val", "tallies", "fp", "dead")


def can_speculate(max_work: int | None, max_length: int) -> bool:
    """Whether a second process may mine the shorter lengths: the call may use two processes
    (:func:`divergence.kernels.processes.workers`: never unless asked), a work budget to decide by, more than
    one length, two cores free to this process, the ahead-of-time kernels (a second process must not
    compile them again) and ``DIVERGENCE_SPECULATE`` not ``0``."""
    if max_work is None or max_length < 2 or os.environ.get("DIVERGENCE_SPECULATE", "1") == "0":
        return False
    if workers() < 2:
        return False
    if sys.platform == "win32":  # the records are read with select(), which takes no pipe there
        return False
    if free_cores() < 2:
        return False
    from ..kernels.compiled import load_build, mode

    return mode() != "jit" and load_build()[0] is not None


class ShorterLengths:
    """The passes of lengths 1, 2, ... in a second process (see the module's docstring): started
    with :meth:`start`, consulted with :meth:`decide` when the whole request did not fit, always
    ended with :meth:`close`."""

    def __init__(self, arrays: dict[str, np.ndarray], *, min_count: float, exhaustive: bool, cap: int,
                 max_length: int, budget: Budget) -> None:
        self.arrays, self.min_count, self.exhaustive, self.cap = arrays, min_count, exhaustive, cap
        self.max_length, self.budget = max_length, budget
        self.proc: subprocess.Popen | None = None
        self.folder: str | None = None
        self._launch: threading.Thread | None = None
        self._closed = False
        self.records: dict[int, dict] = {}
        self._buffer = b""

    @property
    def started(self) -> bool:
        return self._launch is not None

    def start(self) -> None:
        """Start the passes beside the whole request, given what it has spent so far (its whole
        work is at least that: no pass past the rest of the budget is tried). The inputs are
        written and the process started by a thread: the whole request goes on meanwhile."""
        if sum(a.nbytes for a in self.arrays.values()) > MAX_BYTES:
            return  # not copied to disk for a second process: the passes run here, in turn
        allowance = int(self.budget.max_work) - int(self.budget.work)  # type: ignore[arg-type]
        self._launch = threading.Thread(target=self._start, args=(allowance,), name="divergence-shorter", daemon=True)
        self._launch.start()

    def _ready(self) -> None:
        if self._launch is not None:
            self._launch.join()

    def _start(self, allowance: int) -> None:
        try:
            self._launch_process(allowance)
        except OSError:  # no room for the inputs, no process: decide() says so and the passes run here
            self.proc = None

    def _launch_process(self, allowance: int) -> None:
        b = self.budget
        if self._closed:
            return
        self.folder = tempfile.mkdtemp(prefix="divergence-shorter-")
        for name, value in self.arrays.items():
            np.save(os.path.join(self.folder, f"{name}.npy"), value)
        params = dict(min_count=float(self.min_count), exhaustive=bool(self.exhaustive), cap=int(self.cap),
                      max_length=int(self.max_length), allowance=allowance, max_work=int(b.max_work or 0),
                      parent=os.getpid(), deadline=b.start + b.time_limit if b.time_limit is not None else None)
        with open(os.path.join(self.folder, "params.json"), "w", encoding="utf-8") as f:
            json.dump(params, f)
        self.proc = subprocess.Popen([sys.executable, "-m", "divergence.mining.shorter", self.folder],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=child_env(DIVERGENCE_SPECULATE="0"))

    def _read(self, timeout: float) -> bool:
        """Read the records written so far (waiting at most ``timeout`` seconds); False once the
        process has ended and said everything."""
        assert self.proc is not None and self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return True
        chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
        if not chunk:
            return False
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            rec = json.loads(line)
            self.records[int(rec["k"])] = rec
        return True

    def record(self, k: int, report: Callable[[], None]) -> dict | None:
        """Pass k's record (None: the second process did not run it: the passes before it used
        the budget's rest, or it stopped), waiting for it."""
        while k not in self.records:
            if self.proc is None or not self._read(0.25):
                return self.records.get(k)
            report()
        return self.records[k]

    def decide(self, first: Overflow, known: np.ndarray | None) -> tuple[tuple | None, int, Overflow] | None:
        """The passes' outcome as the passes run one after the other would have it, the whole
        request having overflowed with ``first`` (its work in the budget): (the longest fitting
        pass's parts or None, its length or 0, the overflow the note names); None when the
        second process failed (the caller then mines the passes itself, nothing counted)."""
        self._ready()
        if self.proc is None:
            return None
        b = self.budget
        whole = int(b.work)
        spent = 0
        complete = 0
        shown = 0
        try:  # the whole request's work is known now: the passes are counted against the exact rest
            assert self.proc is not None and self.proc.stdin is not None
            self.proc.stdin.write(f"whole {whole}\n".encode())
            self.proc.stdin.flush()
        except OSError:
            pass
        for k in range(1, self.max_length):
            if known is not None and k < len(known) and known[k] > self.cap:
                break
            rec = self.record(k, lambda: b.report(shown, complete or None, None))
            if rec is None:
                if self.proc is not None and self.proc.returncode not in (0, None):
                    return None  # the second process failed: the caller mines the passes itself
                break
            spent_k = int(rec["work"])
            if rec["status"] == "time":  # the result then depends on the clock: say so
                first = Overflow("time", first.slices, first.length, first.by_length)
                spent += spent_k
                break
            limit = float(b.max_work or 0)  # a budget of work: can_speculate() said so
            if rec["status"] != "done" or (rec["checks"] and whole + spent + int(rec["checked"]) > limit):
                spent += spent_k
                break
            spent += spent_k
            complete, shown = k, int(rec["slices"])
        if not complete:
            b.work = whole + spent
            return None, 0, first
        parts = self._parts(complete)
        if parts is None:
            return None
        b.work = whole + spent
        return parts, complete, first

    def _parts(self, k: int) -> tuple | None:
        assert self.proc is not None and self.proc.stdin is not None and self.folder is not None
        try:
            self.proc.stdin.write(f"{k}\n".encode())
            self.proc.stdin.flush()
            self.proc.wait()
            return tuple(np.load(os.path.join(self.folder, f"out_{name}.npy")) for name in _PARTS)
        except (OSError, ValueError):
            return None

    def close(self) -> None:
        """End the second process (if it runs) and remove its files."""
        self._closed = True
        self._ready()
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            for f in (self.proc.stdin, self.proc.stdout):
                if f is not None:
                    f.close()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
        self.proc = None


def main(folder: str) -> int:
    """The second process: mine lengths 1, 2, ... of the request in ``folder`` within its share of
    the budget, one JSON line per pass, then write the pass asked for on standard input. When its
    parent is gone (killed: a cancelled scan), it ends and removes ``folder``, whatever it was doing."""
    with open(os.path.join(folder, "params.json"), encoding="utf-8") as f:
        p = json.load(f)
    try:
        return _passes(folder, p)
    finally:
        if os.getppid() != int(p["parent"]):  # a record or the table could not reach it
            shutil.rmtree(folder, ignore_errors=True)


def _passes(folder: str, p: dict) -> int:
    a = {name: np.load(os.path.join(folder, f"{name}.npy")) for name in _INPUTS}
    root = Root(a["root_attr"], a["root_val"], a["root_tallies"], a["root_fp"], a["root_ih"])
    parent_pid = int(p["parent"])

    def orphaned() -> None:
        if os.getppid() != parent_pid:  # the whole request's process is gone (killed): so is its purpose
            shutil.rmtree(folder, ignore_errors=True)
            os._exit(0)

    kept: dict[int, tuple] = {}
    spent = 0
    # the rest of the budget: what remained when this process started, until the parent says what
    # the whole request spent (a line "whole N" on standard input), then exactly the rest
    rest: dict[str, Any] = {"allowance": int(p["allowance"]), "budget": None, "whole": None, "spent": 0}

    def listen() -> None:
        orphaned()
        if rest["whole"] is None and select.select([sys.stdin], [], [], 0)[0]:
            line = sys.stdin.readline().split()
            if len(line) == 2 and line[0] == "whole":
                rest["whole"] = int(line[1])
                rest["allowance"] = int(p["max_work"]) - int(line[1])
                current = rest["budget"]
                current.max_work = rest["allowance"] - rest["spent"]

    for k in range(1, int(p["max_length"])):
        expand = a["expand"] if k > 1 else np.empty(0, np.int64)
        budget = Budget(max_slices=int(p["cap"]) - 1, time_limit=None, max_work=rest["allowance"] - spent)
        if p["deadline"] is not None:
            budget.start, budget.time_limit = time.monotonic(), max(float(p["deadline"]) - time.monotonic(), 0.0)
        rest["budget"], rest["spent"] = budget, spent
        status = "done"
        try:
            kept[k] = run(a["codes"], a["weights"], a["fps"], a["n_values"], float(p["min_count"]), k,
                          bool(p["exhaustive"]), root, a["item_hash"], a["total"], expand, int(p["cap"]), budget,
                          on_check=listen)
        except Overflow as exc:
            status = exc.why
        spent += budget.work
        slices = len(kept[k][0]) - 1 if k in kept else 0
        print(json.dumps(dict(k=k, status=status, work=budget.work, checked=budget.checked, checks=budget.checks,
                              slices=slices)), flush=True)
        if status != "done":
            break
    line = sys.stdin.readline().strip()
    while line.startswith("whole"):
        line = sys.stdin.readline().strip()
    if not line:  # the parent is gone without asking (killed): its files go with it
        shutil.rmtree(folder, ignore_errors=True)
        return 0
    if int(line) in kept:
        for name, value in zip(_PARTS, kept[int(line)]):
            np.save(os.path.join(folder, f"out_{name}.npy"), value)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
