"""The worlds of issue 43, for the distinct findings as the terms of a fitted model: the rates
``benchmarks/validation/sim_model.py`` prints (docs/statistics.md, "Distinct findings").

- correlated worlds (:func:`divergence.simulate.correlated_world`): every planted cohort on screen
  (a finding, or tied with one), names per finding, findings naming no cohort, the look-low slice;
- ``hetero``: a regression with a hard cohort ``h=v0`` (20% of rows, three times the target's
  noise) beside a defect ``k=v2`` (15% of rows, the prediction off by +1.0), for absolute and
  squared error;
- ``wide``: a null world of 32 attributes of 8 to 12 values each, nothing planted.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["hetero_world", "wide_null_world", "model_run", "model_summary"]


def hetero_world(seed: int, *, n: int = 10_000):
    """A regression y = x + N(0, σ²), σ = 3 in the hard cohort ``h=v0`` (20% of rows) and 1 elsewhere;
    the model predicts x, plus 1.0 in the defect ``k=v2`` (15% of rows); four other random attributes.
    Returns ``(data, scan keyword arguments, {"defect": ..., "hard": ...})``."""
    rng = np.random.default_rng([seed, 43])
    h = rng.choice(4, n, p=[0.2, 0.3, 0.25, 0.25])
    k = rng.choice(4, n, p=[0.35, 0.3, 0.15, 0.2])
    df = pd.DataFrame({"h": np.array(["v0", "v1", "v2", "v3"])[h], "k": np.array(["v0", "v1", "v2", "v3"])[k]})
    for a, size in zip("abcd", (2, 3, 4, 5)):
        df[a] = np.array([f"{a}{i}" for i in range(size)])[rng.integers(0, size, n)]
    x = rng.normal(size=n)
    df["y"] = x + rng.normal(size=n) * np.where(h == 0, 3.0, 1.0)
    df["pred"] = x + np.where(k == 2, 1.0, 0.0)
    kw = dict(target="y", prediction="pred", regression=True, metrics=["abs_error", "squared_error"],
              attributes=["h", "k", "a", "b", "c", "d"])
    return df, kw, {"defect": "k=v2", "hard": "h=v0"}


def wide_null_world(seed: int, *, n: int = 10_000):
    """Nothing planted: a classifier's FPR at 0.10 on every row, 32 attributes of 8 to 12 values."""
    rng = np.random.default_rng([seed, 4343])
    cols = {}
    for a in range(32):
        size = int(rng.integers(8, 13))
        cols[f"w{a}"] = np.array([f"v{i}" for i in range(size)])[rng.integers(0, size, n)]
    df = pd.DataFrame(cols)
    y = rng.random(n) < 0.3
    df["y"] = np.where(y, "yes", "no")
    df["pred"] = np.where(np.where(y, rng.random(n) < 0.7, rng.random(n) < 0.10), "yes", "no")
    return df, dict(target="y", prediction="pred", positive="yes", metrics=["fpr"],
                    attributes=list(cols)), {}


def _ties(frame: pd.DataFrame, metric: str) -> dict:
    found = frame[frame[f"{metric}_finding"].astype(bool)]
    return {str(s): [x for x in str(a).split(" | ") if x] for s, a in zip(found["itemset"], found[f"{metric}_alias"])}


def model_run(kind: str, seed: int, *, n: int = 10_000) -> dict:
    """One seeded run: ``two``/``three`` (correlated worlds, min support 0.01), ``hetero`` (each of
    absolute and squared error), ``wide`` (min support 0.01), ``null`` (the correlated null)."""
    from .scan import scan
    from .simulate import correlated_run

    if kind in ("two", "three", "null"):
        return correlated_run(kind, seed, n=n)
    if kind == "hetero":
        df, kw, info = hetero_world(seed, n=n)
        table = scan(df, min_support=0.01, bootstrap=0, **kw)
        f = table.frame
        out = {"kind": kind, "seed": seed, "n": n}
        for m in ("abs_error", "squared_error"):
            ties = _ties(f, m)
            fin = f[f[f"{m}_finding"].astype(bool)]
            inside = [str(s) for s, v in zip(fin["itemset"], fin[f"{m}_verdict"])
                      if "k=v2" in str(s).split(", ") and v == "better"]
            out[m] = {"ties": ties, "better_inside": inside,
                      "on_screen": any(s == info["defect"] or info["defect"] in t for s, t in ties.items())}
        return out
    if kind == "wide":
        df, kw, _ = wide_null_world(seed, n=n)
        table = scan(df, min_support=0.01, bootstrap=0, **kw)
        return {"kind": kind, "seed": seed, "n": n, "findings": list(_ties(table.frame, "fpr"))}
    raise ValueError(f"unknown kind {kind!r}")


def model_summary(runs: list) -> list:
    """The rates of :func:`model_run` results, each ``(setting, runs, value, target, meets)``."""
    out = []
    by: dict = {}
    for r in runs:
        by.setdefault((r["kind"], r["n"]), []).append(r)
    for (kind, n), rs in sorted(by.items()):
        where = f"{kind}, {n:,} rows"
        if kind in ("null", "wide"):
            anyf = float(np.mean([bool(r["findings"]) for r in rs]))
            out.append((f"{where}: any finding", len(rs), anyf, "≤ 0.05", anyf <= 0.05))
            continue
        if kind == "hetero":
            for m in ("abs_error", "squared_error"):
                on = float(np.mean([r[m]["on_screen"] for r in rs]))
                out.append((f"{where}, {m}: the defect on screen", len(rs), on, "≥ 0.95", on >= 0.95))
                bad = float(np.mean([bool(r[m]["better_inside"]) for r in rs]))
                out.append((f"{where}, {m}: a finding inside the defect called better", len(rs), bad, "0",
                            bad == 0))
            continue
        shown = [c in r["ties"] or any(c in t for t in r["ties"].values()) for r in rs for c in r["cohorts"]]
        out.append((f"{where}: planted cohorts on screen (of cohort-runs)", len(shown), float(np.mean(shown)),
                    "≥ 0.95", float(np.mean(shown)) >= 0.95))
        names = [1 + len(t) for r in rs for t in r["ties"].values()]
        mean_names = float(np.mean(names)) if names else 0.0
        out.append((f"{where}: names per finding", len(names), mean_names, "≤ 1.5", mean_names <= 1.5))
        stray = float(np.mean([any(s not in r["cohorts"] and not set(t) & set(r["cohorts"])
                                   for s, t in r["ties"].items()) for r in rs]))
        out.append((f"{where}: a finding naming no cohort, tied to none", len(rs), stray, "≤ 0.05", stray <= 0.05))

        def off(r, c):
            return c not in r["ties"] and not any(c in t for t in r["ties"].values())

        low = float(np.mean([r["look_low"] in r["ties"] and any(off(r, c) for c in r["cohorts"][:2]) for r in rs]))
        out.append((f"{where}: look-low slice a finding, a lifting cohort off screen", len(rs), low, "0", low == 0))
    return out
