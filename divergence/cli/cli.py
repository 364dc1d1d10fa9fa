"""Command line: ``divergence scan DATA ...`` (or ``python -m divergence scan DATA ...``).

Bad input ends with exit status 2 and one line on standard error naming what is wrong. The
arguments are parsed before the engine is imported: ``--help`` and a usage error answer at once.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Sequence
from typing import Literal

from ..budget import TIME_CUT
from ..errors import DivergenceInputError, DivergenceTimeLimitWarning
from ..kernels.processes import asking, free_cores
from ..vocabulary import QUANTILE_MODES, REPORT_SORTS, SCAN_ENGINES
from .outputs import refuse_output_over_input
from .process import end_process, libraries_loaded, pause_collector
from .terminal import Inert

__all__ = ["main", "build_parser", "console"]


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise DivergenceInputError(message)


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [t.strip() for t in text.split(",") if t.strip()]


def add_settings(group, names: Sequence[str], help: dict | None = None, required: Sequence[str] = ()) -> None:
    """One option per setting, built from its field (:func:`divergence.settings.setting_field`): the
    flag, the default, the help, and how the text is read (the field's kind), so that the command
    line and the settings model cannot drift. ``help`` replaces a field's text where a command says
    it in its own words."""
    from ..settings import setting_field

    for name in names:
        f = setting_field(name)
        meta, kind = f.metadata, f.metadata["kind"]
        kw = dict(kind.cli(), dest=name, help=(help or {}).get(name, meta["help"]))
        if "action" not in kw or kw["action"] != "store_true":
            kw["default"] = None if f.default is dataclasses.MISSING else f.default
        if meta.get("metavar") and kw.get("action") != "store_true":
            kw["metavar"] = meta["metavar"]
        if name in required:
            kw["required"] = True
        group.add_argument(meta.get("option") or "--" + name.replace("_", "-"), **kw)


ROLE_OPTIONS = ("target", "prediction", "score", "threshold", "positive", "metrics", "regression", "outcome",
                "rank_by", "rank", "ascending", "gamma", "query", "relevance")
SLICING_OPTIONS = ("attributes", "bins", "quantile_bins", "binning", "min_support", "max_length", "exhaustive",
                   "max_slices", "max_work", "time_limit")
STATISTICS_OPTIONS = ("delta", "confidence", "correction", "family", "bootstrap", "seed", "top_k", "findings_work",
                      "sort_by", "scores")
REFERENCE_OPTIONS = ("reference", "reference_score", "reference_threshold")


def add_scan_options(p: argparse.ArgumentParser, data: bool = True) -> None:
    """Options shared by every command that runs a scan (``data``: with the DATA argument)."""
    if data:
        p.add_argument("data", help="CSV or Parquet file (--engine duckdb: also a folder or a glob; "
                                    "--engine spark: also a table name)")
    add_settings(p.add_argument_group("column roles"), ROLE_OPTIONS)
    slicing = p.add_argument_group("slicing")
    add_settings(slicing, SLICING_OPTIONS)
    slicing.add_argument("--engine", default="fast", choices=SCAN_ENGINES,
                         help="fast (default) or mlxtend (FP-growth, slow, the reference) mine in memory; "
                              "duckdb (files larger than memory: a file, folder or glob) and spark (a file "
                              "or a table name) bin, measure and compress where the data lives, then mine fast")
    slicing.add_argument("--memory-limit", default=None,
                         help="duckdb: memory limit, e.g. 4GB (default: half the memory, at most 4GB)")
    slicing.add_argument("--spark-master", default="local[*]", help="spark: master URL (default local[*])")
    slicing.add_argument("--quantiles", default="auto", choices=QUANTILE_MODES,
                         help="duckdb/spark: quantile edges exact (as pandas) or approximate; auto: "
                              "duckdb exact when affordable, spark approximate")
    stats = p.add_argument_group("statistics")
    add_settings(stats, STATISTICS_OPTIONS)
    rep = stats.add_mutually_exclusive_group()
    rep.add_argument("--replicate", metavar="OTHER", help="second table (CSV or Parquet) to re-measure every slice on")
    rep.add_argument("--holdout", type=_float, default=None,
                     help="share of rows held out of mining to replicate on (e.g. 0.5)")
    rep.add_argument("--split-column", metavar="COLUMN", default=None,
                     help="a split or period column: mine the other rows, replicate on those with --confirm-on")
    stats.add_argument("--confirm-on", metavar="VALUE,...", default=None,
                       help="with --split-column: the column's values whose rows confirm (e.g. 2024 or test,holdout)")
    stats.add_argument("--holdout-seed", type=int, default=None, metavar="SEED",
                       help="with --holdout: the seed drawing the held-out rows (default: --seed)")


def build_parser(prog: str = "divergence") -> argparse.ArgumentParser:
    """The command line's parser (``prog``: how its help and errors name the command)."""
    parser = _Parser(prog=prog, description="Find the slices of a dataset where a model behaves differently.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    p_scan = sub.add_parser("scan", help="mine every slice above a support threshold")
    add_scan_options(p_scan)
    p_scan.add_argument("--output", "-o", help="write the slice table to this CSV file (Parquet when its name ends in .parquet)")
    p_scan.add_argument("--allow-formulas", action="store_true", help=FORMULAS_HELP)
    p_scan.add_argument("--top", type=_count, default=10, help="slices shown per metric without --output (default 10)")
    p_scan.add_argument("--verbose", "-v", action="store_true", help="print what was decided and measured")
    p_scan.add_argument("--prune", type=_float, metavar="EPS", help="drop redundant slices: those whose "
                        "divergence is within EPS of a subset with one item fewer (for every metric)")
    p_scan.add_argument("--min-t", type=_float, metavar="T", help="keep only slices with t >= T (for some metric)")
    p_scan.add_argument("--save-plan", metavar="FILE", help="also save these settings as a slice plan "
                        "(YAML, or JSON by the name) that `report` and the dashboard can load")
    p_scan.add_argument("--evaluate", metavar="NAME,...", help="also print these metrics computed on the rows of the "
                        "findings and the first 20 slices, with 200-resample bootstrap intervals: auc, f1, "
                        "balanced_accuracy, average_precision")
    _add_explain_parser(sub)
    _add_plan_parsers(sub)
    _add_compare_parser(sub)
    return parser


def settings_from_args(args: argparse.Namespace):
    """The command's options read once into the one settings model
    (:class:`divergence.settings.Settings`), validated there."""
    from ..settings import Settings, flat_keys

    kw = {key: value for key, value in vars(args).items() if key in flat_keys()}
    if isinstance(kw.get("bins"), list):  # COL=SPEC given again: the last one counts
        kw["bins"] = dict(kw["bins"])
    settings = Settings.from_keywords(**kw)
    column, values = getattr(args, "split_column", None), getattr(args, "confirm_on", None)
    if (column is None) != (values is None):
        raise DivergenceInputError("--split-column and --confirm-on go together: the column, and its values whose "
                                   "rows confirm (e.g. --split-column year --confirm-on 2024).")
    if column is not None and values is not None:  # (both or neither: checked above)
        import dataclasses

        from ..settings import Replication

        wanted = tuple(v.strip() for v in values.split(",") if v.strip())
        settings = dataclasses.replace(settings, replication=Replication(kind="split", column=column,
                                                                           confirm_values=wanted or None))
    return settings


def plan_from_args(args: argparse.Namespace, kind: Literal["exploratory", "pre-registered"] = "exploratory"):
    """The settings of the options as a slice plan."""
    from ..report.plan import SlicePlan

    return SlicePlan.from_settings(settings_from_args(args), kind=kind,
                                   slices=list(getattr(args, "slice", None) or []))


def scan_from_args(args: argparse.Namespace):
    """Read the data and run the scan the options describe."""
    engine = getattr(args, "engine", "fast")
    if engine in ("duckdb", "spark"):
        table = _engine_scan(args)
        # how the file was read is always said, as for the default engine (the engine's notes hold it)
        args.reader_notes = [n for n in table.notes if n.startswith(READER_NOTE_STARTS)
                             or "more than once in the header" in n]
        return table
    from ..data.io import load_table, read_table
    from ..scan import scan_taking

    libraries_loaded()
    loaded = load_table(args.data)
    args.reader_notes = list(loaded.notes)
    box = [loaded.frame]
    del loaded  # the scan takes the frame out of the box: nothing holds it through the statistics
    table = scan_taking(box, settings_from_args(args), engine=args.engine,
                        replicate=read_table(args.replicate) if args.replicate else None, **_progress_args(args))
    if args.reader_notes:  # how the file was read (delimiter, encoding, renamed columns) comes first
        import dataclasses

        table = dataclasses.replace(table, notes=tuple(args.reader_notes) + tuple(table.notes))
    return table


#: how the notes saying how a CSV file was read begin (divergence.data.io.dialect_notes)
READER_NOTE_STARTS = ("Read '", "Read numbers in '")


def _engine_scan(args: argparse.Namespace):
    """The scan with binning, outcomes and compression in DuckDB or Spark."""
    from ..data.io import read_table

    settings = settings_from_args(args)
    kw = dict(quantiles=args.quantiles, replicate=read_table(args.replicate) if args.replicate else None,
              **_progress_args(args))
    if args.engine == "duckdb":
        from ..engines.duckdb_engine import scan_duckdb

        libraries_loaded()
        return scan_duckdb(args.data, settings, memory_limit=args.memory_limit, **kw)
    from ..engines.spark_engine import read_spark, scan_spark

    libraries_loaded()
    return scan_spark(read_spark(args.data, master=args.spark_master), settings, **kw)


def _progress_args(args: argparse.Namespace) -> dict:
    """With --verbose, progress on standard error."""
    return {"progress": _Progress()} if getattr(args, "verbose", False) else {}


class _Progress:
    """Progress of a scan on standard error: each stage, and the slices mined every two seconds."""

    def __init__(self) -> None:
        import time

        self._time = time.monotonic
        self._last = 0.0
        self._stage: tuple | None = None

    def __call__(self, info: dict) -> None:
        now = self._time()
        key = (info["stage"], info.get("step"))
        if key == self._stage and now - self._last < 2.0:
            return
        self._stage, self._last = key, now
        extra = f": {info['slices']:,} slices" if info.get("slices") else ""
        if info.get("length"):
            extra += f", complete up to {info['length']} items"
        if info.get("step"):  # the statistics' steps: what it is doing, of how many
            extra += f"; {info['step']} (step {int(info['fraction'] * info['steps'] + 1e-9) + 1} of {info['steps']})"
            if info.get("step_fraction") is not None:
                extra += f", {info['step_fraction']:.0%} done"
        print(f"{info['stage']}{extra}", file=sys.stderr, flush=True)


def _labelled(shown, rows, stats):
    """``shown`` (of a metric's ``stats``, at the positions of ``rows``) with its verdicts as the table
    shows them: 'worse · indicative' below n_min."""
    import pandas as pd

    from ..present.formats import verdict_label

    column = stats.column("verdict")
    if column not in shown or stats.verdict is None or stats.meets_min_size is None:
        return shown
    at = rows.index.to_numpy()
    verdicts, meets = (pd.Series(v).iloc[at].tolist() for v in (stats.verdict, stats.meets_min_size))
    return shown.assign(**{column: [verdict_label(v, None, None, ok) for v, ok in zip(verdicts, meets)]})


def _summary(table, top: int, keep: dict | None = None, sort_by: str | None = None) -> str:
    """The scan's summary for a person (:func:`divergence.cli.summary.scan_summary`)."""
    from .summary import scan_summary

    return scan_summary(table, top, keep, sort_by)


def _sorted_frame(table, sort_by: str):
    """The table's rows ordered by a column or a peer's score of the first metric, the whole dataset
    first (largest first; p- and q-values smallest first)."""
    import numpy as np

    from ..present.views import default_ascending
    from ..scores import sort_column

    sorted_table, col = sort_column(table, sort_by, None)
    frame = sorted_table.frame
    if col not in frame.columns:
        raise DivergenceInputError(f"Cannot sort by {sort_by!r}: not a column of the result, nor a score "
                                   "(sliceline, sliceline:ALPHA, wracc, lift).")
    rest = frame.iloc[1:].sort_values([col, "support"], ascending=[default_ascending(col), False],
                                      na_position="last", kind="stable")
    return frame.iloc[np.r_[0, frame.index.get_indexer(rest.index)]]


FORMULAS_HELP = ("write text cells and column names that start with = + - @, a tab or a carriage return as they "
                 "are; by default they get a leading apostrophe, so a spreadsheet shows them as text instead of "
                 "running them as formulas (numbers are never changed)")


def _write_csv(frame, path: str, args: argparse.Namespace | None = None) -> None:
    """A DataFrame or a ``pyarrow.Table`` as CSV (Parquet when the name ends in ``.parquet``),
    through a temporary file (never half a file); formula-like CSV text neutralised unless
    ``--allow-formulas``."""
    from ..present.table_output import write_table

    write_table(frame, path, neutralise_formulas=not getattr(args, "allow_formulas", False))


def _cmd_scan(args: argparse.Namespace) -> int:
    evaluate = None
    if args.evaluate:  # checked before the scan runs
        from ..stats.evaluate import parse_names

        evaluate = parse_names(args.evaluate)
    table = scan_from_args(args)
    # how the file was read and a budget that cut the scan are always said
    shown = set(getattr(args, "reader_notes", None) or [])
    if table.lattice.complete_length is not None:
        shown |= {n for n in table.notes if n.startswith(("Complete up to", TIME_CUT))}
    # what the bins are: fewer than asked (tied quantile edges), the rows a tree's cut points came from
    shown |= {n for n in table.notes if "bins asked" in n or n.startswith("Tree binning")}
    if not args.verbose:
        for note in table.notes:
            if note in shown:
                print(f"note: {note}", file=sys.stderr)
    if args.verbose:
        from ..present.formats import family_sentence

        for note in table.notes:
            print(f"note: {note}", file=sys.stderr)
        print(f"attributes: {', '.join(table.attributes)}", file=sys.stderr)
        a = table.assessment
        for m in table.metric_names:
            print(f"{m}: q-values: {family_sentence(a, m)}", file=sys.stderr)
            print(f"{m}: {a.min_size[m].text}", file=sys.stderr)
            if a.min_size[m].power_text:
                print(f"{m}: {a.min_size[m].power_text}", file=sys.stderr)
        if a.replication:
            print(f"replication: {a.replication}", file=sys.stderr)
    if args.save_plan:
        from ..report.plan import save_plan

        save_plan(plan_from_args(args), args.save_plan)
        print(f"saved the settings as a slice plan in {args.save_plan}", file=sys.stderr)
    pruning = args.prune is not None or args.min_t is not None
    if pruning:
        from ..explain.shapley import prune_redundant
    if args.output:
        # the whole table goes to CSV from its arrays, without building a DataFrame
        if args.sort_by:
            frame = _sorted_frame(table, args.sort_by)
            if pruning:
                frame = frame[frame["itemset"].isin(prune_redundant(table, args.prune, min_t=args.min_t)["itemset"])]
        else:
            frame = prune_redundant(table, args.prune, min_t=args.min_t) if pruning else table.to_arrow()
        _write_csv(frame, args.output, args)
        print(f"wrote {len(frame):,} rows to {args.output}", file=sys.stderr)
    else:
        if not args.verbose:
            for note in table.notes:
                if note not in shown:
                    print(f"note: {note}", file=sys.stderr)
        keep = {m: table.frame.index.isin(prune_redundant(table, args.prune, metric=m, min_t=args.min_t).index)
                for m in table.metric_names} if pruning else None
        print(_summary(table, args.top, keep, args.sort_by))
    if evaluate:
        from .summary import evaluation_summary

        print(evaluation_summary(table.evaluate(evaluate, bootstrap=200, seed=args.seed or 0)))
    return 0


def _add_explain_parser(sub) -> None:
    p = sub.add_parser("explain", conflict_handler="resolve",
                       help="Shapley contributions of a slice's items, or global item values")
    add_scan_options(p)
    p.add_argument("--itemset", help='the slice to explain, e.g. "age=<25, #prior=>3, sex=Male"')
    p.add_argument("--global", dest="global_values", action="store_true",
                   help="global Shapley value and individual divergence of every frequent item")
    p.add_argument("--output", "-o", help="write the table to this CSV file (Parquet when its name ends in .parquet)")
    p.add_argument("--allow-formulas", action="store_true", help=FORMULAS_HELP)
    p.add_argument("--bootstrap", type=int, default=0, metavar="B",
                   help="bootstrap replicates for intervals on the contributions (e.g. 200)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the bootstrap (default 0)")


def _cmd_explain(args: argparse.Namespace) -> int:
    """Explain the first metric of the scan: one slice's contributions, or global item values."""
    if bool(args.itemset) == bool(args.global_values):
        raise DivergenceInputError('explain needs either --itemset "attr=value, ..." or --global.')
    if args.global_values and args.bootstrap:
        raise DivergenceInputError("--bootstrap gives intervals on one slice's contributions: use it with --itemset.")
    import pandas as pd

    from ..explain.shapley import global_divergence, item_contributions

    scan_args = argparse.Namespace(**vars(args))
    scan_args.bootstrap = 0  # the slice table's own intervals are not shown here
    table = scan_from_args(scan_args)
    for note in _budget_notes(table.notes):
        print(f"note: {note}", file=sys.stderr)
    m = table.metric()
    if args.global_values:
        frame = global_divergence(table, metric=m.name)
        head = (f"{m.name} ({m.description}): global item divergence of {len(frame)} items over "
                f"{len(table) - 1:,} slices with support >= {table.support_text}")
    else:
        frame = item_contributions(table, args.itemset, metric=m.name, n_boot=args.bootstrap,
                                   seed=args.seed, level=getattr(args, "confidence", 0.95))
        a = frame.attrs
        head = (f"{a['itemset']}: {a['count']:,} rows (support {a['support']:.4g}); {m.name} divergence "
                f"{a['divergence']:+.4f} ({m.name} {table.overall(m.name) + a['divergence']:.4g}, "
                f"whole dataset {table.overall(m.name):.4g})")
        if args.bootstrap:
            head += (f"\n{a['level']:.0%} bootstrap intervals from {a['n_boot_used']} of {a['n_boot']} "
                     f"replicates (seed {args.seed}); divergence [{a['divergence_low']:+.4f}, "
                     f"{a['divergence_high']:+.4f}]")
    if args.output:
        _write_csv(frame, args.output, args)
        print(f"wrote {len(frame):,} rows to {args.output}", file=sys.stderr)
    else:
        print(head)
        with pd.option_context("display.width", 160, "display.max_rows", 500):
            print(frame.to_string(index=False))
    return 0


def _add_plan_parsers(sub) -> None:
    p = sub.add_parser("plan", help="write a slice plan (before looking at any errors) from scan options")
    add_scan_options(p, data=False)
    p.add_argument("--output", "-o", required=True, help="plan file: .yaml/.yml or .json")
    p.add_argument("--pre-registered", action="store_true",
                   help="mark the plan as written before the data was looked at")
    p.add_argument("--slice", action="append", metavar="ITEMSET",
                   help='a slice always reported, e.g. "age=<25, sex=Male" (repeatable)')
    add_settings(p.add_argument_group("comparison (a standing pre-release check: the report also compares the model "
                                      "with a reference)"), REFERENCE_OPTIONS)
    r = sub.add_parser("report", help="run a slice plan on a data file and write a self-contained HTML report")
    r.add_argument("plan", help="slice plan file (YAML or JSON)")
    r.add_argument("data", help="CSV or Parquet file to report on")
    r.add_argument("--previous", metavar="PREVIOUS_DATA",
                   help="the previous cycle's file: which findings held there, which are new")
    r.add_argument("--output", "-o", required=True, help="the HTML file to write")
    r.add_argument("--title", default=None, help="report title")
    r.add_argument("--top", type=_count, default=200, help="slices listed per metric (default 200)")
    r.add_argument("--sort", default=None, choices=list(REPORT_SORTS),
                   help="what each slice table is sorted by (default: lift shortfall for error metrics, "
                        "else divergence)")
    r.add_argument("--fail-on-worse", action="store_true",
                   help="with a comparison in the plan: exit with status 1 when a slice (or the whole dataset) is "
                        "worse than the reference (the report is written first)")


def _cmd_plan(args: argparse.Namespace) -> int:
    from ..report.plan import save_plan

    plan = plan_from_args(args, kind="pre-registered" if args.pre_registered else "exploratory")
    path = save_plan(plan, args.output)
    print(f"wrote the slice plan to {path}", file=sys.stderr)
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from ..report.plan import load_plan

    plan = load_plan(args.plan)  # first: a bad plan is refused before anything heavy is imported
    from ..data.io import read_table
    from ..report.page import build_report, write_report
    from ..report.run import run_comparison, run_plan

    libraries_loaded()
    df = read_table(args.data)
    previous_df = read_table(args.previous) if args.previous else None
    table = run_plan(plan, df, previous=previous_df)
    comparison = run_comparison(plan, df)
    if args.fail_on_worse and comparison is None:
        raise DivergenceInputError("--fail-on-worse needs a comparison: the plan has no compare section.")
    previous = run_plan(plan, previous_df) if previous_df is not None else None
    text = build_report(table, plan=plan, plan_label=str(args.plan), data_label=str(args.data),
                        data_modified=os.path.getmtime(args.data), previous=previous,
                        previous_label=str(args.previous) if args.previous else None,
                        top=args.top, title=args.title, sort_by=args.sort, comparison=comparison)
    write_report(text, args.output)
    for note in _budget_notes(table.notes):
        print(f"note: {note}", file=sys.stderr)
    print(f"wrote the report to {args.output}", file=sys.stderr)
    if comparison is not None:
        import numpy as np

        worse = {m: int((np.asarray(comparison.statistics(m).verdict) == "worse").sum())
                 for m in comparison.metric_names}
        print("comparison: " + ", ".join(f"{m}: {n:,} worse" for m, n in worse.items()), file=sys.stderr)
        if args.fail_on_worse and any(worse.values()):
            return 1
    return 0


# ----------------------------------------------------------------------------- compare

def _add_compare_parser(sub) -> None:
    p = sub.add_parser("compare", help="compare two models slice by slice: where is the model worse "
                                       "than the reference?")
    p.add_argument("data", help="CSV or Parquet file with both models' predictions")
    add_settings(p.add_argument_group("the models"),
                 ("target", "prediction", "reference", "score", "threshold", "reference_score", "reference_threshold",
                  "positive", "metrics", "regression"), required=("target",), help={
                     "prediction": "the model's predicted label or value",
                     "reference": "the reference model's (e.g. the one in production) predicted label or value",
                     "score": "the model's score, predicted positive when score >= --threshold",
                     "threshold": "the model's score threshold (default: 0.5 for a score within [0, 1], with a "
                                  "note; any other score needs one)",
                     "reference_threshold": "the reference's score threshold (default: --threshold; without it, "
                                            "0.5 for a score within [0, 1], any other needs one)",
                     "metrics": "comma-separated: error,fpr,fnr,accuracy,tpr,tnr,brier; with --regression "
                                "abs_error,squared_error",
                     "regression": "target and predictions are numbers"})
    add_settings(p.add_argument_group("slicing"), SLICING_OPTIONS)
    add_settings(p.add_argument_group("statistics"), ("delta", "confidence", "correction"), help={
        "delta": "smallest change worth acting on: a number, or M=D,M=D per metric (default 0.05 for a rate, "
                 "0.2 standard deviations of the reference's outcome otherwise)",
        "correction": "multiple-testing correction over every slice and metric (default %(default)s)"})
    p.add_argument("--output", "-o", help="write the comparison to this CSV file (Parquet when its name ends in .parquet)")
    p.add_argument("--allow-formulas", action="store_true", help=FORMULAS_HELP)
    p.add_argument("--top", type=_count, default=10, help="slices shown per metric without --output (default 10)")
    p.add_argument("--verbose", "-v", action="store_true", help="print what was decided and measured")
    p.add_argument("--save-plan", metavar="FILE", help="also save these settings as a slice plan with a compare "
                   "section, so `report` re-runs the comparison every cycle (a standing pre-release check)")


def compare_from_args(args: argparse.Namespace):
    """Read the data and run the comparison the options describe."""
    from ..comparison.compare import compare
    from ..data.io import read_table

    libraries_loaded()
    if args.prediction is None and args.score is None:
        raise DivergenceInputError("compare needs the model: --prediction COL, or --score COL --threshold T.")
    if args.reference is None and args.reference_score is None:
        raise DivergenceInputError("compare needs the reference model: --reference COL, or --reference-score COL "
                                   "--reference-threshold T.")
    settings = settings_from_args(args)  # checked before the data is read
    return compare(read_table(args.data), settings, **_progress_args(args))


def _compare_summary(c, top: int) -> str:
    import pandas as pd

    from ..comparison.compare import COMPARE_VERDICTS

    a = c.assessment
    lines = [f"{c.n_rows:,} rows ({a.rows_compared:,} compared), {len(c) - 1:,} slices with support >= "
             f"{c.table.support_text}; model '{a.model}' against reference '{a.reference}'; "
             f"{c.n_tested:,} tests ({a.family}), correction {a.correction}"]
    with pd.option_context("display.width", 160, "display.max_colwidth", 60):
        for m in c.metrics:
            h = c.headline(m.name)
            lines.append("")
            lines.append(f"{m.name} ({m.description}; {m.worse_when} is worse): model {h['model']:.4g}, "
                         f"reference {h['reference']:.4g}, change {h['change']:+.4g} "
                         f"[{h['change_low']:+.4g}, {h['change_high']:+.4g}], whole dataset: {h['verdict']}")
            lines.append("slices: " + ", ".join(f"{n:,} {v}" for v, n in h["verdicts"].items()))
            stats = c.statistics(m.name)
            cols = ["itemset", "count"] + [stats.column(k)
                                           for k in ("value", "reference", "change", "change_q", "verdict")]
            large_enough = tuple(v for v in COMPARE_VERDICTS if v != "too small")
            rows = c.top(top, metric=m.name, min_length=1, verdict=large_enough)
            n_min = a.min_size[m.name].n_min
            lines.append(f"the {len(rows)} slices where the model is worst against the reference (the too small left "
                         f"out: below n_min = {f'{n_min:,}' if n_min is not None else 'more than the rows'} and neither "
                         "significant nor within ±δ):")
            shown = _labelled(rows[cols], rows, stats)
            lines.append(shown.to_string(index=False) if len(rows) else "(none)")
    return "\n".join(lines)


def _budget_notes(notes) -> list[str]:
    """The notes saying the budget (or the time limit) cut a scan: always printed."""
    return [n for n in notes if n.startswith(("Complete up to", TIME_CUT))]


def _cmd_compare(args: argparse.Namespace) -> int:
    c = compare_from_args(args)
    if args.verbose or not args.output:
        for note in c.notes:
            print(f"note: {note}", file=sys.stderr)
    else:
        for note in _budget_notes(c.notes):
            print(f"note: {note}", file=sys.stderr)
    if args.verbose:
        a = c.assessment
        print(f"attributes: {', '.join(c.table.attributes)}", file=sys.stderr)
        print(f"{c.n_tested:,} tests in one family ({a.family}), correction {a.correction}", file=sys.stderr)
        for m in c.metric_names:
            print(f"{m}: {a.test[m]}; interval: {a.interval[m]}", file=sys.stderr)
            print(f"{m}: {a.min_size[m].text}", file=sys.stderr)
            if a.min_size[m].power_text:
                print(f"{m}: {a.min_size[m].power_text}", file=sys.stderr)
    if args.save_plan:
        from ..report.plan import save_plan

        save_plan(plan_from_args(args), args.save_plan)
        print(f"saved the settings as a slice plan in {args.save_plan}", file=sys.stderr)
    if args.output:
        _write_csv(c.frame, args.output, args)
        print(f"wrote {len(c.frame):,} rows to {args.output}", file=sys.stderr)
    else:
        print(_compare_summary(c, args.top))
    return 0


COMMANDS = {"scan": _cmd_scan, "explain": _cmd_explain, "plan": _cmd_plan, "report": _cmd_report,
            "compare": _cmd_compare}


def _prog() -> str:
    """How the command was called: ``divergence`` (the console command) or ``python -m divergence``."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return "python -m divergence" if name in ("__main__.py", "-c", "-m", "") else name


def console() -> None:
    """The ``divergence`` console command (and ``python -m divergence``): until the command sets its own
    handlers, a signal ends it with one line (:func:`divergence.cli.starting.stopped_while_starting`)."""
    from .starting import catch_while_starting

    catch_while_starting()
    # Arrow's buffers (text columns, the CSV writer's blocks) from the C allocator numpy uses: Arrow's
    # own pool (mimalloc) keeps the pages it frees, 45 MiB more at an Adult scan's peak. Read when
    # pyarrow first allocates, so set before anything imports it; a user's own choice stands.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    pause_collector()  # while the libraries load (divergence.cli.process)
    end_process(main(prog=_prog()))  # without the interpreter's teardown (0.1 s of CPU after a scan)


class _Stopped(BaseException):
    """A termination signal (SIGTERM, SIGHUP) raised where the command was: the file being written
    is removed on the way out (a BaseException, so no ``except Exception`` swallows it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_stopped(signum, frame) -> None:
    raise _Stopped(signum)


def _load_libraries() -> None:
    """numpy (and datetime with it), imported before the command's handlers raise. Its import, unlike
    pandas' or pyarrow's, runs Python code inside C (PyCapsule_Import of datetime) and turns an
    exception raised there into its own ImportError. pandas stays imported when a command needs it:
    a plan refused at once never loads it (the hostile-files tests bound that run's memory)."""
    import numpy  # noqa: F401


def _catch_signals() -> dict:
    """SIGTERM and SIGHUP raise :class:`_Stopped` (SIGINT raises KeyboardInterrupt already), so a
    command stopped by ``timeout``, a CI cancellation or ``docker stop`` cleans up and says so;
    returns the handlers it replaced. Only the main thread can set them (elsewhere: nothing)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return {}
    old = {}
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            old[sig] = signal.signal(sig, _raise_stopped)
    old[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)  # KeyboardInterrupt, said below
    return old


#: the longest error line printed: a value nobody cut (a plan's 900 KB name) is cut here
MAX_LINE = 1_000


def _count(text: str) -> int:
    """A count of rows to show: a whole number of 0 or more."""
    import argparse

    try:
        k = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if k < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {k}")
    return k


def _one_line(text: object) -> str:
    """A message on one line (a user's value may hold line breaks), cut to :data:`MAX_LINE`."""
    line = " ".join(str(text).split("\n")).replace("\r", " ").strip()
    if len(line) > MAX_LINE:
        line = f"{line[:MAX_LINE]}… ({len(line) - MAX_LINE:,} more characters)"
    return line


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning of a library as one line, ``divergence: warning: ...`` (no source path and line)."""
    print(f"divergence: warning: {_one_line(message)}", file=sys.stderr)


def main(argv: Sequence[str] | None = None, prog: str = "divergence") -> int:
    """Entry point; returns the exit status: 0, 1 (``report --fail-on-worse`` found a worse
    slice), 2 (bad input, a file that cannot be written, out of memory: one line), 130 (SIGINT),
    143 (SIGTERM) or 129 (SIGHUP); a stopped command leaves no half-written file."""
    import signal

    parser = build_parser(prog)
    old: dict = {}
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Inert(sys.stdout), Inert(sys.stderr)
    import warnings

    caught = warnings.catch_warnings()
    caught.__enter__()
    # a warning is one line without a source path; the time limit's is printed as a note already
    warnings.showwarning = _one_line_warning
    warnings.filterwarnings("ignore", category=DivergenceTimeLimitWarning)
    try:
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help()
            return 2
        # numpy is imported before the command's handlers raise: a signal inside its import turned into
        # numpy's ImportError ("PyCapsule_Import could not import module datetime"); while it loads, a
        # signal keeps the start-up handler's one line
        _load_libraries()
        old = _catch_signals()
        refuse_output_over_input(args)
        with asking(free_cores()):  # a command asks for every core (the library alone uses one process)
            return COMMANDS[args.command](args)
    except DivergenceInputError as exc:
        print(f"divergence: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except MemoryError:
        print("divergence: error: out of memory: raise the support, limit items per slice (--max-length), choose "
              "fewer attributes, or scan with --engine duckdb.", file=sys.stderr)
        return 2
    except OSError as exc:  # a file that cannot be read or written: the reason, not a traceback
        where = f" '{exc.filename}'" if getattr(exc, "filename", None) else ""
        print(f"divergence: error: cannot use{where}: {_one_line(exc.strerror or exc)}.", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("divergence: interrupted (SIGINT); no partial file was left.", file=sys.stderr)
        return 130
    except _Stopped as exc:
        name = signal.Signals(exc.signum).name
        print(f"divergence: stopped ({name}); no partial file was left.", file=sys.stderr)
        return 128 + exc.signum
    finally:
        caught.__exit__(None, None, None)
        sys.stdout, sys.stderr = streams
        for sig, handler in old.items():
            signal.signal(sig, handler)
