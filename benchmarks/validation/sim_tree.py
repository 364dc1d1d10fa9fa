"""Tree binning by simulation: a planted failing band on a continuous column, and columns without
an effect. Prints a table (docs/method-record.md, "Tree binning").

    python benchmarks/validation/sim_tree.py [--runs 200] [--rows 10000]

Generator: ``x``, ``z`` uniform on [0, 1], ``w`` lognormal, ``c`` three categories, the true class
positive on 30% of rows, the classifier's TPR 0.7; its FPR 0.40 in the band ``0.42 < x <= 0.58``
(16% of rows) and 0.10 elsewhere (``planted``), or 0.10 everywhere (``null``). ``z``, ``w`` and ``c``
never matter. A run finds the band when the table has a bin of ``x`` with both edges within 0.04 of
the planted ones, that slice is significant (q <= 0.05 and its corrected interval excludes 0), and
the top slice of the default order lies inside it. A run alarms on the columns without an effect
when a slice whose items are all on z, w, c (none on x) is significant (q <= 0.05 and its corrected
interval excludes 0); on z or w when such a slice has an item on z or w (the continuous columns the
tree may cut).
"""
from __future__ import annotations

import argparse
import runpy
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence

from divergence import scan  # noqa: E402

LOW, HIGH = 0.42, 0.58
ROLES = dict(target="y", prediction="p", positive=1, metrics=["fpr"])


def generate(seed: int, n: int = 10_000, planted: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x, z = rng.random(n), rng.random(n)
    w = rng.lognormal(0.0, 1.0, n)
    c = rng.choice(["a", "b", "c"], n)
    y = (rng.random(n) < 0.3).astype(int)
    band = (x > LOW) & (x <= HIGH)
    fpr = np.where(band, 0.40, 0.10) if planted else np.full(n, 0.10)
    p = np.where(y == 1, rng.random(n) < 0.7, rng.random(n) < fpr).astype(int)
    return pd.DataFrame({"x": x, "z": z, "w": w, "c": c, "y": y, "p": p})


def _significant(f: pd.DataFrame) -> np.ndarray:
    sig = f["fpr_q"].to_numpy() <= 0.05
    if "fpr_divergence_adj_low" in f:
        sig &= (f["fpr_divergence_adj_low"].to_numpy() > 0) | (f["fpr_divergence_adj_high"].to_numpy() < 0)
    sig[0] = False
    return sig


def judge(table) -> dict:
    """Per run: edges near the planted ones, the band significant and at the top, null-column alarms."""
    f = table.frame
    sig = _significant(f)
    xb = table.bins[table.attributes.index("x")]
    edges = np.asarray(xb.edges)
    band_label = None
    for lo, hi, label in zip(np.r_[-np.inf, edges], np.r_[edges, np.inf], xb.labels):
        if abs(lo - LOW) <= 0.04 and abs(hi - HIGH) <= 0.04:
            band_label = label
    out = {"edges": tuple(edges), "near": band_label is not None, "band_significant": False, "top_in_band": False}
    if band_label is not None:
        item = f"x={band_label}"
        i = table.lookup(item)
        out["band_significant"] = bool(sig[i])
        top = table.top(1).index[0]
        out["top_in_band"] = bool(table.codes[top, table.attributes.index("x")] == xb.labels.index(band_label))
    on_null = np.ones(len(table), dtype=bool)
    on_null[0] = False
    on_null &= table.codes[:, table.attributes.index("x")] < 0
    out["null_alarm"] = bool((sig & on_null).any())
    cut_null = (table.codes[:, table.attributes.index("z")] >= 0) | (table.codes[:, table.attributes.index("w")] >= 0)
    out["cut_null_alarm"] = bool((sig & on_null & cut_null).any())
    out["any_alarm"] = bool(sig.any())
    return out


def run(runs: int, rows: int, planted: bool, binning: str, naive: bool = False) -> dict:
    results, seconds = [], 0.0
    for seed in range(runs):
        df = generate(seed, rows, planted)
        t0 = time.perf_counter()
        if naive:  # the cuts chosen and measured on the same rows: what the held-out rows prevent
            from divergence.prepare.cutpoints import CutRows, choose_cuts
            from divergence.prepare.outcomes import build_outcomes

            everyone = CutRows(np.ones(len(df), bool), len(df), len(df))
            cuts = choose_cuts(df, ["x", "z", "w"], {}, 3, build_outcomes(df, **ROLES), everyone, 1)
            table = scan(df, **ROLES, min_support=0.02, bins={k: list(v) or [float(df[k].median())]
                                                              for k, v in cuts.items()})
        else:
            table = scan(df, **ROLES, min_support=0.02, binning=binning)
        seconds += time.perf_counter() - t0
        results.append(judge(table))
    r = pd.DataFrame(results)
    found = r["near"] & r["band_significant"] & r["top_in_band"]
    return {"runs": runs, "near": r["near"].mean(), "significant": r["band_significant"].mean(),
            "top": r["top_in_band"].mean(), "found": found.mean(), "null_alarm": r["null_alarm"].mean(),
            "cut_null_alarm": r["cut_null_alarm"].mean(),
            "any_alarm": r["any_alarm"].mean(), "seconds": seconds / runs}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--rows", type=int, default=10_000)
    a = ap.parse_args()
    rows = []
    for label, planted, binning, naive in [
        ("planted band, tree binning", True, "tree", False),
        ("planted band, 3 quantile bins", True, "quantile", False),
        ("no effect anywhere, tree binning", False, "tree", False),
        ("no effect anywhere, cuts chosen and measured on the same rows", False, "tree", True),
    ]:
        r = run(a.runs, a.rows, planted, binning, naive)
        rows.append((label, r))
    print("| setting | runs | edges within 0.04 | band significant | top slice in the band | found (all three) "
          "| alarm on z or w (cut by the tree, no effect) | alarm on any column without an effect | any alarm "
          "| s per scan |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, r in rows:
        print(f"| {label} | {r['runs']} | {r['near']:.3f} | {r['significant']:.3f} | {r['top']:.3f} | "
              f"{r['found']:.3f} | {r['cut_null_alarm']:.3f} | {r['null_alarm']:.3f} | {r['any_alarm']:.3f} | "
              f"{r['seconds']:.2f} |")


if __name__ == "__main__":
    main()
