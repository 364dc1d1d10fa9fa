"""Whole-process speed of the command line: start-up, a small scan, and Adult against DivExplorer.

    python benchmarks/speed/bench_startup.py                                   # best of 5 each
    python benchmarks/speed/bench_startup.py --divexplorer /tmp/dxvenv/bin/python
    python benchmarks/speed/bench_startup.py --kernels aot,jit                 # both compiled routes
    python benchmarks/speed/bench_startup.py --root /path/to/another/checkout  # measure other code

Every figure is a whole process, started afresh and timed from outside (best of ``--repeat``):

- ``divergence --help``: ``python -m divergence --help`` (and the ``divergence`` console
  command when the interpreter's environment has one installed);
- small scan: ``python -m divergence scan compas_discretized.csv ... --min-support 0.01
  --output`` (reading, mining, statistics, writing the CSV);
- Adult: ``scan adult_discretized.csv --metric fpr,fnr --min-support 0.005 --exhaustive
  --output`` (65,410 slices), and DivExplorer 0.2.6 doing the same in its own environment
  (reading the CSV, ``get_pattern_divergence`` with FPR and FNR, writing its CSV), run side by
  side in this one run, alternating, so both see the same load;
- the floor under that row: a process that only imports pandas, reads the Adult file and writes
  the scan's 43 MB table (prepared beforehand) with our CSV writer; what no mining or statistics
  can go below while the command line reads with pandas and writes this table.

``--kernels`` runs our rows once per compiled route (``DIVERGENCE_KERNELS=aot``: the kernels
built ahead of time, ``jit``: numba's cached JIT, warmed first); the first line says whether a
fresh ahead-of-time build is there. Datasets come from ../shared/data (or ``DIVERGENCE_DATA``).
"""
from __future__ import annotations

import argparse
import os
import runpy
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
runpy.run_path(str(HERE / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](HERE, __name__)  # this checkout's divergence
DATA = Path(os.environ.get("DIVERGENCE_DATA", HERE.parent / "shared" / "data"))

from bench_scan import DIVEX_JOB  # noqa: E402  (DivExplorer doing the same scan: written once)

# the floor of any scan that reads and writes these files the way ours does: the imports, reading
# the Adult file with pandas, writing the scan's own table (prepared beforehand, memory-mapped) as
# CSV with our writer; no mining, no statistics
FLOOR_JOB = r'''
import sys
import pandas as pd
import pyarrow as pa
from divergence.table import write_csv
pd.read_csv(sys.argv[1])
write_csv(pa.ipc.open_file(pa.memory_map(sys.argv[2])).read_all(), sys.argv[3])
'''

ROLES = ["--target", "class", "--prediction", "predicted", "--positive", "1", "--metric", "fpr,fnr"]


def timed(cmd: list[str], cwd: Path, env: dict) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, cwd=cwd, env=env)
    return time.perf_counter() - t


def best(cmds: dict[str, tuple[list[str], dict]], cwd: Path, repeat: int) -> dict[str, float]:
    """Best of ``repeat`` runs of each command, taking turns so that they share the load."""
    out = {k: float("inf") for k in cmds}
    for _ in range(repeat):
        for name, (cmd, env) in cmds.items():
            out[name] = min(out[name], timed(cmd, cwd, env))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure; the best is kept (default 5)")
    parser.add_argument("--divexplorer", metavar="PYTHON", help="python of a venv with divexplorer==0.2.6")
    parser.add_argument("--kernels", default="auto", help="comma-separated: auto, aot, jit (default auto)")
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout to measure (default: this one)")
    args = parser.parse_args()

    root = args.root.resolve()
    py = sys.executable
    base_env = {k: v for k, v in os.environ.items() if k not in ("DIVERGENCE_KERNELS", "PYTHONPATH")}
    base_env["PYTHONPATH"] = str(root)
    status = subprocess.run([py, "-m", "divergence.kernels._aot", "--check"], capture_output=True, text=True, cwd=root,
                            env=base_env)
    print(f"code: {root}; kernels: {(status.stdout or status.stderr).strip()}")
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} CPUs; "
          f"best of {args.repeat} whole processes")
    console = Path(py).with_name("divergence")
    compas, adult = DATA / "compas_discretized.csv", DATA / "adult_discretized.csv"
    for path in (compas, adult):
        if not path.exists():
            print(f"{path} not found: its row is skipped (set DIVERGENCE_DATA)")
    rows: list[tuple[str, str, float, float | None]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for mode in [m.strip() for m in args.kernels.split(",") if m.strip()]:
            env = dict(base_env)
            if mode != "auto":
                env["DIVERGENCE_KERNELS"] = mode
            cmds: dict = {"python -m divergence --help": ([py, "-m", "divergence", "--help"], env)}
            if console.exists() and root == HERE:
                cmds["divergence --help (console command)"] = ([str(console), "--help"], env)
            if compas.exists():
                cmds["small scan: COMPAS s=0.01 (969 slices)"] = (
                    [py, "-m", "divergence", "scan", str(compas), *ROLES, "--min-support", "0.01",
                     "--output", f"{tmp}/compas.csv"], env)
            adult_cmd = [py, "-m", "divergence", "scan", str(adult), *ROLES, "--min-support", "0.005",
                         "--exhaustive", "--output", f"{tmp}/adult.csv"]
            if adult.exists():
                cmds["Adult s=0.005 exhaustive (65,410 slices)"] = (adult_cmd, env)
                if args.divexplorer and mode == args.kernels.split(",")[0].strip():
                    cmds["DivExplorer 0.2.6: Adult s=0.005"] = (
                        [args.divexplorer, "-c", DIVEX_JOB, str(adult), "0.005", f"{tmp}/theirs.csv"], base_env)
            for cmd, e in cmds.values():  # warm: the JIT's cache, the file system's
                subprocess.run(cmd, check=True, capture_output=True, cwd=root, env=e)
            if adult.exists() and mode == args.kernels.split(",")[0].strip():
                floor = [py, "-c", FLOOR_JOB, str(adult), f"{tmp}/adult.arrow", f"{tmp}/floor.csv"]
                subprocess.run([py, "-c", "import sys, pyarrow as pa, pyarrow.csv as c, pyarrow.ipc as i; "
                                "t = c.read_csv(sys.argv[1]); w = i.new_file(sys.argv[2], t.schema); "
                                "w.write_table(t); w.close()", f"{tmp}/adult.csv", f"{tmp}/adult.arrow"],
                               check=True, cwd=root, env=env)
                cmds["floor: read Adult + write its table, no scan"] = (floor, env)
                subprocess.run(floor, check=True, capture_output=True, cwd=root, env=env)
            got = best(cmds, root, args.repeat)
            for name, seconds in got.items():
                rows.append((name, "-" if name.startswith("DivExplorer") else mode, seconds, None))
    theirs = next((s for n, _, s, _ in rows if n.startswith("DivExplorer")), None)
    print()
    print(f"| {'what':<42} | {'kernels':<7} | {'seconds':>7} | {'DivExplorer / ours':>18} |")
    print(f"|{'-' * 44}|{'-' * 9}|{'-' * 9}:|{'-' * 19}:|")
    for name, mode, seconds, _ in rows:
        ratio = f"{theirs / seconds:.1f}x" if theirs and name.startswith(("Adult", "floor")) else ""
        print(f"| {name:<42} | {mode:<7} | {seconds:>7.2f} | {ratio:>18} |")


if __name__ == "__main__":
    main()
