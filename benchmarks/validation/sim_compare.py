"""How often does ``compare`` raise a false alarm, and does it find what was planted?

Seeded simulations of two models scored on the same rows: 10,000 rows, six independent
attributes of three values each, every slice down to support 0.005 (50 rows; about 2,000
itemsets), q-values over every itemset and metric (BH, α = 0.05).

Settings (``SETTINGS``):

- ``labels null``: two classifiers whose mistakes are exchangeable on every row (each flips
  the true label independently with the same probability): no slice has a change.
- ``labels planted``: the same, except that the model errs twice as often in ``a=0``
  (worse) and a third as often in ``b=1`` (better); in ``a=0, b=1`` both apply.
- ``regression null``: exchangeable heavy-tailed errors (Student t with 3 degrees of
  freedom, times a lognormal scale per row): absolute and squared error.
- ``regression hard cohort``: exchangeable, but in ``e=2`` both models' errors are four
  times larger (a slice whose spread is not the dataset's).
- ``regression skewed``: no slice has a change in mean absolute error, but the differences
  are skewed: the model is exact on 98% of rows and far off on 2%, the reference a little
  off everywhere (same mean absolute error per row); ``... squared`` the same for squared error.
- ``regression planted``: exchangeable (Student t with 5 degrees of freedom, so squared
  errors have a variance), except that the model's errors are 1.6 times larger in ``a=0``
  (worse) and half as large in ``b=1`` (better); in ``a=0, b=1`` both apply.

A run *alarms* when any slice whose true change is 0 gets q ≤ α, or when any slice gets a
verdict against the direction of its true change. With planted effects, BH controls the
false discovery rate (the share of false findings among the findings), reported as ``FDR``.
``coverage``: the share of all slices' 95% change intervals (every run, every metric) that
hold the slice's true change (the mean of its rows' expected differences).

    python benchmarks/validation/sim_compare.py            # 200 runs per setting (a few minutes)
    python benchmarks/validation/sim_compare.py --runs 20  # quicker
"""
from __future__ import annotations

import argparse
import runpy
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence

from divergence import compare  # noqa: E402

ATTRIBUTES = list("abcdef")
WORSE = {"a": 0}
BETTER = {"b": 1}
HARD = {"e": 2}
SETTINGS = ("labels null", "labels planted", "regression null", "regression hard cohort",
            "regression skewed", "regression skewed squared", "regression planted")
ALPHA = 0.05
MIN_SUPPORT = 0.005


def _in(df: pd.DataFrame, items: dict) -> np.ndarray:
    mask = np.ones(len(df), dtype=bool)
    for k, v in items.items():
        mask &= df[k].to_numpy() == v
    return mask


