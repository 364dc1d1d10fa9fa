"""The attribute screen's false positives on tables with no leaking column (issue 44): every way in
(a prediction column, a score, a fitted model, an outcome alone) on Adult, the built-in data and a wide
synthetic table, counting the real attributes the measured rules leave out (leakage, another model, after
the outcome, near copy); and the true positives on raw COMPAS and the law school data.

    .venv/bin/python benchmarks/validation/screen_false_positives.py [--rows 20000] [--wide 300]

Prints one Markdown row per table and way in (docs/discretization.md, "Default attributes", quotes them).
"""
from __future__ import annotations

import argparse
import os
import runpy
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence

from divergence.data.columns import screen  # noqa: E402
from divergence.data.datasets import load_demo  # noqa: E402
from divergence.data.io import load_table  # noqa: E402
from divergence.prepare.model_outputs import apply_models  # noqa: E402
from divergence.settings import Settings  # noqa: E402

DATA = Path(os.environ.get("DIVERGENCE_DATA", ROOT.parent / "shared" / "data"))
MEASURED = ("leakage", "another model", "after the outcome", "near copy")


def _screen(df: pd.DataFrame, keywords: dict) -> tuple[pd.DataFrame, object, float]:
    run = apply_models(df, keywords)
    st = Settings.resolve(None, run.keywords)
    started = time.process_time()  # CPU seconds: the machine is shared
    found = screen(run.data, st.roles.columns(), **st.roles.screen_keywords())[0]
    return run.data, found, time.process_time() - started


def row(data: str, way: str, df: pd.DataFrame, keywords: dict, real: list[str]) -> dict:
    """The screen of ``df`` entered by ``keywords``: which of the ``real`` attributes a measured rule lost."""
    seen, found, seconds = _screen(df, keywords)
    real = [c for c in real if c in seen.columns]
    lost = [c for c in real if found.kinds.get(c) in MEASURED]
    return dict(data=data, way_in=way, rows=f"{len(df):,}", real_attributes=len(real), lost=len(lost),
                lost_columns=", ".join(f"{c} ({found.kinds[c]})" for c in lost) or "-", cpu_seconds=f"{seconds:.1f}")


