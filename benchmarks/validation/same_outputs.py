"""The proof that a move of files changed no output: the command line's output files (scan,
explain, compare, plan, report) and every figure (its Plotly JSON and its PNG) written by two
checkouts, compared byte for byte after the parts that must differ (paths, times, plot ids) are
masked; with ../shared/data, also the exhaustive Adult scan, Adult through DuckDB and raw COMPAS.
Prints one line per file.

    python benchmarks/validation/same_outputs.py /path/to/old/checkout            # against this checkout
    python benchmarks/validation/same_outputs.py OLD NEW
"""
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
MASKS = [(re.compile(rb"/tmp/[\w./-]*?/out_[ab]"), b"OUT"),
         (re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), b"UUID"),
         (re.compile(rb"20[0-9]{2}-[0-9]{2}-[0-9]{2}[T ][0-9:]+Z?( UTC)?"), b"TIME"),
         (re.compile(rb"sha[0-9a-f]{64}"), b"HASH")]


def masked(path: Path) -> bytes:
    data = path.read_bytes()
    for pattern, text in MASKS:
        data = pattern.sub(text, data)
    return data


def compare(old: Path, new: Path) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        outs = {}
        for label, root in (("a", old), ("b", new)):
            outs[label] = Path(tmp) / f"out_{label}"
            # each checkout's package imported first (PYTHONPATH), whichever is installed
            subprocess.run([sys.executable, __file__, "--write", str(root), str(outs[label])], check=True,
                           cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, stdout=subprocess.DEVNULL)
        names = sorted(p.name for p in outs["a"].iterdir())
        differ = [n for n in names if masked(outs["a"] / n) != masked(outs["b"] / n)]
        print(f"{'file':28} same")
        for n in names:
            print(f"{n:28} {'no' if n in differ else 'yes'}")
        print(f"{len(names) - len(differ)} of {len(names)} files the same ({old} -> {new})")
        return 1 if differ else 0


