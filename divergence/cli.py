"""Command line: ``python -m divergence scan DATA ...``.

Bad input ends with exit status 2 and one line on standard error naming what is wrong.
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

import pandas as pd

from .errors import DivergenceInputError
from .io import read_table
from .scan import scan
from .table import write_csv

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise DivergenceInputError(message)


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _parse_bins(specs: Sequence[str] | None) -> dict:
    out: dict = {}
    for spec in specs or []:
        col, sep, edges = spec.rpartition("=")
        if not sep or not col or not edges:
            raise DivergenceInputError(f"--bins expects COL=e1,e2,...; got {spec!r}.")
        try:
            values = [float(e) for e in edges.split(",") if e.strip()]
        except ValueError:
            raise DivergenceInputError(f"--bins {spec!r}: edges must be numbers.") from None
        out[col] = values
    return out


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [t.strip() for t in text.split(",") if t.strip()]


def add_scan_options(p: argparse.ArgumentParser) -> None:
    """Options shared by every command that runs a scan."""
    p.add_argument("data", help="CSV or Parquet file")
    roles = p.add_argument_group("column roles")
    roles.add_argument("--target", help="true label (classification) or true value (regression)")
    roles.add_argument("--prediction", help="predicted label or value")
    roles.add_argument("--score", help="classifier score, predicted positive when score >= --threshold")
    roles.add_argument("--threshold", type=_float, default=0.5, help="score threshold (default 0.5)")
    roles.add_argument("--positive", help="the positive label of the target (text or number)")
    roles.add_argument("--metric", help="comma-separated metrics, e.g. fpr,fnr or abs_error")
    roles.add_argument("--regression", action="store_true", help="target and prediction are numbers")
    roles.add_argument("--outcome", help="numeric column(s) used as the outcome as they are (comma-separated)")
    roles.add_argument("--rank-by", help="score to rank rows by (higher is better unless --ascending)")
    roles.add_argument("--rank", help="rank column (1 = best)")
    roles.add_argument("--ascending", action="store_true", help="with --rank-by: lower score is better")
    roles.add_argument("--gamma", default=None, help="rank value: topk:K, power:A or dcg (default)")
    slicing = p.add_argument_group("slicing")
    slicing.add_argument("--attributes", help="comma-separated columns to slice by (default: all others)")
    slicing.add_argument("--bins", action="append", metavar="COL=e1,e2,...",
                         help="explicit bin edges for a numeric column (repeatable)")
    slicing.add_argument("--quantile-bins", type=int, default=3, help="bins per numeric column (default 3)")
    slicing.add_argument("--binning", choices=["quantile", "uniform"], default="quantile")
    slicing.add_argument("--min-support", type=_float, default=0.05, help="minimum support in (0, 1]")
    slicing.add_argument("--max-length", type=int, default=None, help="most items in a slice")
    slicing.add_argument("--engine", default="fast", choices=["fast", "mlxtend"],
                         help="miner: fast (default) or mlxtend (FP-growth, slow, the reference)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m divergence",
                     description="Find the slices of a dataset where a model behaves differently.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    p_scan = sub.add_parser("scan", help="mine every slice above a support threshold")
    add_scan_options(p_scan)
    p_scan.add_argument("--output", "-o", help="write the slice table to this CSV file")
    p_scan.add_argument("--top", type=int, default=10, help="slices shown per metric without --output")
    p_scan.add_argument("--verbose", "-v", action="store_true", help="print what was decided and measured")
    return parser


def scan_from_args(args: argparse.Namespace):
    """Read the data and run the scan the options describe."""
    df = read_table(args.data)
    return df, scan(
        df, target=args.target, prediction=args.prediction, score=args.score,
        threshold=args.threshold, positive=args.positive, metrics=_split(args.metric),
        outcome=_split(args.outcome), rank=args.rank, rank_by=args.rank_by,
        ascending=args.ascending, gamma=args.gamma, regression=args.regression,
        attributes=_split(args.attributes), bins=_parse_bins(args.bins),
        quantile_bins=args.quantile_bins, binning=args.binning, min_support=args.min_support,
        max_length=args.max_length, engine=args.engine,
    )


def _summary(table, top: int) -> str:
    lines = [f"{table.n_rows:,} rows, {len(table) - 1:,} slices with support >= {table.min_support:g}"]
    with pd.option_context("display.width", 160, "display.max_colwidth", 60):
        for m in table.metrics:
            lines.append("")
            lines.append(f"{m.name} ({m.description}): whole dataset {table.overall(m.name):.4g}")
            cols = ["itemset", "support", m.name, f"{m.name}_divergence", f"{m.name}_t", f"{m.name}_p"]
            lines.append(table.top(top, metric=m.name)[cols].to_string(index=False))
    return "\n".join(lines)


def _cmd_scan(args: argparse.Namespace) -> int:
    _, table = scan_from_args(args)
    if args.verbose:
        for note in table.notes:
            print(f"note: {note}", file=sys.stderr)
        print(f"attributes: {', '.join(table.attributes)}", file=sys.stderr)
        print(f"slices tested: {len(table) - 1:,}", file=sys.stderr)
    if args.output:
        write_csv_atomically(table.frame, args.output)
        print(f"wrote {len(table):,} rows to {args.output}", file=sys.stderr)
    else:
        if not args.verbose:
            for note in table.notes:
                print(f"note: {note}", file=sys.stderr)
        print(_summary(table, args.top))
    return 0


def write_csv_atomically(frame: pd.DataFrame, path: str) -> None:
    """Write a CSV through a temporary file, so a failure never leaves half a file."""
    import os
    import tempfile

    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise DivergenceInputError(f"Cannot write '{path}': folder '{directory}' does not exist.")
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
    try:
        os.close(fd)
        write_csv(frame, tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


COMMANDS = {"scan": _cmd_scan}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help()
            return 2
        return COMMANDS[args.command](args)
    except DivergenceInputError as exc:
        print(f"divergence: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("divergence: interrupted", file=sys.stderr)
        return 130
