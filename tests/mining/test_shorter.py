"""A request past its budget has its shorter lengths mined on another core while the whole request
runs (issue 27, the raw wide table): the same table, the same "complete up to k" and the same note
as the passes run one after the other, whichever length the budget cuts at."""
from __future__ import annotations

import glob
import os
import tempfile

import numpy as np
import pytest

from divergence.kernels.compiled import load_build, mode
from divergence.mining import mining, shorter
from divergence.mining.mining import mine

pytestmark = pytest.mark.skipif(load_build()[0] is None or mode() == "jit" or len(os.sched_getaffinity(0)) < 2,
                                reason="mining beside the whole request needs the ahead-of-time kernels and two cores")


def _table(n: int = 6_000, attrs: int = 14, seed: int = 5):
    rng = np.random.default_rng(seed)
    n_values = rng.integers(2, 5, attrs)
    codes = np.column_stack([rng.integers(0, k, n) for k in n_values]).astype(np.int32)
    y = rng.random(n) < 0.3
    weights = np.column_stack([np.ones(n), y, y]).astype(float)
    return codes, weights, n_values


def _mine(monkeypatch, speculate: bool, max_work: int, exhaustive: bool, spy: list | None = None):
    monkeypatch.setenv("DIVERGENCE_SPECULATE", "1" if speculate else "0")
    monkeypatch.setenv("DIVERGENCE_WORKERS", "2")  # asked for: the library alone starts no second process
    codes, weights, n_values = _table()
    if spy is not None:
        start = shorter.ShorterLengths.start

        def counted(self):
            spy.append(self.budget.work)
            return start(self)

        monkeypatch.setattr(shorter.ShorterLengths, "start", counted)
    return mine(codes, weights, n_values, min_support=0.004, exhaustive=exhaustive, max_work=max_work,
                time_limit=None)


@pytest.mark.parametrize("exhaustive", [False, True], ids=["distinct rows", "exhaustive"])
def test_the_same_cut_and_table_as_one_pass_after_the_other(monkeypatch, exhaustive):
    """Over a range of work budgets (the cut at different lengths, and by different margins), the
    lengths mined beside the whole request give what the passes run in turn give."""
    cuts = set()
    for max_work in (12_000_000, 20_000_000, 30_000_000, 50_000_000, 80_000_000, 100_000_000):
        alone = _mine(monkeypatch, False, max_work, exhaustive)
        started: list = []
        beside = _mine(monkeypatch, True, max_work, exhaustive, spy=started)
        assert started and started[0] >= shorter.SPECULATE_AFTER * max_work  # it did run beside
        assert beside.complete_length == alone.complete_length and beside.note == alone.note
        assert beside.cut == alone.cut == "work"
        np.testing.assert_array_equal(beside.codes, alone.codes)
        np.testing.assert_array_equal(beside.tallies, alone.tallies)
        np.testing.assert_array_equal(beside.parent, alone.parent)
        cuts.add(alone.complete_length)
    assert len(cuts) >= 2  # the budgets cut at more than one length


def test_a_request_that_fits_stops_the_second_process(monkeypatch):
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "divergence-shorter-*")))
    started: list = []
    whole = _mine(monkeypatch, True, 10 ** 12, False, spy=started)
    assert not started  # a request far from its budget starts nothing
    monkeypatch.setattr(mining, "SPECULATE_AFTER", 0.0)
    again = _mine(monkeypatch, True, 10 ** 10, False)  # unless told to: started at once, stopped when it fits
    assert len(started) == 1
    assert whole.complete_length is None and again.complete_length is None
    np.testing.assert_array_equal(whole.codes, again.codes)
    assert set(glob.glob(os.path.join(tempfile.gettempdir(), "divergence-shorter-*"))) == before  # files removed


def _long_request() -> None:  # a child process: a request whose whole run takes seconds
    from divergence.kernels.processes import set_workers

    set_workers(2)
    codes, weights, n_values = _table(n=40_000, attrs=30, seed=2)  # past its budget of work after seconds
    mine(codes, weights, n_values, min_support=0.02, max_work=2 * 10 ** 9, time_limit=None)


@pytest.mark.slow
def test_the_second_process_ends_with_the_request_it_serves(tmp_path):
    """A scan killed (the dashboard's Cancel kills its worker) leaves no process and no files."""
    import multiprocessing as mp
    import signal
    import subprocess
    import time

    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "divergence-shorter-*")))
    proc = mp.get_context("spawn").Process(target=_long_request)
    proc.start()
    children: list[str] = []
    for _ in range(200):  # its second process appears once a fiftieth of the budget is spent
        children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        if children:
            break
        time.sleep(0.1)
    assert children, "the request never started its second process"
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()
    for _ in range(50):
        if not any(os.path.exists(f"/proc/{c}") for c in children):
            break
        time.sleep(0.1)
    assert not any(os.path.exists(f"/proc/{c}") for c in children)
    assert set(glob.glob(os.path.join(tempfile.gettempdir(), "divergence-shorter-*"))) == before
