"""Signals in the first half second of ``python -m divergence``: what each ends with.

Sends SIGINT, SIGTERM and SIGHUP at 0.00, 0.05, ... 0.50 s after the start of
``python -m divergence scan DATA ... --output OUT`` (a small synthetic table, written to a
temporary folder) and counts, per signal, how the command ended: one line (``divergence: ...``),
a traceback, silence (killed by the signal before Python ran any of the package), or finished
first. Issue 47 F26.

    python benchmarks/validation/signals_at_start.py [--repeat 2]
"""
from __future__ import annotations

import argparse
import collections
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DELAYS = [round(0.05 * k, 2) for k in range(11)]
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def outcome(proc: subprocess.Popen, err: str) -> str:
    """How one run ended."""
    if proc.returncode == 0:
        return "finished"
    if "Traceback" in err:
        return "traceback"
    lines = err.strip().splitlines()
    if len(lines) == 1 and lines[0].startswith("divergence: "):
        return "one line"
    if not lines:
        return "silent"
    return "other: " + lines[-1][:80]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2, help="runs per signal and delay (default 2)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.csv"
        rows = ["y,p,a,b"] + [f"{i % 2},{(i // 2) % 2},v{i % 5},w{i % 3}" for i in range(400)]
        data.write_text("\n".join(rows) + "\n")
        counts: dict = collections.defaultdict(collections.Counter)
        for sig in SIGNALS:
            for delay in DELAYS:
                for _ in range(args.repeat):
                    proc = subprocess.Popen([sys.executable, "-m", "divergence", "scan", str(data), "--target", "y",
                                             "--prediction", "p", "--positive", "1", "--output",
                                             str(Path(tmp) / "out.csv")], cwd=ROOT, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True)
                    time.sleep(delay)
                    try:
                        proc.send_signal(sig)
                    except ProcessLookupError:
                        pass
                    _, err = proc.communicate(timeout=120)
                    counts[signal.Signals(sig).name][(delay, outcome(proc, err))] += 1
        print(f"{'signal':8} {'delay s':>7}  outcomes ({args.repeat} runs each)")
        for name, c in counts.items():
            for delay in DELAYS:
                found = {k[1]: v for k, v in c.items() if k[0] == delay}
                print(f"{name:8} {delay:7.2f}  " + ", ".join(f"{k}: {v}" for k, v in sorted(found.items())))
        print("load average:", " ".join(f"{x:.1f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
