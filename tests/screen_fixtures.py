"""Synthetic tables for the attribute screen's tests (issue 19, point 2), made with numpy alone.

- :func:`two_models`: a Titanic-like table (target ``survived``) scored by two realistic models
  fitted on a training half and applied to every row: boosted decision stumps (``pred_gb``,
  ``proba_gb``) and a logistic regression fitted by Newton's method (``pred_lr``, ``proba_lr``).
- :func:`post_outcome`: a credit-like table (target ``defaulted``, a model's ``predicted``) with
  columns recorded after the outcome (a collection flag, days to the first missed payment, a
  collection agency's code) beside genuine attributes, one of them strong and ignored by the
  model, and a 97% copy of an attribute.
"""
from __future__ import annotations

import numpy as np
import pandas as pd


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _design(df: pd.DataFrame, numeric: list[str], categorical: list[str]) -> np.ndarray:
    parts = [np.ones((len(df), 1))]
    for c in numeric:
        x = df[c].to_numpy(dtype=float)
        parts.append(((x - x.mean()) / x.std())[:, None])
    for c in categorical:
        values = sorted(df[c].unique(), key=str)
        parts.append(np.stack([(df[c] == v).to_numpy(dtype=float) for v in values[1:]], axis=1))
    return np.concatenate(parts, axis=1)


def logistic_regression(x: np.ndarray, y: np.ndarray, fit: np.ndarray, ridge: float = 1e-3) -> np.ndarray:
    """P(y = 1) for every row, from a logistic regression fitted on the rows in ``fit``."""
    w = np.zeros(x.shape[1])
    xf, yf = x[fit], y[fit]
    for _ in range(50):
        p = _sigmoid(xf @ w)
        grad = xf.T @ (p - yf) + ridge * w
        hess = (xf * (p * (1 - p))[:, None]).T @ xf + ridge * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return _sigmoid(x @ w)


def boosted_stumps(x: np.ndarray, y: np.ndarray, fit: np.ndarray, rounds: int = 150,
                   rate: float = 0.2) -> np.ndarray:
    """P(y = 1) for every row, from gradient-boosted stumps (log loss) fitted on ``fit``: each
    round splits one feature at one of its deciles."""
    xf, yf = x[fit], y[fit]
    cuts = [np.unique(np.quantile(xf[:, j], np.linspace(0.1, 0.9, 9))) for j in range(x.shape[1])]
    f_all = np.full(len(x), np.log(yf.mean() / (1 - yf.mean())))
    f = f_all[fit].copy()
    for _ in range(rounds):
        p = _sigmoid(f)
        g, h = yf - p, p * (1 - p)
        best = None
        for j in range(x.shape[1]):
            for c in cuts[j]:
                left = xf[:, j] <= c
                gl, hl = g[left].sum(), h[left].sum()
                gr, hr = g.sum() - gl, h.sum() - hl
                if hl < 1 or hr < 1:
                    continue
                gain = gl * gl / hl + gr * gr / hr
                if best is None or gain > best[0]:
                    best = (gain, j, c, gl / hl, gr / hr)
        _, j, c, vl, vr = best
        f += rate * np.where(xf[:, j] <= c, vl, vr)
        f_all += rate * np.where(x[:, j] <= c, vl, vr)
    return _sigmoid(f_all)


def two_models(n: int = 4000, seed: int = 0) -> pd.DataFrame:
    """A Titanic-like table with two models' outputs (see the module)."""
    rng = np.random.default_rng(seed)
    pclass = rng.choice([1, 2, 3], n, p=[0.24, 0.21, 0.55])
    sex = rng.choice(["female", "male"], n, p=[0.35, 0.65])
    age = np.clip(rng.normal(30, 14, n), 0.5, 80).round(1)
    sibsp = rng.choice([0, 1, 2, 3, 4], n, p=[0.68, 0.23, 0.05, 0.02, 0.02])
    fare = np.round(np.exp(rng.normal(np.array([4.0, 3.0, 2.3])[pclass - 1], 0.5)), 2)
    embarked = rng.choice(["S", "C", "Q"], n, p=[0.72, 0.19, 0.09])
    logit = (-1.2 + 2.5 * (sex == "female") + np.array([1.1, 0.3, -0.8])[pclass - 1]
             + 1.2 * (age < 12) - 0.02 * (age - 30) - 0.35 * sibsp + 0.3 * (embarked == "C")
             - 1.2 * ((sex == "female") & (pclass == 3)))
    survived = (rng.random(n) < _sigmoid(logit)).astype(int)
    df = pd.DataFrame({"pclass": pclass, "sex": sex, "age": age, "sibsp": sibsp, "fare": fare,
                       "embarked": embarked, "survived": survived})
    x = _design(df, ["age", "fare", "sibsp"], ["pclass", "sex", "embarked"])
    fit = rng.random(n) < 0.5
    y = survived.astype(float)
    proba_gb = boosted_stumps(x, y, fit)
    proba_lr = logistic_regression(x, y, fit)
    df["pred_gb"] = (proba_gb >= 0.5).astype(int)
    df["proba_gb"] = proba_gb.round(4)
    df["pred_lr"] = (proba_lr >= 0.5).astype(int)
    df["proba_lr"] = proba_lr.round(4)
    return df


def post_outcome(n: int = 6000, seed: int = 0) -> pd.DataFrame:
    """A credit table (see the module): ``defaulted`` from genuine attributes, a model that ignores
    one strong attribute (``employment``), three columns recorded after the outcome, and 97% copies
    of a text and a numeric attribute."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 75, n)
    region = rng.choice(["North", "South", "East", "West"], n)
    income = np.round(np.exp(rng.normal(10.3, 0.5, n)), -2)
    prior = rng.choice([0, 1, 2, 3], n, p=[0.6, 0.25, 0.1, 0.05])
    employment = rng.choice(["salaried", "self-employed", "temporary"], n, p=[0.6, 0.25, 0.15])
    logit = (-1.0 + 0.6 * prior - 0.8 * (income > 35000) + 0.02 * (40 - age)
             + np.where(employment == "temporary", 1.6, 0.0) + np.where(employment == "self-employed", 0.5, 0.0))
    defaulted = (rng.random(n) < _sigmoid(logit)).astype(int)
    # the model knows prior defaults, income and age, not employment
    model_logit = -0.8 + 0.6 * prior - 0.8 * (income > 35000) + 0.02 * (40 - age)
    predicted = (_sigmoid(model_logit + rng.normal(0, 0.6, n)) >= 0.5).astype(int)
    # recorded after the outcome: collections (most defaulters, few others), days to the missed payment
    collections = np.where(defaulted == 1, rng.random(n) < 0.7, rng.random(n) < 0.02).astype(int)
    missed = np.where((defaulted == 1) | (rng.random(n) < 0.05), rng.integers(20, 400, n).astype(float), np.nan)
    agency = np.where(collections == 1, rng.choice(["AG-1", "AG-2", "AG-3"], n), None)
    region_copy = np.where(rng.random(n) < 0.97, region, rng.choice(["North", "South", "East", "West"], n))
    age_copy = np.where(rng.random(n) < 0.97, age, rng.integers(18, 75, n))
    return pd.DataFrame({"age": age, "region": region, "income": income, "prior_defaults": prior,
                         "employment": employment, "in_collections": collections, "days_to_missed_payment": missed,
                         "agency": agency, "region_recorded": region_copy, "age_at_application": age_copy,
                         "defaulted": defaulted, "predicted": predicted})
