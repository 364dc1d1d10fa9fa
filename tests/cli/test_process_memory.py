"""Issue 49: the command's process takes Arrow's buffers from the C allocator numpy uses (Arrow's own
pool keeps the pages it frees: 45 MiB more at an Adult scan's peak); a user's own choice stands."""
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
