"""Issue 49: the command's process takes Arrow's buffers from the C allocator numpy uses (Arrow's own
pool keeps the pages it frees: 45 MiB more at an Adult scan's peak); a user's own choice stands. The
frame read from the file is let go before the statistics."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import ROOT

#: the console entry point with ``main`` replaced by one that reads the pool Arrow allocates from
#: once pandas (which imports pyarrow) is loaded, as a scan loads it
PROBE = """
import divergence.cli.cli as cli
def main(prog):
    import pandas, pyarrow
    pandas.DataFrame({"a": ["x", "y"]})
    print(pyarrow.default_memory_pool().backend_name)
    return 0
cli.main = main
cli.console()
"""


@pytest.mark.parametrize("asked, pool", [(None, "system"), ("mimalloc", "mimalloc")])
def test_the_command_allocates_arrow_buffers_with_the_c_allocator(asked, pool):
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    env["PYTHONPATH"] = str(ROOT)
    if asked:
        env["ARROW_DEFAULT_MEMORY_POOL"] = asked
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == pool


def _frame(rows: int = 400):
    import pandas as pd

    return pd.DataFrame({"y": [i % 2 for i in range(rows)], "p": [(i // 2) % 2 for i in range(rows)],
                         "a": [f"v{(i // 7) % 4}" for i in range(rows)], "b": [f"w{(i // 3) % 3}" for i in range(rows)]})


def _watch_assess(monkeypatch) -> list:
    """Replace ``assess`` by one that records, as it starts, whether each watched frame is alive."""
    import gc
    import importlib

    assess_module = importlib.import_module("divergence.stats.assess")
    real = assess_module.assess
    seen: list = []

    def assess(*args, **kwargs):
        gc.collect()
        seen.append([ref() is not None for ref in watched])
        return real(*args, **kwargs)

    watched: list = []
    monkeypatch.setattr(assess_module, "assess", assess)
    seen.append(watched)
    return seen


def test_the_command_lets_the_input_frame_go_before_the_statistics(tmp_path, monkeypatch, capsys):
    """The frame read from the file is not held through the statistics, where the peak is (Adult:
    8 MiB): nothing but the scan holds it, and the scan lets it go once the rows are mined."""
    import importlib
    import weakref

    from divergence.cli.cli import main

    _frame().to_csv(tmp_path / "d.csv", index=False)
    io = importlib.import_module("divergence.data.io")
    real_load = io.load_table
    seen = _watch_assess(monkeypatch)

    def load_table(*args, **kwargs):
        loaded = real_load(*args, **kwargs)
        seen[0].append(weakref.ref(loaded.frame))
        return loaded

    monkeypatch.setattr(io, "load_table", load_table)
    out = tmp_path / "out.csv"
    assert main(["scan", str(tmp_path / "d.csv"), "--target", "y", "--prediction", "p", "--positive", "1",
                 "--metric", "fpr", "--min-support", "0.1", "--output", str(out)]) == 0
    assert seen[1:] == [[False]]
    assert out.stat().st_size > 0


def test_scan_taking_empties_its_box_and_gives_scans_table(monkeypatch):
    import weakref

    from divergence import scan
    from divergence.scan import scan_taking

    want = scan(_frame(), target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.1)
    seen = _watch_assess(monkeypatch)
    box = [_frame()]
    seen[0].append(weakref.ref(box[0]))
    got = scan_taking(box, target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.1)
    assert box == [] and seen[1:] == [[False]]
    assert got.frame.equals(want.frame)
