"""Issue 46 point 7: the library starts no second process unless asked (``scan(..., workers=2)``,
``divergence.set_workers``, ``DIVERGENCE_WORKERS``); the dashboard's workers and the command line ask."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import divergence
from divergence import DivergenceInputError
from divergence.kernels import warm
from divergence.kernels.compiled import load_build, mode
from divergence.kernels.processes import asking, free_cores, set_workers, workers
from divergence.mining import mining, shorter

needs_two = pytest.mark.skipif(free_cores() < 2, reason="a second process needs two cores")


@pytest.fixture(autouse=True)
def _nothing_asked(monkeypatch):
    monkeypatch.delenv("DIVERGENCE_WORKERS", raising=False)
    monkeypatch.delenv("DIVERGENCE_SPECULATE", raising=False)
    monkeypatch.delenv("DIVERGENCE_WARM", raising=False)
    set_workers(None)
    yield
    set_workers(None)


def test_one_process_unless_asked(monkeypatch):
    assert workers() == 1
    with asking(2):
        assert workers() == 2
        with asking(None):  # a call that does not say keeps what its caller asked
            assert workers() == 2
    assert workers() == 1
    set_workers(3)
    assert workers() == 3
    with asking(1):  # a call's own word first
        assert workers() == 1
    set_workers(None)
    monkeypatch.setenv("DIVERGENCE_WORKERS", "2")
    assert workers() == 2
    monkeypatch.setenv("DIVERGENCE_WORKERS", "two")
    with pytest.raises(DivergenceInputError, match="DIVERGENCE_WORKERS must be a whole number of processes; got 'two'"):
        workers()
    for bad in (0, -1, 1.5, True):
        with pytest.raises(DivergenceInputError, match="workers must be a whole number of processes, 1 or more"):
            set_workers(bad)
    with pytest.raises(DivergenceInputError, match="workers must be a whole number"):
        divergence.scan(pd.DataFrame({"a": [1, 2], "y": [0, 1]}), target="y", prediction="y", workers=0)


def _frame(n: int = 6_000, attrs: int = 14, seed: int = 5) -> pd.DataFrame:
    """The table of tests/mining/test_shorter.py, as a model's outputs: its mining checks its work often."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"a{j}": rng.integers(0, k, n) for j, k in enumerate(rng.integers(2, 5, attrs))})
    df["y"] = (rng.random(n) < 0.3).astype(int)
    df["p"] = df["y"]
    return df


@needs_two
@pytest.mark.skipif(load_build()[0] is None or mode() == "jit", reason="mining beside needs the ahead-of-time kernels")
def test_the_shorter_lengths_start_beside_a_request_only_when_asked(monkeypatch):
    """With the second process told to start at once, a plain mine() starts nothing, mine(workers=2)
    starts it, and both give the same table."""
    started: list = []
    start = shorter.ShorterLengths.start
    monkeypatch.setattr(shorter.ShorterLengths, "start", lambda self: (started.append(workers()), start(self))[1])
    monkeypatch.setattr(mining, "SPECULATE_AFTER", 0.0)
    kw = dict(target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.004, max_work=10 ** 10,
              time_limit=None)
    plain = divergence.mine(_frame(4_000, 11), **kw)
    assert started == []
    asked = divergence.mine(_frame(4_000, 11), workers=2, **kw)
    assert started == [2]
    pd.testing.assert_frame_equal(plain.frame, asked.frame)


@needs_two
def test_the_kernels_warm_beside_a_first_run_only_when_asked(monkeypatch):
    """A cold kernel starts the warming process only when the call may use two processes."""
    launched: list = []

    class Spy:
        def __init__(self, args, **kw):
            launched.append(args)

    monkeypatch.setattr(warm.subprocess, "Popen", Spy)
    monkeypatch.setattr(warm, "_PROC", [])
    warm.start()
    assert launched == [] and warm._PROC == []
    with asking(2):
        warm.start()
    assert len(launched) == 1 and launched[0][-2:] == ["divergence.kernels._aot", "--warm"]


def test_the_command_line_asks_for_every_core(monkeypatch, tmp_path):
    """The command line runs its command with every core asked for; the caller's process is left as it was."""
    from divergence.cli import cli

    seen: list = []
    monkeypatch.setitem(cli.COMMANDS, "scan", lambda args: seen.append(workers()) or 0)
    data = tmp_path / "d.csv"
    _frame(50, 2).to_csv(data, index=False)
    assert cli.main(["scan", str(data), "--target", "y", "--prediction", "p"]) == 0
    assert seen == [free_cores()] and workers() == 1


def test_the_dashboards_worker_asks_for_every_core(monkeypatch):
    """A scan worker's process (ui/worker.py) lets its scan use every core."""
    import ui.pool as pool
    import ui.worker as worker

    seen: list = []
    sent: list = []

    class Pipe:
        def send(self, message):
            sent.append(message[0])

        def close(self):
            pass

    monkeypatch.setitem(worker.TASKS, "probe", lambda progress=None: seen.append(workers()) or "result")
    monkeypatch.setattr(pool, "send_result", lambda conn, result: sent.append(result))
    worker._work(worker.TaskRequest("probe"), Pipe(), False)
    assert seen == [pool._cores()] and sent[-1] == "result"