def simulate(setting: str, seed: int, n_rows: int = 10_000) -> tuple[pd.DataFrame, dict, dict]:
    """One seeded table: the attributes, the target, both models (``model``, ``reference``),
    the keyword arguments of :func:`compare`, and per metric each row's expected difference
    (model − reference): a slice's true change is its mean over the slice's rows."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({a: rng.integers(0, 3, n_rows) for a in ATTRIBUTES})
    worse, better = _in(df, WORSE), _in(df, BETTER)
    planted = setting.endswith("planted")
    if setting.startswith("labels"):
        y = rng.random(n_rows) < 0.3
        f_ref = np.full(n_rows, 0.15)
        f_model = f_ref.copy()
        if planted:
            f_model = f_model * np.where(worse, 2.0, 1.0) * np.where(better, 1 / 3, 1.0)
        df["y"] = y.astype(int)
        df["model"] = (y ^ (rng.random(n_rows) < f_model)).astype(int)
        df["reference"] = (y ^ (rng.random(n_rows) < f_ref)).astype(int)
        kwargs = dict(target="y", prediction="model", reference="reference", positive=1,
                      metrics=["error", "fpr", "fnr"])
        return df, kwargs, {m: f_model - f_ref for m in kwargs["metrics"]}
    y = rng.normal(50, 10, n_rows)
    scale = np.exp(rng.normal(0, 0.5, n_rows))
    s_model = np.ones(n_rows)
    s_ref = np.ones(n_rows)
    metrics = ["abs_error", "squared_error"]
    if setting == "regression hard cohort":
        hard = _in(df, HARD)
        s_model = s_ref = np.where(hard, 4.0, 1.0)
    if planted:
        s_model = np.where(worse, 1.6, 1.0) * np.where(better, 0.5, 1.0)
    if setting.startswith("regression skewed"):
        squared = setting.endswith("squared")
        # the model: exact on 98% of rows, an exponential error on 2%; the reference: a
        # normal error everywhere, scaled so both have the same mean absolute (or squared) error
        big = rng.random(n_rows) < 0.02
        e_model = np.where(big, rng.exponential(20.0, n_rows), 0.0) * rng.choice([-1, 1], n_rows)
        mean_model = 0.02 * (2 * 20.0 ** 2 if squared else 20.0)
        sigma = np.sqrt(mean_model) if squared else mean_model / np.sqrt(2 / np.pi)
        e_ref = rng.normal(0, sigma, n_rows)
        metrics = ["squared_error"] if squared else ["abs_error"]
        truth = {m: np.zeros(n_rows) for m in metrics}
    else:
        from scipy.special import gammaln

        df_t = 5 if planted else 3  # planted: squared errors with a finite variance
        e_model = s_model * scale * rng.standard_t(df_t, n_rows)
        e_ref = s_ref * scale * rng.standard_t(df_t, n_rows)
        mean_abs = 2 * np.sqrt(df_t) * np.exp(gammaln((df_t + 1) / 2) - gammaln(df_t / 2)) / (np.sqrt(np.pi) * (df_t - 1))
        truth = {"abs_error": (s_model - s_ref) * scale * mean_abs,
                 "squared_error": (s_model ** 2 - s_ref ** 2) * scale ** 2 * df_t / (df_t - 2)}
    df["y"] = y
    df["model"] = y + e_model
    df["reference"] = y + e_ref
    kwargs = dict(target="y", prediction="model", reference="reference", regression=True, metrics=metrics)
    return df, kwargs, truth


def run_once(setting: str, seed: int, n_rows: int = 10_000, min_support: float = MIN_SUPPORT) -> dict:
    """One run: alarms, false and true findings, interval coverage of the true change, and
    whether the planted slices were found."""
    df, kwargs, row_truth = simulate(setting, seed, n_rows)
    c = compare(df, attributes=ATTRIBUTES, min_support=min_support, confidence=1 - ALPHA, **kwargs)
    t = c.table
    out = {"setting": setting, "seed": seed, "itemsets": len(c), "tested": c.n_tested,
           "alarm": False, "false": 0, "findings": 0, "covered": 0, "intervals": 0}
    # the true change of every slice: the mean expected difference over its rows (where defined)
    defined_rows = {}
    if "positive" in kwargs:
        y = df["y"].to_numpy() == 1
        defined_rows = {"error": np.ones(len(df), bool), "fpr": ~y, "fnr": y}
    for m in c.metric_names:
        mask_def = defined_rows.get(m, np.ones(len(df), bool))
        truth = _slice_means(t, np.where(mask_def, row_truth[m], 0.0), mask_def.astype(float))
        f = c.frame
        lo, hi = f[f"{m}_change_ci_low"].to_numpy(), f[f"{m}_change_ci_high"].to_numpy()
        has = np.isfinite(lo) & np.isfinite(hi)
        out["intervals"] += int(has.sum())
        out["covered"] += int(((lo <= truth + 1e-12) & (truth - 1e-12 <= hi))[has].sum())
        q = f[f"{m}_change_q"].to_numpy()
        verdict = f[f"{m}_verdict"].to_numpy()
        sig = q <= ALPHA
        null = np.abs(truth) < 1e-12
        wrong_way = ((verdict == "worse") & (truth < -1e-12)) | ((verdict == "better") & (truth > 1e-12))
        false = (sig & null) | wrong_way
        out["false"] += int(false.sum())
        out["findings"] += int(sig.sum())
        out["alarm"] |= bool(false.any())
        if setting.endswith("planted"):
            w = c.lookup(", ".join(f"{k}={v}" for k, v in WORSE.items()))
            b = c.lookup(", ".join(f"{k}={v}" for k, v in BETTER.items()))
            out[f"{m}_worse_found"] = verdict[w] == "worse"
            out[f"{m}_better_found"] = verdict[b] == "better"
    return out


def _slice_means(table, values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted mean of a per-row value in every slice of the table (mined again with these
    tallies: the same itemsets in the same order)."""
    from divergence.mining.mined import mine_table

    again = mine_table(table.kept_rows.codes, np.column_stack([np.ones(len(values)), weights, values * weights]),
                       bins=table.bins, metrics=(), min_support=table.min_support,
                       max_length=table.max_length, exhaustive=table.exhaustive)
    assert np.array_equal(again.codes, table.codes)
    t = again.tallies
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(t[:, 1] > 0, t[:, 2] / np.where(t[:, 1] > 0, t[:, 1], 1), 0.0)


def summarize(rows: list[dict]) -> pd.DataFrame:
    """Per setting: runs, alarm rate, FDR, and how often the planted slices were found."""
    f = pd.DataFrame(rows)
    out = []
    for setting, g in f.groupby("setting", sort=False):
        rec = {"setting": setting, "runs": len(g), "itemsets": int(g["itemsets"].median()),
               "alarm rate": g["alarm"].mean(),
               "FDR": (g["false"] / g["findings"].clip(lower=1)).mean(),
               "coverage": g["covered"].sum() / max(g["intervals"].sum(), 1)}
        found = [c for c in g.columns if c.endswith("_found") and g[c].notna().any()]
        for c in found:
            rec[c.replace("_found", " found")] = g[c].astype(float).mean()
        out.append(rec)
    return pd.DataFrame(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--settings", default=",".join(SETTINGS))
    args = ap.parse_args(argv)
    rows = []
    start = time.perf_counter()
    for setting in args.settings.split(","):
        for seed in range(args.runs):
            rows.append(run_once(setting, seed))
        print(f"{setting}: {args.runs} runs, {time.perf_counter() - start:.0f} s so far", file=sys.stderr)
    table = summarize(rows)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.3f}".format):
        print(table.to_string(index=False))
    print(f"\ntarget: alarm rate <= {ALPHA} on the null settings (FDR <= {ALPHA} with planted effects); "
          "planted slices found in (nearly) every run")


if __name__ == "__main__":
    main()