def wide_table(n: int, width: int, seed: int = 0) -> tuple[pd.DataFrame, list[str]]:
    """A wide table of genuine attributes: independent and correlated numbers (groups sharing a latent
    factor), 1-10 ratings, categories and flags; a binary target and a numeric outcome that depend on a
    few of them; no column derived from the target."""
    rng = np.random.default_rng(seed)
    cols: dict[str, np.ndarray] = {}
    latent = rng.normal(size=(n, max(1, width // 20)))
    k = 0
    while len(cols) < width:
        kind = k % 5
        if kind == 0:
            cols[f"num{k}"] = rng.normal(size=n) * rng.uniform(0.5, 20) + rng.uniform(-5, 50)
        elif kind == 1:  # two to four columns sharing a latent factor (correlation 0.5 to 0.9)
            f = latent[:, k % latent.shape[1]]
            w = rng.uniform(0.7, 3.0)
            cols[f"corr{k}"] = f * w + rng.normal(size=n)
        elif kind == 2:
            cols[f"rating{k}"] = np.clip(np.round(5.5 + 2 * latent[:, (k + 1) % latent.shape[1]]
                                                  + 1.5 * rng.normal(size=n)), 1, 10)
        elif kind == 3:
            levels = int(rng.integers(3, 9))
            cols[f"cat{k}"] = np.array([f"c{i}" for i in range(levels)])[rng.integers(0, levels, n)]
        else:
            cols[f"flag{k}"] = (rng.random(n) < rng.uniform(0.05, 0.5)).astype(int)
        k += 1
    df = pd.DataFrame(cols)
    real = list(df.columns)
    numeric = [c for c in real if not c.startswith("cat")]
    drivers = numeric[:12]
    z = sum(rng.normal() * (df[c] - df[c].mean()) / df[c].std() for c in drivers) / 3
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(int)
    df["outcome"] = z + rng.normal(size=n)
    return df, real


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000, help="rows of the wide synthetic table")
    parser.add_argument("--wide", type=int, default=300, help="attributes of the wide synthetic table")
    args = parser.parse_args()
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    table: list[dict] = []
    # ---- the built-in data (load_demo): every way in
    demo = load_demo()
    real = ["age", "sex", "region", "education", "employment", "channel", "income"]
    cls = dict(target="defaulted", positive="yes", metrics=["fpr"])
    table.append(row("built-in", "prediction", demo, dict(cls, prediction="predicted_default"), real))
    table.append(row("built-in", "score", demo, dict(cls, score="default_score", threshold=0.5), real))
    feats = ["age", "income"]
    lr = LogisticRegression(max_iter=1000).fit(demo[feats], demo["defaulted"])
    table.append(row("built-in", "fitted model (age, income)", demo, dict(cls, model=lr, features=feats,
                                                                         threshold=0.5), real))
    table.append(row("built-in", "regression prediction", demo, dict(target="spend", prediction="predicted_spend",
                                                                     regression=True), real))
    table.append(row("built-in", "outcome alone (spend)", demo, dict(outcome=["spend"]), real))
    table.append(row("built-in", "outcome alone (income)", demo, dict(outcome=["income"]), real))
    # ---- Adult
    if DATA.is_dir():
        adult = pd.read_csv(DATA / "adult_discretized.csv")
        real = [c for c in adult.columns if c not in ("class", "predicted")]
        a_cls = dict(target="class", positive=1, metrics=["fpr"])
        table.append(row("Adult", "prediction", adult, dict(a_cls, prediction="predicted"), real))
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.preprocessing import OrdinalEncoder

        boosted = make_pipeline(make_column_transformer((OrdinalEncoder(), real)),
                                HistGradientBoostingClassifier(max_iter=30, random_state=0,
                                                               categorical_features="from_dtype"))
        boosted.fit(adult[real], adult["class"])
        scored = adult.assign(score=boosted.predict_proba(adult[real])[:, 1])
        table.append(row("Adult", "score (a boosted model's, on all 11)", scored,
                         dict(a_cls, score="score", threshold=0.5), real))
        a_feats = real[:5]
        pipe = make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown="ignore"), a_feats)),
                             LogisticRegression(max_iter=1000)).fit(adult[a_feats], adult["class"])
        table.append(row("Adult", f"fitted model ({', '.join(a_feats)})", adult,
                         dict(a_cls, model=pipe, features=a_feats, threshold=0.5), real))
        table.append(row("Adult", "fitted model, labels", adult, dict(a_cls, model=pipe, features=a_feats), real))
        full = make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown="ignore"), real)),
                             LogisticRegression(max_iter=1000)).fit(adult[real], adult["class"])
        table.append(row("Adult", "fitted model (all 11 attributes)", adult,
                         dict(a_cls, model=full, features=real, threshold=0.5), real))
        table.append(row("Adult", "outcome alone (class)", adult, dict(outcome=["class"]), real))
    # ---- the wide synthetic table (--wide 0: none)
    wide, real = wide_table(args.rows, max(args.wide, 1))
    w_cls = dict(target="y", positive=1, metrics=["fpr"])
    w_feats = [c for c in real if not c.startswith("cat")][:6]  # half of the target's drivers
    wlr = LogisticRegression(max_iter=1000).fit(wide[w_feats], wide["y"])
    wide["score"] = wlr.predict_proba(wide[w_feats])[:, 1]
    wide["pred"] = (wide["score"] >= 0.5).astype(int)
    name = f"wide synthetic ({args.wide} attributes)"
    ways = [] if args.wide == 0 else ["score", "prediction", "fitted model", "outcome alone (numeric)",
                                      "outcome alone (binary)"]
    if "score" in ways:
        table.append(row(name, "score", wide, dict(w_cls, score="score", threshold=0.5), real))
    if ways:
        table.append(row(name, "prediction", wide, dict(w_cls, prediction="pred"), real))
        table.append(row(name, "fitted model", wide.drop(columns=["score", "pred"]),
                     dict(w_cls, model=wlr, features=w_feats, threshold=0.5), real))
        table.append(row(name, "outcome alone (numeric)", wide.drop(columns=["score", "pred", "y"]),
                     dict(outcome=["outcome"]), real))
        table.append(row(name, "outcome alone (binary)", wide.drop(columns=["score", "pred", "outcome"]),
                     dict(outcome=["y"]), real))
    frame = pd.DataFrame(table)
    print("| " + " | ".join(frame.columns) + " |")
    print("|" + "---|" * len(frame.columns))
    for r in frame.itertuples(index=False):
        print("| " + " | ".join(str(v) for v in r) + " |")
    if DATA.is_dir():  # the true positives (issue 44's cases)
        raw = load_table(DATA / "compas-scores-two-years.csv").frame
        c_feats = ["age", "priors_count", "juv_fel_count", "juv_misd_count", "juv_other_count"]
        clr = LogisticRegression(max_iter=1000).fit(raw[c_feats], raw["two_year_recid"])
        _, found, _ = _screen(raw, dict(target="two_year_recid", positive=1, metrics=["fpr"], model=clr,
                                        features=c_feats, threshold=0.5))
        print("\nraw COMPAS, fitted model: attributes", found.attributes)
        law = load_table(DATA / "law_data.csv").frame
        for y in ("ZFYA", "first_pf"):
            _, found, _ = _screen(law, dict(outcome=[y]))
            print(f"law_data, outcome {y}: attributes", found.attributes)


if __name__ == "__main__":
    main()
