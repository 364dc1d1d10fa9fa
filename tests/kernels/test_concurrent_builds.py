"""Issue 32 point 2, for real: three ahead-of-time kernel builds started at once, two in one checkout
and one in another, all succeed, and each checkout's build then runs a scan without numba (a second
build used to fail with FileNotFoundError on a pycc folder the first one removed)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCAN = ("import sys; from divergence import scan; from divergence.data.datasets import DEMO_ROLES, load_demo; "
        "t = scan(load_demo(), **DEMO_ROLES['classification'], min_support=0.1); "
        "assert 'numba' not in sys.modules, 'numba was imported'; print(len(t.frame))")


def test_builds_at_once_in_two_checkouts_and_in_one(tmp_path):
    if shutil.which("gcc") is None:
        pytest.skip("no C compiler: the kernels are compiled by numba's JIT instead")
    checkouts = []
    for name in ("first", "second"):
        shutil.copytree(ROOT / "divergence", tmp_path / name / "divergence",
                        ignore=shutil.ignore_patterns("_kernels*", "__pycache__", ".aot-build*"))
        checkouts.append(tmp_path / name)

    def env(where: Path, **more: str) -> dict:
        return {**os.environ, "PYTHONPATH": str(where), **more}

    builds = [subprocess.Popen([sys.executable, "-m", "divergence.kernels._aot", "--host"], cwd=tmp_path,
                               env=env(where), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
              for where in (checkouts[0], checkouts[1], checkouts[0])]
    said = [b.communicate(timeout=1200)[0] for b in builds]
    assert [b.returncode for b in builds] == [0, 0, 0], said
    for where in checkouts:
        assert list((where / "divergence" / "kernels").glob("_kernels*.so")), where
        check = subprocess.run([sys.executable, "-m", "divergence.kernels._aot", "--check"], cwd=tmp_path, env=env(where),
                               capture_output=True, text=True, timeout=120)
        assert check.returncode == 0, check.stdout + check.stderr
        scan = subprocess.run([sys.executable, "-c", SCAN], cwd=tmp_path, env=env(where, DIVERGENCE_KERNELS="aot"),
                              capture_output=True, text=True, timeout=300)
        assert scan.returncode == 0 and int(scan.stdout.split()[-1]) > 1, scan.stderr[-2000:]
