"""The compiled kernels' routes, measured as whole processes: the ahead-of-time build (numba's
``pycc``), numba's JIT with its on-disk cache warmed once beforehand (what an install step could do
instead of ``pycc``), and numba's JIT from cold (no cache, every kernel compiled by the process).

    python benchmarks/speed/bench_kernels.py                 # 3 runs of each, medians
    python benchmarks/speed/bench_kernels.py --repeat 5 --no-adult

Rows (each a fresh ``python -m divergence scan ... --output`` process, timed from outside, the
routes taking turns so that they share the machine's load):

- built-in data: the demo table (``divergence.data.datasets.load_demo()``, 10,000 rows) written to a
  CSV beforehand, scanned for FPR and FNR at ``--min-support 0.01``;
- Adult: ``adult_discretized.csv`` (from ../shared/data or ``DIVERGENCE_DATA``; skipped with a
  message when absent), FPR and FNR at ``--min-support 0.005 --exhaustive``, as in
  ``benchmarks/speed/bench_startup.py``.

Routes, chosen without touching the library, by environment variables only:

- ``aot``: ``DIVERGENCE_KERNELS=aot`` (the fresh build in divergence/, or the row says why not);
- ``jit, cache warmed``: ``DIVERGENCE_KERNELS=jit`` and ``NUMBA_CACHE_DIR`` a folder warmed once,
  before the runs, by one process compiling every exported kernel with its declared signature
  (``Kernel.jit.compile(signature)``, the install step this plan would add; 1-d arrays as
  layout 'C', the type numba gives such an argument at a call);
- ``jit, cold``: ``DIVERGENCE_KERNELS=jit`` and ``NUMBA_CACHE_DIR`` a new empty folder for every run.

One-time costs: the ahead-of-time build (``divergence.kernels._aot.build(target_cpu="host")`` into a
temporary folder, what ``make`` runs; once, it takes minutes: ``--build-repeat``), the cache's
warm-up (``--repeat`` times into new folders) and what each leaves on disk.
"""
from __future__ import annotations

import argparse
import os
import runpy
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
runpy.run_path(str(HERE / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](HERE, __name__)  # this checkout's divergence
DATA = Path(os.environ.get("DIVERGENCE_DATA", HERE.parent / "shared" / "data"))

WRITE_DEMO = r"""
import sys
from divergence.data.datasets import load_demo
load_demo().to_csv(sys.argv[1], index=False)
"""

# what an install step would run instead of pycc: every exported kernel compiled by numba's JIT
# with its declared signature, written to numba's on-disk cache (NUMBA_CACHE_DIR)
WARM = r"""
from divergence.kernels._aot import exported_kernels
kernels = exported_kernels()
for k in kernels:
    jit = k.jit  # imports numba, registers how kernels see each other
    # numba spells a 1-d contiguous array type from a 1-tuple of slices ('F') but types a 1-d
    # contiguous argument 'C' when called: compiled as 'F', the cache would miss every call
    sig = tuple(t.numba_type().copy(layout="C") if t.ndim == 1 else t.numba_type() for t in k.signature)
    jit.compile(sig)
print(len(kernels))
"""

BUILD = r"""
import sys
from divergence.kernels._aot import build
print(build(sys.argv[1], target_cpu="host"))
"""


def run(cmd: list[str], env: dict) -> float:
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE, env=env)
    seconds = time.perf_counter() - t
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return seconds


