"""Every benchmark command docs/performance.md cites, from one place: the list read from the page itself
(so the two never drift), each under the heading it measures for, and any of them run in turn.

    python benchmarks/run.py                    # the list, numbered
    python benchmarks/run.py 3 7                # run commands 3 and 7 (each prints its table)
    python benchmarks/run.py --all              # every command that needs no argument of yours (an hour or more)
    python benchmarks/run.py 1 --set PYTHON_OF_A_DIVEXPLORER_VENV=/tmp/dx/bin/python

A command with a placeholder in capitals (OLD, a venv's python) runs once --set gives it a value. The
benchmarks are grouped by purpose: speed/ (seconds and memory), validation/ (error rates by simulation,
the same outputs across a change, safety figures), tools/ (the synthetic table, the peer reference values).
"""
from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "performance.md"
COMMAND = re.compile(r"`python (benchmarks/[\w/]+\.py[^`]*)`")
PLACEHOLDER = re.compile(r"\b[A-Z][A-Z_]{2,}\b|/path/to/[\w/.-]+")


def cited(page: Path = PAGE) -> list[tuple[str, str]]:
    """(heading, command) for each distinct benchmark command the page cites, in the page's order."""
    heading, seen, out = "", set(), []
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        for m in COMMAND.finditer(line):
            command = " ".join(m.group(1).split())
            if command not in seen:
                seen.add(command)
                out.append((heading, command))
    return out


def placeholders(command: str) -> list[str]:
    return PLACEHOLDER.findall(command)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("numbers", nargs="*", type=int, help="the commands to run, by their number in the list")
    ap.add_argument("--all", action="store_true", help="run every command that needs no value of yours")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a placeholder's value")
    args = ap.parse_args(argv)
    commands = cited()
    values = dict(s.split("=", 1) for s in args.set)
    if not args.numbers and not args.all:
        for k, (heading, command) in enumerate(commands, 1):
            needs = [p for p in placeholders(command) if p not in values]
            print(f"{k:>3}  {command}" + (f"   (needs --set {', '.join(needs)})" if needs else "") + f"\n     {heading}")
        return 0
    chosen = range(1, len(commands) + 1) if args.all else args.numbers
    failed = 0
    for k in chosen:
        if not 1 <= k <= len(commands):
            raise SystemExit(f"no command {k}: the list has {len(commands)} (python benchmarks/run.py)")
        heading, command = commands[k - 1]
        for name, value in values.items():
            command = command.replace(name, value)
        if placeholders(command):
            print(f"[{k}] skipped: {command} needs --set {', '.join(placeholders(command))}")
            continue
        print(f"[{k}] {heading}: python {command}", flush=True)
        failed += subprocess.run([sys.executable, *shlex.split(command)], cwd=ROOT).returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