def write(root: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    os.chdir(root)
    py = sys.executable
    demo = out / "demo.csv"
    from divergence.data.datasets import DEMO_ROLES, load_demo, load_demo_models
    load_demo().to_csv(demo, index=False)
    two = out / "two.csv"
    load_demo_models().to_csv(two, index=False)
    c = DEMO_ROLES["classification"]
    r = DEMO_ROLES["regression"]
    def run(*args):
        p = subprocess.run([py, "-m", "divergence", *map(str, args)], capture_output=True, text=True, cwd=root)
        assert p.returncode == 0, (args, p.stderr)
        return p.stdout
    def cls_args():
        a = []
        for k in ("target", "prediction", "score", "threshold", "positive"):
            if c.get(k) is not None:
                a += [f"--{k}", str(c[k])]
        return a + ["--metric", ",".join(c.get("metrics", ["fpr", "fnr"]))]
    def reg_args():
        a = []
        for k in ("target", "prediction"):
            a += [f"--{k}", str(r[k])]
        return a + ["--regression", "--metric", ",".join(r.get("metrics", ["abs_error"]))]
    (out / "scan_cls.txt").write_text(run("scan", demo, *cls_args(), "--min-support", "0.02", "-o", out / "scan_cls.csv"))
    (out / "scan_reg.txt").write_text(run("scan", demo, *reg_args(), "--min-support", "0.03", "--bootstrap", "50", "-o", out / "scan_reg.csv"))
    (out / "scan_sum.txt").write_text(run("scan", demo, *cls_args(), "--min-support", "0.05", "--scores", "sliceline,wracc", "--top", "15"))
    (out / "explain.txt").write_text(run("explain", demo, *cls_args(), "--min-support", "0.05", "--itemset", "region=South", "-o", out / "explain.csv"))
    (out / "scan_holdout.txt").write_text(run("scan", demo, *cls_args(), "--min-support", "0.03", "--holdout", "0.5",
                                              "-o", out / "scan_holdout.csv"))
    data = Path(os.environ.get("DIVERGENCE_DATA", HERE.parent / "shared" / "data"))
    if (data / "adult_discretized.csv").exists():  # the real files: the exhaustive Adult scan, DuckDB, raw COMPAS
        adult = ["--target", "class", "--prediction", "predicted", "--positive", "1", "--metric", "fpr,fnr"]
        (out / "adult.txt").write_text(run("scan", data / "adult_discretized.csv", *adult, "--min-support", "0.005",
                                           "--exhaustive", "-o", out / "adult.csv"))
        (out / "adult_duckdb.txt").write_text(run("scan", data / "adult_discretized.csv", *adult, "--min-support",
                                                  "0.02", "--engine", "duckdb", "-o", out / "adult_duckdb.csv"))
        (out / "compas_raw.txt").write_text(run("scan", data / "compas-scores-two-years.csv", "--target",
                                                "two_year_recid", "--score", "decile_score", "--threshold", "8",
                                                "--positive", "1", "--metric", "fpr,fnr", "--min-support", "0.02",
                                                "-o", out / "compas_raw.csv"))
    else:
        print(f"(the real files skipped: {data} not found)", file=sys.stderr)
    run("plan", *cls_args(), "--min-support", "0.05", "-o", out / "plan.yaml")
    run("report", out / "plan.yaml", demo, "-o", out / "report.html", "--title", "T")
    # figures
    from divergence import compare, scan
    from divergence.present import figures, views
    try:  # the slice view's figures and the export moved out of views (issue 29: views split by job)
        from divergence.present import export
    except ImportError:
        export = views
    drawn = figures if hasattr(figures, "interval_figure") else views
    try:
        from divergence.present import compare_views as cv
    except ImportError:
        from divergence.comparison import compare_views as cv
    from divergence.explain.shapley import global_divergence, item_contributions
    t = scan(load_demo(), **c, min_support=0.03, bootstrap=100, seed=0)
    figs = {}
    top = t.top(20, metric="fpr")
    try:
        figs["interval"] = drawn.interval_figure(t, top, "fpr")
    except Exception as e:
        print("interval", e)
    try:
        figs["table"] = drawn.slice_table_figure(views.display_frame(t, top, "fpr"))
    except Exception as e:
        print("table", e)
    first = top["itemset"].iloc[1] if top["itemset"].iloc[0] == "" else top["itemset"].iloc[0]
    figs["contribution"] = figures.contribution_figure(item_contributions(t, first, metric="fpr"))
    figs["item_values"] = figures.item_values_figure(global_divergence(t, metric="fpr"), metric="fpr")
    figs["lattice"] = figures.lattice_figure(t, first, metric="fpr")
    comparison = compare(load_demo_models(), target="defaulted", prediction="predicted_default", reference="previous_default",
                  positive="yes", metrics=["error", "fpr"], min_support=0.05)
    (out / "compare_cli.txt").write_text(run("compare", two, "--target", "defaulted", "--prediction", "predicted_default",
                                            "--reference", "previous_default", "--positive", "yes", "--metric", "error,fpr",
                                            "--min-support", "0.05", "-o", out / "compare.csv"))
    crows = comparison.frame.head(15)
    try:
        figs["change_interval"] = cv.change_interval_figure(comparison, crows, "error")
        figs["compare_table"] = cv.compare_table_figure(cv.compare_display_frame(comparison, crows, "error"))
    except Exception as e:
        print("compare figs", repr(e))
    for name, fig in figs.items():
        (out / f"fig_{name}.json").write_text(fig.to_json())
        try:
            (out / f"fig_{name}.png").write_bytes(export.figure_png(fig))
        except Exception as e:
            print("png", name, e)


if __name__ == "__main__":
    if sys.argv[1] == "--write":
        write(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        sys.exit(compare(Path(sys.argv[1]).resolve(), Path(sys.argv[2] if len(sys.argv) > 2 else HERE).resolve()))