def size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the median is kept (default 3)")
    parser.add_argument("--build-repeat", type=int, default=1,
                        help="ahead-of-time builds timed (default 1: a build takes minutes; 0 skips it)")
    parser.add_argument("--no-adult", action="store_true", help="skip the Adult row")
    args = parser.parse_args()

    py = sys.executable
    base = {k: v for k, v in os.environ.items() if k not in ("DIVERGENCE_KERNELS", "PYTHONPATH", "NUMBA_CACHE_DIR")}
    base["PYTHONPATH"] = str(HERE)
    status = subprocess.run([py, "-m", "divergence.kernels._aot", "--check"], capture_output=True, text=True, cwd=HERE,
                            env=base)
    fresh = status.returncode == 0
    import numba  # only for its version

    load = os.getloadavg()
    print(f"code: {HERE}; numba {numba.__version__}; kernels: {(status.stdout or status.stderr).strip()}")
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} CPUs at the start; "
          f"median of {args.repeat} whole processes each")

    with tempfile.TemporaryDirectory(prefix="bench-kernels-") as tmp_name:
        tmp = Path(tmp_name)
        demo = tmp / "demo.csv"
        subprocess.run([py, "-c", WRITE_DEMO, str(demo)], check=True, cwd=HERE, env=base)
        jobs = {"built-in demo, s=0.01 (FPR, FNR)": [
            py, "-m", "divergence", "scan", str(demo), "--target", "defaulted", "--prediction",
            "predicted_default", "--positive", "yes", "--metric", "fpr,fnr", "--min-support", "0.01",
            "--output", str(tmp / "demo-out.csv")]}
        adult = DATA / "adult_discretized.csv"
        if args.no_adult:
            print("Adult row skipped (--no-adult)")
        elif not adult.exists():
            print(f"{adult} not found: the Adult row is skipped (set DIVERGENCE_DATA)")
        else:
            jobs["Adult s=0.005 exhaustive (FPR, FNR)"] = [
                py, "-m", "divergence", "scan", str(adult), "--target", "class", "--prediction", "predicted",
                "--positive", "1", "--metric", "fpr,fnr", "--min-support", "0.005", "--exhaustive",
                "--output", str(tmp / "adult-out.csv")]

        # one-time costs: the cache's warm-up (into new folders), then the build
        warm_s, cache = [], tmp / "cache"
        for r in range(args.repeat):
            folder = cache if r == args.repeat - 1 else tmp / f"cache-warm-{r}"
            warm_s.append(run([py, "-c", WARM], dict(base, DIVERGENCE_KERNELS="jit", NUMBA_CACHE_DIR=str(folder))))
        warmed = files(cache)
        cache_bytes = size(cache)
        build_s, so_bytes = [], None
        for r in range(args.build_repeat):
            out = tmp / f"aot-{r}"
            out.mkdir()
            build_s.append(run([py, "-c", BUILD, str(out)], base))
            so_bytes = sum(p.stat().st_size for p in out.glob("_kernels*"))

        routes = {"aot": dict(base, DIVERGENCE_KERNELS="aot"),
                  "jit, cache warmed": dict(base, DIVERGENCE_KERNELS="jit", NUMBA_CACHE_DIR=str(cache)),
                  "jit, cold": None}  # a new empty cache folder for every run
        if not fresh:
            print("no fresh ahead-of-time build in divergence/: the aot column is empty "
                  "(python -m divergence.kernels._aot --host builds it)")
            routes.pop("aot")
        times: dict[tuple[str, str], list[float]] = {(j, r): [] for j in jobs for r in routes}
        cold = 0
        for _ in range(args.repeat):
            for job, cmd in jobs.items():
                for route, env in routes.items():
                    if env is None:
                        cold += 1
                        env = dict(base, DIVERGENCE_KERNELS="jit", NUMBA_CACHE_DIR=str(tmp / f"cold-{cold}"))
                    times[(job, route)].append(run(cmd, env))
        added = files(cache) - warmed

    def cell(values: list[float]) -> str:
        return f"{statistics.median(values):.2f} s" if values else "-"

    cols = ["aot", "jit, cache warmed", "jit, cold"]
    print()
    print("| whole process | " + " | ".join(f"{c}" for c in cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for job in jobs:
        print(f"| `scan` {job} | " + " | ".join(cell(times.get((job, c), [])) for c in cols) + " |")
    build_cell = f"{cell(build_s)} build (pycc, host CPU; {len(build_s)} run)" if build_s else "not measured"
    so_cell = mb(so_bytes) if so_bytes is not None else "-"
    print(f"| one-time cost | {build_cell} | {cell(warm_s)} warm-up | none (paid by every process) |")
    print(f"| on disk | {so_cell} (`_kernels*.so`) | {mb(cache_bytes)} ({len(warmed)} cache files) | "
          f"{mb(0)} kept |")
    print()
    if added:
        print(f"the scans added {len(added)} files to the warmed cache (signatures the warm-up missed): "
              + ", ".join(sorted(added)[:6]) + ("..." if len(added) > 6 else ""))
    else:
        print("the scans added nothing to the warmed cache: the warm-up covered every kernel they ran")
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} at the end")


if __name__ == "__main__":
    main()
