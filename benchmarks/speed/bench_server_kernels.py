"""How long the dashboard's server holds the GIL when it measures a typed slice before the kernels are
compiled (issue 47 N9).

    python benchmarks/speed/bench_server_kernels.py

The server measures a slice typed by the user (one not mined) itself (``divergence.measure_slice``),
which calls Fisher's test kernel. Without the ahead-of-time build and with numba's cache empty (the first
run after installing), that call imported numba and compiled the kernel in the server: every session and
the health check waited. Each case runs in a fresh process on the built-in dataset (10,000 rows; the
scan itself with the build, as the workers would have it), with ``NUMBA_CACHE_DIR`` an empty folder; a
thread ticking every 10 ms records the longest gap while the slice is measured (the GIL held that long).
Cases: the JIT as before; the server as now (never compiles: the kernel as Python).
"""
from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence
CASE = r"""
import json, os, sys, threading, time
import divergence
from divergence.data.datasets import DEMO_ROLES, load_demo
from divergence.kernels import compiled
df = load_demo()
table = divergence.scan(df, **dict(DEMO_ROLES["classification"], metrics=["fpr", "fnr"]))
os.environ["DIVERGENCE_KERNELS"] = "jit"  # as without the build
if sys.argv[1] == "never":
    compiled.never_compile_here()
gaps, stop = [0.0], threading.Event()
def tick():
    last = time.perf_counter()
    while not stop.is_set():
        time.sleep(0.01)
        now = time.perf_counter()
        gaps[0] = max(gaps[0], now - last - 0.01)
        last = now
t = threading.Thread(target=tick, daemon=True); t.start(); time.sleep(0.1)
t0 = time.perf_counter()
m = divergence.measure_slice(table, ["region=South", "channel=App", "education=Primary", "sex=Female"], data=df)
seconds = time.perf_counter() - t0
stop.set(); t.join()
p = [float(m.table.frame[c].iloc[-1]) for c in ("fpr_p", "fnr_p")]
print(json.dumps({"seconds": seconds, "gap": gaps[0], "numba": "numba" in sys.modules, "p": p}))
"""


def main() -> None:
    rows = {}
    for case in ("jit", "never"):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache, DIVERGENCE_WARM="0")
            done = subprocess.run([sys.executable, "-c", CASE, case], cwd=ROOT, env=env, capture_output=True,
                                  text=True, timeout=900)
            rows[case] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'server':<28} {'measure s':>9} {'longest GIL hold s':>18} {'numba loaded':>12}  p-values (fpr, fnr)")
    names = {"jit": "compiles (before issue 47)", "never": "never compiles (now)"}
    for case, r in rows.items():
        print(f"{names[case]:<28} {r['seconds']:9.2f} {r['gap']:18.2f} {str(r['numba']):>12}  {r['p']}")


if __name__ == "__main__":
    main()
