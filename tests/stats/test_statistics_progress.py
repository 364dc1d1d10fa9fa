"""A long step says what it is doing (issue 30 point 7): the statistics report each step as it
starts (which one, of how many), in order, the share done rising; the command line's --verbose and the
dashboard's status line say so, with the time left once enough is done to tell."""
from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

from divergence import scan
from divergence.data.datasets import DEMO_ROLES, load_demo


def test_the_statistics_report_each_step_in_order():
    seen = []
    scan(load_demo(3000), **dict(DEMO_ROLES["classification"], metrics=["fpr", "fnr", "error"]), bootstrap=20,
         min_support=0.05, progress=seen.append)
    steps = [p for p in seen if p["stage"] == "statistics" and p.get("step") and "step_fraction" not in p]
    # the bootstrap says how far it is within its step (its walk, replicates chunk by chunk)
    inner = [p["step_fraction"] for p in seen if "step_fraction" in p]
    assert inner and inner == sorted(inner) and inner[-1] == pytest.approx(1.0)
    assert all(p["step"] == "bootstrap intervals" for p in seen if "step_fraction" in p)
    assert [p["step"] for p in steps] == ["the tests of every slice", "the verdicts' reference models",
                                          "bootstrap intervals", "distinct findings of fpr",
                                          "distinct findings of fnr", "distinct findings of error"]
    assert [p["fraction"] for p in steps] == [k / 6 for k in range(6)]
    assert all(p["steps"] == 6 and p["slices"] == steps[0]["slices"] > 0 for p in steps)
    assert seen[-1]["stage"] == "done"


def test_the_command_line_says_each_step(tmp_path):
    path = tmp_path / "demo.csv"
    load_demo(2000).to_csv(path, index=False)
    r = DEMO_ROLES["classification"]
    p = subprocess.run([sys.executable, "-m", "divergence", "scan", str(path), "--target", r["target"], "--prediction",
                        r["prediction"], "--positive", r["positive"], "--metric", "fpr", "--min-support", "0.05",
                        "--verbose", "-o", str(tmp_path / "out.csv")], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "the tests of every slice (step 1 of 2)" in p.stderr
    assert "distinct findings of fpr (step 2 of 2)" in p.stderr


@pytest.mark.parametrize("fraction, seconds, words", [
    (None, 60, ""), (0.01, 60, ""), (0.5, 1.0, ""), (0.5, 20, "about 20 s left"), (0.25, 20, "about 60 s left"), (0.25, 30, "about 2 min left"),
    (0.1, 60, "about 9 min left"), (0.99, 100, ""),
])
def test_the_time_left(fraction, seconds, words):
    from ui.job import time_left

    assert time_left(fraction, seconds) == words


def test_the_dashboards_status_line_names_the_step(monkeypatch):
    import time

    from ui import job

    running = SimpleNamespace(progress={"stage": "statistics", "slices": 12_000, "fraction": 0.5,
                                        "step": "distinct findings of fpr", "steps": 4},
                              elapsed=40.0, stage_started=time.monotonic() - 30.0, label="")
    fraction, text = job.progress_text(running)
    assert fraction == 0.5
    assert text.startswith("12,000 slices mined; computing their statistics: distinct findings of fpr (step 3 of 4)…")
    assert text.endswith("(40 s)")  # steps of unequal cost: no time left claimed from them
    boot = SimpleNamespace(progress={"stage": "statistics", "slices": 12_000, "fraction": 0.25 + 0.5 / 4,
                                     "step": "bootstrap intervals", "steps": 4, "step_fraction": 0.5},
                           elapsed=40.0, stage_started=time.monotonic() - 30.0, step_started=time.monotonic() - 20.0,
                           label="")
    assert job.progress_text(boot)[1].endswith("bootstrap intervals (step 2 of 4)… (40 s; about 20 s left in this step)")
    mining = SimpleNamespace(progress={"stage": "mining", "slices": 9_000, "length": 2, "fraction": 0.25},
                             elapsed=12.0, stage_started=time.monotonic() - 10.0, label="")
    assert job.progress_text(mining)[1] == "Mining: 9,000 slices so far, slices of up to 2 items (12 s; about 30 s left)"
