"""The command-line runs whose slice tables are kept in tests/golden/ (see test_golden.py).

Regenerate only on purpose, when an issue changes what the tables hold:
``python tests/golden_cases.py`` writes tests/golden/*.csv.gz and screens.json.
"""
from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
DEMO_CLS = ["--target", "defaulted", "--prediction", "predicted_default", "--positive", "yes"]

#: name -> (data file: "demo", "demo_models" or a shared dataset's name, CLI arguments after DATA)
CASES = {
    "demo_classification": ("demo", ["scan", *DEMO_CLS, "--metric", "fpr,fnr,error",
                                     "--min-support", "0.05", "--bootstrap", "200"]),
    "demo_regression": ("demo", ["scan", "--regression", "--target", "spend", "--prediction", "predicted_spend",
                                 "--metric", "abs_error,squared_error", "--min-support", "0.05"]),
    "demo_ranking": ("demo", ["scan", "--rank-by", "predicted_spend", "--gamma", "dcg", "--min-support", "0.05"]),
    "demo_compare": ("demo_models", ["compare", "--target", "defaulted", "--prediction", "predicted_default",
                                     "--reference", "previous_default", "--positive", "yes",
                                     "--metric", "error,fpr,fnr", "--min-support", "0.05"]),
    "compas_exhaustive": ("compas_discretized.csv", ["scan", "--target", "class", "--prediction", "predicted",
                                                     "--positive", "1", "--metric", "fpr,fnr",
                                                     "--min-support", "0.01", "--exhaustive"]),
    "adult": ("adult_discretized.csv", ["scan", "--target", "class", "--prediction", "predicted",
                                        "--positive", "1", "--metric", "fpr,fnr,error", "--min-support", "0.1"]),
}

#: raw files whose default attributes are kept: name -> roles given to screen_attributes
SCREENS = {
    "compas-scores-two-years.csv": dict(target="two_year_recid", score="decile_score", threshold=8),
    "law_data.csv": dict(target="ZFYA"),
}


def data_path(kind: str, folder: Path, data_dir: Path) -> Path:
    """The case's input file (the built-in data written to ``folder`` first)."""
    if kind in ("demo", "demo_models"):
        from divergence.data.datasets import load_demo, load_demo_models

        path = folder / f"{kind}.csv"
        if not path.exists():
            (load_demo() if kind == "demo" else load_demo_models()).to_csv(path, index=False)
        return path
    return data_dir / kind


def run_case(name: str, folder: Path, data_dir: Path) -> Path:
    """Run one case through the command line's entry point; the path of its CSV."""
    from divergence.cli.cli import main

    kind, args = CASES[name]
    out = folder / f"{name}.csv"
    status = main([args[0], str(data_path(kind, folder, data_dir)), *args[1:], "--output", str(out)])
    if status != 0:
        raise RuntimeError(f"case {name} exited {status}")
    return out


def screens(data_dir: Path) -> dict:
    """Default attributes and the reason for each column left out, per raw file."""

    from divergence import screen_attributes
    from divergence.data.io import read_table

    out = {}
    for name, roles in SCREENS.items():
        df = read_table(data_dir / name)
        used = [c for c in (roles.get("target"), roles.get("score"), roles.get("prediction")) if c]
        s = screen_attributes(df, used, target=roles.get("target"), prediction=roles.get("prediction"),
                              score=roles.get("score"), **({"threshold": roles["threshold"]} if "threshold" in roles else {}))
        out[name] = {"attributes": list(s.attributes), "left_out": dict(s.left_out), "kinds": dict(s.kinds)}
    return out


if __name__ == "__main__":  # pragma: no cover - run by hand
    import gzip
    import os
    import shutil
    import tempfile

    data_dir = Path(os.environ.get("DIVERGENCE_DATA", HERE.parent.parent / "shared" / "data"))
    GOLDEN.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            path = run_case(case, Path(tmp), data_dir)
            with open(path, "rb") as src, gzip.GzipFile(GOLDEN / f"{case}.csv.gz", "wb", mtime=0) as dst:
                shutil.copyfileobj(src, dst)
            print(f"wrote {case}")
    (GOLDEN / "screens.json").write_text(json.dumps(screens(data_dir), indent=1, sort_keys=True) + "\n")
    print("wrote screens.json")
