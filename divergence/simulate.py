"""Seeded tables whose truth is known, for checking the statistics by simulation.

Each generator returns ``(data, scan keyword arguments, truth)``: the same table for the same
seed. The test suite runs a few seeds of each; ``benchmarks/bench_stats.py`` runs the full
count and prints the measured rates beside their targets.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["random_attributes", "null_table", "two_group_table", "planted_rate_table", "noisier_labels_table",
           "cohort_table", "COHORT_KINDS", "sized_slice_table",
           "NULL_KINDS"]

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
