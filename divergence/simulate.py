"""Seeded tables whose truth is known, for checking the statistics by simulation.

Each generator returns ``(data, scan keyword arguments, truth)``: the same table for the same
seed. The test suite runs a few seeds of each; ``benchmarks/validation/sim_error_rates.py`` runs the full
count and prints the measured rates beside their targets.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["random_attributes", "null_table", "two_group_table", "planted_rate_table", "noisier_labels_table",
           "NULL_KINDS", "planted_table", "one_cohort_table", "two_cohorts_table", "truths",
           "findings_run", "findings_summary", "cohort_table", "COHORT_KINDS", "sized_slice_table",
           "flipped_cohort_table", "correlated_world", "correlated_run", "correlated_summary", "CORRELATED_KINDS",
           "calibration_slope", "hetero_world", "wide_null_world", "model_run", "model_summary"]

#: the null settings: an outcome that no attribute changes
NULL_KINDS = ("rate", "normal", "abs_error", "squared_error", "lognormal", "three_rates")


def random_attributes(rng: np.random.Generator, n: int, sizes=(2, 3, 3, 4, 5, 2)) -> pd.DataFrame:
    """Categorical attributes with uneven value shares (Dirichlet), independent of everything."""
    cols = {}
    for j, k in enumerate(sizes):
        p = rng.dirichlet(np.full(k, 2.0))
        cols[f"a{j}"] = np.array([f"v{v}" for v in range(k)])[rng.choice(k, n, p=p)]
    return pd.DataFrame(cols)


def null_table(kind: str, seed: int, n: int = 10_000):
    """No slice differs: the outcome does not depend on any attribute.

    ``rate``: a 0/1 outcome at rate 0.2; ``normal``: a normal column; ``abs_error`` and
    ``squared_error``: a regression whose prediction is the true mean (residuals N(0, 1));
    ``lognormal``: a lognormal(0, 1) column (skewness 6.2); ``three_rates``: a classifier's
    FPR, FNR and error rate scanned together.
    """
    rng = np.random.default_rng(seed)
    df = random_attributes(rng, n)
    if kind == "rate":
        df["o"] = (rng.random(n) < 0.2).astype(float)
        return df, dict(outcome="o"), {}
    if kind == "normal":
        df["o"] = rng.normal(size=n)
        return df, dict(outcome="o"), {}
    if kind == "lognormal":
        df["o"] = rng.lognormal(0.0, 1.0, n)
        return df, dict(outcome="o"), {}
    if kind in ("abs_error", "squared_error"):
        x = rng.normal(size=n)
        df["x"] = np.round(x, 3)
        df["y"] = 2.0 * x + rng.normal(size=n)
        df["pred"] = 2.0 * x
        return df, dict(target="y", prediction="pred", regression=True, metrics=[kind]), {}
    if kind == "three_rates":
        y = rng.random(n) < 0.3
        flip = rng.random(n) < np.where(y, 0.25, 0.1)
        df["y"] = y.astype(int)
        df["pred"] = (y ^ flip).astype(int)
        return df, dict(target="y", prediction="pred", positive=1, metrics=["fpr", "fnr", "error"]), {}
    raise ValueError(f"unknown null kind {kind!r}")


def two_group_table(seed: int, *, share: float, n: int = 10_000, kind: str = "normal", slice_mean: float = 0.3,
                    slice_sd: float = 1.0, rest_mean: float = 0.0, rest_sd: float = 1.0):
    """One attribute ``g``: ``g=s`` holds ``round(share * n)`` rows (the slice), ``g=r`` the rest.

    ``kind="normal"``: normal outcome with the given means and standard deviations;
    ``"rate"``: a 0/1 outcome with rate ``slice_mean`` in the slice and ``rest_mean`` elsewhere;
    ``"lognormal"``: exp of a normal with those means and standard deviations. The truth is
    the slice's expected divergence given its row count: ``(1 - n_s / n) * (mu_s - mu_r)``.
    """
    rng = np.random.default_rng(seed)
    k = int(round(share * n))
    g = np.array(["r"] * n, dtype=object)
    g[:k] = "s"
    if kind == "rate":
        o = np.where(g == "s", rng.random(n) < slice_mean, rng.random(n) < rest_mean).astype(float)
        mu_s, mu_r = slice_mean, rest_mean
    elif kind == "normal":
        o = np.where(g == "s", rng.normal(slice_mean, slice_sd, n), rng.normal(rest_mean, rest_sd, n))
        mu_s, mu_r = slice_mean, rest_mean
    elif kind == "lognormal":
        o = np.exp(np.where(g == "s", rng.normal(slice_mean, slice_sd, n), rng.normal(rest_mean, rest_sd, n)))
        mu_s, mu_r = np.exp(slice_mean + slice_sd ** 2 / 2), np.exp(rest_mean + rest_sd ** 2 / 2)
    else:
        raise ValueError(f"unknown kind {kind!r}")
    df = pd.DataFrame({"g": g, "o": o})
    truth = {"itemset": "g=s", "divergence": (1 - k / n) * (mu_s - mu_r), "value": mu_s}
    return df, dict(outcome="o", attributes=["g"]), truth


def planted_rate_table(seed: int, *, n: int = 10_000, effect: float = 0.2, base: float = 0.3,
                       share: float = 0.2):
    """Random attributes and a 0/1 outcome at rate ``base``, except in ``segment=s0`` (about
    ``share`` of the rows) where it is ``base + effect``. Truth: that slice's divergence
    given its row count, ``(1 - n_s / n) * effect``."""
    rng = np.random.default_rng(seed)
    df = random_attributes(rng, n)
    planted = rng.random(n) < share
    df["segment"] = np.where(planted, "s0", np.array(["s1", "s2", "s3"])[rng.integers(0, 3, n)])
    df["o"] = (rng.random(n) < np.where(planted, base + effect, base)).astype(float)
    return df, dict(outcome="o"), {"itemset": "segment=s0", "effect": effect}


def noisier_labels_table(seed: int, *, n: int = 10_000, noise: float = 1.0, cohort_noise: float = 2.5,
                         share: float = 0.2):
    """A regression whose prediction is the true mean everywhere (the model is as good as
    possible), with labels noisier in the cohort ``cohort=yes`` (``share`` of the rows): its
    errors are higher, and so is its constant baseline, but nothing about the model is broken
    there. Also a signal the attributes partly explain, so the constant baseline alone is not
    the achievable error."""
    rng = np.random.default_rng(seed)
    df = random_attributes(rng, n)
    df["cohort"] = np.where(rng.random(n) < share, "yes", "no")
    x = rng.normal(size=n)
    df["x"] = np.round(x, 3)
    cohort = (df["cohort"] == "yes").to_numpy()
    signal = 3.0 * x + 1.5 * (df["a1"] == "v1").to_numpy()
    df["y"] = signal + rng.normal(size=n) * np.where(cohort, cohort_noise, noise)
    df["pred"] = signal
    return df, dict(target="y", prediction="pred", regression=True, metrics=["abs_error"]), {"cohort": "cohort=yes"}


def classifier_cohorts_table(seed: int, *, n: int = 10_000, share: float = 0.2):
    """A classifier with two planted cohorts (``share`` of the rows each, independent), for
    the 0/1 error metric: in ``hard=yes`` the labels are noisier (the true probability is near
    1/2, and the model, which predicts the likelier class, is as good as possible: a hard
    cohort); in ``broken=yes`` the model's predictions are flipped for 30% of the rows (a
    defect). Elsewhere labels follow a clear signal ``x``."""
    rng = np.random.default_rng(seed)
    df = random_attributes(rng, n)
    df["hard"] = np.where(rng.random(n) < share, "yes", "no")
    df["broken"] = np.where(rng.random(n) < share, "yes", "no")
    x = rng.normal(size=n)
    df["x"] = np.round(x, 3)
    hard = (df["hard"] == "yes").to_numpy()
    broken = (df["broken"] == "yes").to_numpy()
    p = 1.0 / (1.0 + np.exp(-np.where(hard, 0.6, 3.0) * x))
    y = rng.random(n) < p
    pred = p > 0.5
    pred = np.where(broken & (rng.random(n) < 0.3), ~pred, pred)
    df["y"] = y.astype(int)
    df["pred"] = pred.astype(int)
    return (df, dict(target="y", prediction="pred", positive=1, metrics=["error"]),
            {"hard_cohort": "hard=yes", "defect": "broken=yes"})


def flipped_cohort_table(seed: int, *, n: int = 10_000, share: float = 1 / 12, flip: float = 0.10,
                         error: float = 0.05, base: float = 0.3, flipped: str = "predictions"):
    """A classifier with a cohort ``cohort=yes`` (``share`` of the rows) beside the six random
    attributes of :func:`random_attributes`: labels at rate ``base``, a model wrong on ``error`` of the
    rows at random, and in the cohort a second flip at random with probability ``flip``, for the 0/1
    error. ``flipped="predictions"``: the model's predictions are flipped there (a defect; its error
    ``error·(1 − flip) + (1 − error)·flip``, 0.14 by default against 0.05, its majority-class
    baseline the same as elsewhere); ``"labels"``: the labels are (a hard cohort: the same error,
    and the baseline moves toward 1/2 with it)."""
    if flipped not in ("predictions", "labels"):
        raise ValueError(f"flipped must be predictions or labels; got {flipped!r}")
    rng = np.random.default_rng(seed)
    df = random_attributes(rng, n)
    cohort = rng.random(n) < share
    df["cohort"] = np.where(cohort, "yes", "no")
    y = rng.random(n) < base
    pred = y ^ (rng.random(n) < error)
    second = cohort & (rng.random(n) < flip)
    if flipped == "predictions":
        pred = pred ^ second
    else:
        y = y ^ second
    df["y"] = y.astype(int)
    df["pred"] = pred.astype(int)
    return (df, dict(target="y", prediction="pred", positive=1, metrics=["error"]),
            {"cohort": "cohort=yes", "kind": "defect" if flipped == "predictions" else "hard"})


def planted_lognormal_table(seed: int, *, n: int = 10_000, shift: float = 0.5, share: float = 0.05):
    """Random attributes and a lognormal(0, 1) outcome, except in ``segment=s0`` (about
    ``share`` of the rows) where its log is shifted by ``shift`` (up: the long-tail side of a
    right-skewed outcome; down: the short-tail side, where the skew guard works)."""
    rng = np.random.default_rng(seed)
    df = random_attributes(rng, n)
    planted = rng.random(n) < share
    df["segment"] = np.where(planted, "s0", np.array(["s1", "s2", "s3"])[rng.integers(0, 3, n)])
    df["o"] = rng.lognormal(np.where(planted, shift, 0.0), 1.0, n)
    return df, dict(outcome="o"), {"itemset": "segment=s0"}


def planted_table(seed: int, cohorts: dict, *, n: int = 10_000, base: float = 0.2, shares: dict | None = None):
    """Random attributes and a 0/1 outcome at rate ``base`` raised by ``cohorts[itemset]`` on each
    planted cohort's rows (added where cohorts overlap). ``shares``: the share of rows of a planted
    attribute value (``{"a0=v0": 0.5}``), set before planting; other values keep their random shares.
    The truth of every slice is its mean of the per-row rate minus the whole dataset's: the table's
    column ``p`` (scan it as the outcome to get every slice's true divergence)."""
    rng = np.random.default_rng(seed)
    df = random_attributes(rng, n)
    for item, share in (shares or {}).items():
        attr, value = item.split("=")
        others = sorted(set(df[attr]) - {value}) or [value]
        df[attr] = np.where(rng.random(n) < share, value, rng.choice(others, n))
    p = np.full(n, base)
    for itemset, effect in cohorts.items():
        p = p + effect * _rows_of(df, itemset)
    df["o"] = (rng.random(n) < p).astype(float)
    df["p"] = p
    return df, dict(outcome="o", attributes=[c for c in df.columns if c.startswith("a")]), {"cohorts": list(cohorts)}


def one_cohort_table(seed: int, *, n: int = 10_000, divergence: float = 0.053):
    """One true cohort, ``a0=v0`` on half the rows, whose true divergence is ``divergence`` (its rate
    raised by twice that); every other slice's truth follows from its share of the cohort's rows."""
    return planted_table(seed, {"a0=v0": 2.0 * divergence}, n=n, shares={"a0=v0": 0.5})


def two_cohorts_table(seed: int, *, n: int = 10_000, effect: float = 0.12):
    """Two true cohorts on different attributes, ``a1=v0`` and ``a3=v1, a4=v2`` (30% and about 8% of
    the rows), each raising the rate by ``effect``."""
    return planted_table(seed, {"a1=v0": effect, "a3=v1, a4=v2": effect}, n=n,
                        shares={"a1=v0": 0.3, "a3=v1": 0.3, "a4=v2": 0.28})


def truths(df: pd.DataFrame, kw: dict, table) -> np.ndarray:
    """Each slice's true divergence in ``table``: the divergence of the per-row rate ``p`` (scanned
    as the outcome over the same attributes and support), in the table's row order."""
    from .scan import scan

    truth = scan(df, outcome="p", attributes=kw["attributes"], min_support=table.min_support, bootstrap=0,
                 exhaustive=table.exhaustive)
    at = truth.index_of(table.codes)
    return np.where(at >= 0, np.asarray(truth.columns["p_divergence"])[np.maximum(at, 0)], np.nan)


def findings_run(kind: str, seed: int, *, min_support: float = 0.005) -> dict:
    """One seeded run of the distinct-findings simulations (``benchmarks/validation/sim_findings.py``,
    ``tests/stats/test_findings_sim.py``): ``one`` (one true cohort with its refinements), ``two`` (two
    cohorts), ``null`` (nothing planted) or ``planted`` (a 5% slice whose truth is +0.10). Returns
    the findings, the first slice of the default order and, per slice of interest, estimate and
    truth."""
    from .scan import scan

    if kind == "one":
        df, kw, info = one_cohort_table(seed)
    elif kind == "two":
        df, kw, info = two_cohorts_table(seed)
    elif kind == "null":
        df, kw, info = planted_table(seed, {})
    elif kind == "planted":
        df, kw, info = planted_table(seed, {})
    else:
        raise ValueError(f"unknown kind {kind!r}")
    if kind == "planted":  # a segment on 5% of the rows, the rest split three ways
        rng = np.random.default_rng([seed, 5])
        seg = np.where(rng.random(len(df)) < 0.05, "s0", np.array(["s1", "s2", "s3"])[rng.integers(0, 3, len(df))])
        df["segment"] = seg
        p = np.where(seg == "s0", 0.2 + 0.1 / 0.95, 0.2)
        df["p"] = p
        df["o"] = (rng.random(len(df)) < p).astype(float)
        kw = dict(kw, attributes=kw["attributes"] + ["segment"])
    table = scan(df, outcome="o", attributes=kw["attributes"], min_support=min_support, bootstrap=0)
    f = table.frame
    truth = truths(df, kw, table)
    order = table.default_order("o")
    finding = f["o_finding"].to_numpy(dtype=bool)
    shrunk = f["o_divergence_shrunk"].to_numpy()
    bound = f["o_divergence_bound"].to_numpy()
    by_shrunk = np.argsort(-np.where(np.isnan(shrunk), -np.inf, shrunk[...]), kind="stable")
    by_shrunk = by_shrunk[by_shrunk != 0][:5]
    by_bound = np.argsort(-np.where(np.isnan(bound), -np.inf, bound), kind="stable")
    by_bound = by_bound[by_bound != 0][:5]
    out = {"kind": kind, "seed": seed, "slices": len(table) - 1,
           "findings": [str(s) for s in f["itemset"].to_numpy()[finding]],
           "first": str(f["itemset"].iat[order[0]]) if order.size else "",
           "first_shrunk": float(shrunk[order[0]]), "first_truth": float(truth[order[0]]),
           "top_shrunk": shrunk[by_shrunk].tolist(), "top_shrunk_truth": truth[by_shrunk].tolist(),
           "top_bound": bound[by_bound].tolist(), "top_bound_truth": truth[by_bound].tolist(),
           "max_raw": float(np.nanmax(np.abs(f["o_divergence"].to_numpy()[1:]))),
           "max_shrunk": float(np.nanmax(np.abs(shrunk[1:]))),
           "cohorts": info.get("cohorts", [])}
    if kind == "planted":
        i = table.lookup("segment=s0")
        out.update(planted_shrunk=float(shrunk[i]), planted_raw=float(f["o_divergence"].iat[i]),
                   planted_truth=float(truth[i]))
    return out


def findings_summary(runs: list) -> list:
    """The measured rates of :func:`findings_run` results, each ``(setting, runs, value, target,
    meets)``: what ``tests/stats/test_findings_sim.py`` asserts and ``benchmarks/validation/sim_findings.py`` prints."""
    out = []

    def add(setting, rs, value, target, ok):
        out.append((setting, len(rs), float(value), target, bool(ok)))

    by: dict[str, list] = {}
    for r in runs:
        by.setdefault(r["kind"], []).append(r)
    if "two" in by:
        rs = by["two"]
        both = np.mean([all(c in r["findings"] for c in r["cohorts"]) for r in rs])
        add("two cohorts: both are distinct findings", rs, both, "≥ 0.95", both >= 0.95)
        most = np.mean([len(r["findings"]) <= 4 for r in rs])
        add("two cohorts: at most four findings in all", rs, most, "≥ 0.95", most >= 0.95)
    if "null" in by:
        rs = by["null"]
        none = np.mean([not r["findings"] for r in rs])
        add("null table: no finding", rs, none, "≥ 0.95", none >= 0.95)
        half = np.mean([r["max_shrunk"] <= 0.5 * r["max_raw"] for r in rs])
        add("null table: largest shrunk divergence at most half the largest raw one", rs, half, "≥ 0.95",
            half >= 0.95)
    if "one" in by:
        rs = by["one"]
        only = np.mean([r["findings"] == r["cohorts"] for r in rs])
        add("one cohort: the only finding", rs, only, "≥ 0.95", only >= 0.95)
        first = np.mean([r["first"] == r["cohorts"][0] for r in rs])
        add("one cohort: first in the default order", rs, first, "≥ 0.95", first >= 0.95)
        ratio = np.mean([r["first_shrunk"] / r["first_truth"] for r in rs])
        add("one cohort: first slice's shrunk divergence / its truth (mean)", rs, ratio, "0.85–1.15",
            0.85 <= ratio <= 1.15)
        est = sum(sum(r["top_shrunk"]) for r in rs)
        true = sum(sum(r["top_shrunk_truth"]) for r in rs)
        top = est / true
        add("one cohort: top 5 by shrunk divergence, their mean over their truth's", rs, top, "≤ 1.15", top <= 1.15)
        tops = np.median([a / b for r in rs for a, b in zip(r["top_shrunk"], r["top_shrunk_truth"]) if b])
        add("one cohort: top 5 by shrunk divergence / their truth (median)", rs, tops, "reported", True)
        claims = [(a, b) for r in rs for a, b in zip(r["top_bound"], r["top_bound_truth"]) if a != 0]
        above = np.mean([a > b for a, b in claims]) if claims else 0.0
        add("one cohort: top 5 by the bound (non-zero) above their truth", rs, above, "≤ 0.10", above <= 0.10)
    if "planted" in by:
        rs = by["planted"]
        err = np.mean([r["planted_shrunk"] - r["planted_truth"] for r in rs])
        add("planted +0.10 slice (5% of rows): shrunk minus truth (mean)", rs, err, "within ±0.03", abs(err) <= 0.03)
        raw = np.mean([r["planted_raw"] - r["planted_truth"] for r in rs])
        add("planted +0.10 slice: raw minus truth (mean), for reference", rs, raw, "reported", True)
    return out


# ------------------------------------------------------------------ correlated attributes

#: the worlds of :func:`correlated_world`: nothing planted, two disjoint cohorts, three overlapping,
#: and a lone interaction (two items that do not diverge alone)
CORRELATED_KINDS = ("null", "two", "three", "interaction")


def correlated_world(seed: int, kind: str, *, n: int = 10_000):
    """A classifier's table whose attributes agree with each other as real tables' do, with planted
    false-positive-rate cohorts: ``two``, C1 ``c0=u0`` (a quarter of the rows, +0.08) and C2
    ``c0=u2, c2=t1`` (a tenth, +0.12), disjoint; ``three`` adds C3 ``c6=r2`` (a sixth, +0.05)
    overlapping both; ``interaction``, ``c3=s0, c4=s0`` (a twentieth, +0.10), planted on neither item
    alone; ``single``, the same size and effect on one item (``c8=v0`` of an added attribute of twenty
    values); ``null``, nothing. ``c1`` agrees with ``c0`` on
    80% of the rows (a stand-in for it), ``c5`` with ``c2``; ``c0=u1`` reads low only because the
    cohorts lift the whole dataset. Every planted cohort is an itemset of these columns. Returns
    ``(data, scan keyword arguments, {"cohorts": [...], "look_low": ...})``."""
    rng = np.random.default_rng([seed, 28])
    c0 = rng.choice(4, n)
    agree = rng.random(n) < 0.8
    c1 = np.where(agree, c0, rng.choice(4, n))
    c2 = rng.choice(3, n, p=[0.3, 0.4, 0.3])
    c5 = np.where(rng.random(n) < 0.8, c2, rng.choice(3, n))
    c3 = rng.choice(4, n)
    c4 = rng.choice(5, n)
    c6 = rng.choice(6, n)
    c7 = rng.choice(2, n)
    df = pd.DataFrame({"c0": c0, "c1": c1, "c2": c2, "c3": c3, "c4": c4, "c5": c5, "c6": c6, "c7": c7})
    for col, letter in zip(df.columns, "uwtsstrq"):
        df[col] = np.array([f"{letter}{v}" for v in range(df[col].max() + 1)])[df[col]]
    fpr = np.full(n, 0.10)
    cohorts: list[str] = []

    def plant(itemset: str, effect: float, mask=None):
        nonlocal fpr
        if mask is None:
            mask = _rows_of(df, itemset)
        fpr = fpr + effect * mask
        cohorts.append(itemset)

    if kind in ("two", "three"):
        plant("c0=u0", 0.08)
        plant("c0=u2, c2=t1", 0.12)
    if kind == "three":
        plant("c6=r2", 0.05)
    if kind == "interaction":
        plant("c3=s0, c4=s0", 0.10)
    elif kind == "single":  # the interaction's size and effect on one item (of an added attribute)
        df["c8"] = np.array([f"v{i}" for i in range(20)])[rng.integers(0, 20, n)]
        plant("c8=v0", 0.10)
    elif kind not in ("null", "two", "three"):
        raise ValueError(f"unknown kind {kind!r}")
    y = rng.random(n) < 0.3
    pred = np.where(y, rng.random(n) < 0.7, rng.random(n) < fpr)
    df["y"] = np.where(y, "yes", "no")
    df["pred"] = np.where(pred, "yes", "no")
    df["p"] = np.where(y, np.nan, fpr)  # the true FPR of each negative row
    kw = dict(target="y", prediction="pred", positive="yes", metrics=["fpr", "fnr"],
              attributes=[c for c in df.columns if c.startswith("c")])
    return df, kw, {"cohorts": cohorts, "look_low": "c0=u1" if kind in ("two", "three") else None}


def correlated_run(kind: str, seed: int, *, n: int = 10_000, min_support: float = 0.01, holdout=None) -> dict:
    """One seeded run of :func:`correlated_world`: the FPR findings, the planted cohorts, and for the
    interaction its raw, shrunk and true divergence."""
    from .scan import scan

    df, kw, info = correlated_world(seed, kind, n=n)
    table = scan(df, min_support=min_support, bootstrap=0, holdout=holdout, **kw)
    f = table.frame
    found = f[f["fpr_finding"].astype(bool)]
    findings = [str(s) for s in found["itemset"]]
    out = {"kind": kind, "seed": seed, "n": n, "findings": findings, "cohorts": info["cohorts"],
           "look_low": info["look_low"], "aliases": [x for a in found["fpr_alias"] if a for x in str(a).split(" | ")],
           "ties": {str(s): [x for x in str(a).split(" | ") if x] for s, a in zip(found["itemset"], found["fpr_alias"])}}
    negatives = df["y"] == "no"
    overall = float(df.loc[negatives, "p"].mean())
    if info["cohorts"] and table.assessment is not None:
        out["detectable"] = _detectable(df[negatives], info["cohorts"], int(table.assessment.family_size["fpr"]))
    if kind in ("interaction", "single", "null"):
        # the top of the list by the shrunk divergence (its calibration): each slice's estimates and truth
        top = np.argsort(-np.nan_to_num(f["fpr_divergence_shrunk"].to_numpy()[1:], nan=-np.inf), kind="stable")[:TOP]
        out["top"] = [(float(f["fpr_divergence_shrunk"].iat[j + 1]), float(f["fpr_divergence"].iat[j + 1]),
                       _slice_truth(df, negatives, str(f["itemset"].iat[j + 1]), overall)) for j in top]
    if kind in ("interaction", "single"):
        i = table.lookup(info["cohorts"][0])
        truth = float(df.loc[negatives.to_numpy() & _rows_of(df, info["cohorts"][0]), "p"].mean() - overall)
        out.update(raw=float(f["fpr_divergence"].iat[i]), shrunk=float(f["fpr_divergence_shrunk"].iat[i]),
                   truth=truth)
    return out


#: the slices at the top of the shrunk list whose calibration :func:`correlated_summary` measures
TOP = 5


def _detectable(negatives: pd.DataFrame, cohorts: list, family_size: int, alpha: float = 0.05) -> dict:
    """Per planted cohort, whether the true model could keep it: its likelihood-ratio test given the
    other planted cohorts (a logistic model of the negatives' predictions on the cohorts' indicators)
    passes the bar the findings' search holds the last of k terms to, Holm's step α/(m − k + 2) over
    the scan's family of m tests. A cohort that fails it is beyond any search held to that bar."""
    from scipy.stats import norm

    masks = [_rows_of(negatives, itemset) for itemset in cohorts]
    pattern = sum(m.astype(np.int64) << i for i, m in enumerate(masks))
    events = (negatives["pred"] == "yes").to_numpy().astype(float)
    uniq, label = np.unique(pattern, return_inverse=True)
    n = np.bincount(label, minlength=uniq.size).astype(float)
    s = np.bincount(label, weights=events, minlength=uniq.size)

    def ll(terms: list) -> float:  # the grouped logistic model's maximum log-likelihood, by Newton's steps
        X = np.column_stack([np.ones(uniq.size)] + [((uniq >> i) & 1).astype(float) for i in terms])
        beta = np.zeros(X.shape[1])
        for _ in range(50):
            mu = 1.0 / (1.0 + np.exp(-(X @ beta)))
            step = np.linalg.solve(X.T @ (X * (n * mu * (1.0 - mu))[:, None]), X.T @ (s - n * mu))
            beta += step
            if np.abs(step).max() < 1e-10:
                break
        eta = X @ beta
        return float((s * eta - n * np.logaddexp(0.0, eta)).sum())

    k = len(cohorts)
    bar = float(norm.isf(alpha / max(family_size - k + 2, 1) / 2))
    every = ll(list(range(k)))
    return {c: bool(math.sqrt(max(2.0 * (every - ll([j for j in range(k) if j != i])), 0.0)) >= bar)
            for i, c in enumerate(cohorts)}


def _slice_truth(df: pd.DataFrame, negatives, itemset: str, overall: float) -> float:
    """A slice's true FPR divergence: the mean true FPR of its negatives minus the whole dataset's."""
    return float(df.loc[negatives.to_numpy() & _rows_of(df, itemset), "p"].mean() - overall)


def _rows_of(df: pd.DataFrame, itemset: str) -> np.ndarray:
    """The rows of ``df`` in the slice written ``"a=v, b=w"`` (a boolean mask)."""
    mask = np.ones(len(df), dtype=bool)
    for item in itemset.split(", "):
        attr, value = item.split("=")
        mask &= (df[attr] == value).to_numpy()
    return mask


def calibration_slope(estimate, truth, *, origin: bool = False) -> float:
    """The least-squares slope of the truth on the estimate (``origin``: through 0): 1 when the
    estimate is calibrated (the truth of slices estimated at x averages x), below 1 when the
    estimates at the top are inflated, above 1 when they are shrunk too far."""
    x, y = np.asarray(estimate, dtype=float), np.asarray(truth, dtype=float)
    if not origin:
        x, y = x - x.mean(), y - y.mean()
    return float((x * y).sum() / (x * x).sum()) if (x * x).sum() > 0 else float("nan")


def correlated_summary(runs: list) -> list:
    """The measured rates of :func:`correlated_run` results, each ``(setting, runs, value, target,
    meets)``."""
    out: list[tuple[str, int, float, str, bool | np.bool_]] = []
    by: dict = {}
    for r in runs:
        by.setdefault((r["kind"], r["n"]), []).append(r)
    for (kind, n), rs in sorted(by.items()):
        where = f"{kind}, {n:,} rows"
        if kind == "null":
            anyf = np.mean([bool(r["findings"]) for r in rs])
            out.append((f"{where}: any finding", len(rs), float(anyf), "≤ 0.05", anyf <= 0.05))
            if (("interaction", n)) in by:  # the shrunk top's calibration over both worlds (its truth 0 here)
                top = [t for r in rs + by[("interaction", n)] for t in r.get("top", ())]
                slope = calibration_slope([t[0] for t in top], [t[2] for t in top])
                out.append((f"null and interaction, {n:,} rows: the top {TOP} by shrunk divergence, calibration "
                            "slope (truth on shrunk)", len(rs) + len(by[("interaction", n)]), slope, "1.00 ± 0.10",
                            abs(slope - 1.0) <= 0.1))
                slope = calibration_slope([t[1] for t in top], [t[2] for t in top])
                out.append((f"null and interaction, {n:,} rows: the same slices' truth on their raw divergence, for "
                            "reference", len(rs) + len(by[("interaction", n)]), slope, "reported", True))
                luck = np.mean([max(t[0] for t in r["top"]) for r in rs])
                out.append((f"{where}: the luckiest slice's shrunk divergence (mean)", len(rs), float(luck),
                            "reported", True))
            continue
        if kind in ("interaction", "single"):
            err = np.mean([r["shrunk"] - r["truth"] for r in rs])
            what = "the interaction" if kind == "interaction" else "the item"
            out.append((f"{where}: {what}, shrunk minus truth (mean)", len(rs), float(err), "within ±0.03",
                        abs(err) <= 0.03))
            raw = np.mean([r["raw"] - r["truth"] for r in rs])
            out.append((f"{where}: {what}, raw minus truth (mean), for reference", len(rs), float(raw), "reported",
                        True))
            top = [t for r in rs for t in r["top"]]
            slope = calibration_slope([t[0] for t in top], [t[2] for t in top], origin=True)
            out.append((f"{where}: the top {TOP} by shrunk divergence, calibration slope through 0 (truth on "
                        "shrunk)", len(rs), slope, "1.00 ± 0.10", abs(slope - 1.0) <= 0.1))
            slope = calibration_slope([t[1] for t in top], [t[2] for t in top], origin=True)
            out.append((f"{where}: the same slices' truth on their raw divergence, for reference", len(rs), slope,
                        "reported", True))
            found = np.mean([r["findings"] == r["cohorts"] for r in rs])
            out.append((f"{where}: the {'interaction' if kind == 'interaction' else 'item'} is the only finding",
                        len(rs), float(found), "reported", True))
            continue
        exact = np.mean([sorted(r["findings"]) == sorted(r["cohorts"]) for r in rs])
        out.append((f"{where}: findings exactly the planted cohorts", len(rs), float(exact),
                    "≥ 0.90" if n >= 20_000 else "reported", exact >= 0.9 or n < 20_000))
        replaced = np.mean([any(c not in r["findings"] for c in r["cohorts"])
                            and any(x not in r["cohorts"] for x in r["findings"]) for r in rs])
        out.append((f"{where}: a planted cohort replaced by a stand-in or a look-low slice", len(rs), float(replaced),
                    "≤ 0.05", replaced <= 0.05))
        # a cohort the search did not name may still be shown: as the name the data do not tell a finding from
        unnamed = np.mean([any(x not in r["cohorts"] for x in r["findings"])
                           and any(c not in r["findings"] and c not in r["aliases"] for c in r["cohorts"]) for r in rs])
        out.append((f"{where}: replaced, the cohort not shown as a finding's alias either", len(rs), float(unnamed),
                    "reported", True))
        other = np.mean([any(x not in r["cohorts"] for x in r["findings"]) for r in rs])
        out.append((f"{where}: any non-planted finding", len(rs), float(other), "≤ 0.05", other <= 0.05))
        low = np.mean([r["look_low"] in r["findings"] for r in rs])
        out.append((f"{where}: the look-low slice a finding", len(rs), float(low), "reported", True))
    return out


# ------------------------------------------------------------------ defect against hard cohort

#: the kinds of planted cohort of :func:`cohort_table`
COHORT_KINDS = ("defect", "hard", "unseen", "none")


def cohort_table(seed: int, kind: str, task: str = "regression", *, n: int = 10_000, share: float = 0.2,
                 feature_column: bool = False):
    """A model that is as good as possible everywhere except in one planted cohort ``cohort=yes``
    (``share`` of the rows), in a world where the target follows two features: ``x`` (a column
    only when ``feature_column``) and ``z`` (always a column), beside six random attributes.

    ``task="regression"``: y = 2x + z + N(0, 1), the model predicts 2x + z (metrics abs_error and
    squared_error); ``"classification"``: y ~ Bernoulli(sigmoid(2.5x + 1.2z)), the model predicts
    the likelier class and scores the probability (metrics error and brier, threshold 0.5).

    ``kind``: ``"defect"``: in the cohort the model ignores x, which it uses everywhere else
    (its prediction there is z, or its class and probability from 1.2z); the cohort's target is
    no harder. ``"hard"``: the cohort's target is noisier (noise sd 2.5 against 1; for the
    classifier a logit a quarter as steep), the model as good as possible there (for Brier its
    probability is the cohort's true one). ``"unseen"``: a feature w, in no column and unknown to
    the model, acts only in the cohort (2w added to the target, 3w to the logit): from these
    columns it cannot be told from a noisier target. ``"none"``: nothing is planted."""
    if kind not in COHORT_KINDS:
        raise ValueError(f"unknown cohort kind {kind!r}")
    rng = np.random.default_rng(seed)
    df = random_attributes(rng, n)
    cohort = rng.random(n) < share
    df["cohort"] = np.where(cohort, "yes", "no")
    x, z, w = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    df["z"] = np.round(z, 3)
    if feature_column:
        df["x"] = np.round(x, 3)
    if task == "regression":
        noise = rng.normal(size=n) * np.where(cohort & (kind == "hard"), 2.5, 1.0)
        df["y"] = 2.0 * x + z + noise + np.where(cohort & (kind == "unseen"), 2.0 * w, 0.0)
        df["pred"] = np.where(cohort & (kind == "defect"), z, 2.0 * x + z)
        kw = dict(target="y", prediction="pred", regression=True, metrics=["abs_error", "squared_error"])
    elif task == "classification":
        logit = 2.5 * x + 1.2 * z
        true = np.where(cohort & (kind == "hard"), 0.25 * logit, logit) + np.where(cohort & (kind == "unseen"),
                                                                                 3.0 * w, 0.0)
        df["y"] = (rng.random(n) < 1.0 / (1.0 + np.exp(-true))).astype(int)
        model = np.where(cohort & (kind == "defect"), 1.2 * z, logit)
        # as good as possible: for Brier, the probability given what the model knows (in the
        # hard cohort the flatter logit; with the unseen feature, the logit averaged over w)
        scale = np.where(cohort & (kind == "hard"), 0.25, np.where(cohort & (kind == "unseen"),
                                                                   1.0 / np.sqrt(1.0 + np.pi * 9.0 / 8.0), 1.0))
        df["score"] = np.round(1.0 / (1.0 + np.exp(-scale * model)), 6)
        kw = dict(target="y", score="score", threshold=0.5, positive=1, metrics=["error", "brier"])
    else:
        raise ValueError(f"unknown task {task!r}")
    return df, kw, {"cohort": "cohort=yes", "kind": kind}


def sized_slice_table(seed: int, size: int, *, kind: str = "rate", delta: float = 0.05, base: float = 0.2,
                      n: int = 10_000):
    """Six random attributes and ``segment``, whose value ``s0`` holds exactly ``size`` rows (the
    others ``s1``-``s3``), a slice whose outcome truly diverges from the whole dataset's by
    ``delta`` (signed): its mean minus the whole dataset's expected mean, given its size.

    ``kind="rate"``: a 0/1 outcome, the whole dataset's rate ``base``; ``"normal"``: N(0, 1) with
    the slice shifted; ``"lognormal"``: lognormal(0, 1) with the slice's log-mean shifted so that
    its mean moves by the same amount (``delta`` in the outcome's units)."""
    rng = np.random.default_rng(seed)
    df = random_attributes(rng, n)
    seg = np.array(["s1", "s2", "s3"], dtype=object)[rng.integers(0, 3, n)]
    seg[rng.choice(n, int(size), replace=False)] = "s0"
    df["segment"] = seg
    inside = seg == "s0"
    gap = delta * n / (n - size)  # slice minus rest
    if kind == "rate":
        rest = base - delta * size / (n - size)
        df["o"] = (rng.random(n) < np.where(inside, rest + gap, rest)).astype(float)
    elif kind == "normal":
        df["o"] = rng.normal(size=n) + np.where(inside, gap, 0.0)
    elif kind == "lognormal":
        mean = np.exp(0.5)
        if mean + gap <= 0:
            raise ValueError("a lognormal slice cannot fall that far")
        df["o"] = rng.lognormal(np.where(inside, np.log1p(gap / mean), 0.0), 1.0, n)
    else:
        raise ValueError(f"unknown kind {kind!r}")
    return df, dict(outcome="o"), {"itemset": "segment=s0", "delta": delta}


# ------------------------------------------------------------------ issue 43: the findings' model

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
        able = [r["detectable"][c] for r in rs for c in r["cohorts"]]
        out.append((f"{where}: the true model keeps the cohort at the search's bar (of cohort-runs)", len(able),
                    float(np.mean(able)), "reported", True))
        kept = [ok for ok, a in zip(shown, able) if a]
        if kept:
            out.append((f"{where}: on screen, of the cohort-runs the true model keeps", len(kept),
                        float(np.mean(kept)), "≥ 0.95", float(np.mean(kept)) >= 0.95))
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
