"""The built-in dataset: a deterministic table with planted effects whose truth is known.

Credit applications, one row per applicant, with a classifier's default prediction,
a regressor's prediction of monthly spend, and the ground truth of what was planted:

- ``region=South, education=Primary``: the classifier's false-positive rate is 0.35
  there, 0.08 everywhere else (its false-negative rate is 0.25 everywhere).
- ``employment=Self-employed``: a hard cohort. Spend varies three times as much there,
  signal and noise alike; the regressor is as good as elsewhere relative to the
  cohort's own spread, so its error is high and so is the cohort's trivial baseline.
- ``channel=App``: a defect. The regressor's predictions for app applicants are 70
  too high (a unit bug), so its error is high while the cohort's baseline is ordinary.

Nothing else is planted: the default rate is 0.3 for everyone, and the classifier's
error rates and the regressor's noise do not depend on any other attribute.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["load_demo", "DEMO_ROLES", "DEMO_TRUTH", "DEMO_ATTRIBUTES", "load_demo_models",
           "DEMO_COMPARE", "DEMO_COMPARE_TRUTH"]

#: The columns to slice the demo table by.
DEMO_ATTRIBUTES = ["age", "sex", "region", "education", "employment", "channel", "income"]

#: Column roles of the demo table, as keyword arguments of :func:`divergence.scan`.
DEMO_ROLES = {
    "classification": dict(target="defaulted", prediction="predicted_default", positive="yes",
                           metrics=["fpr", "fnr"]),
    "regression": dict(target="spend", prediction="predicted_spend", regression=True,
                       metrics=["abs_error"]),
    "ranking": dict(rank_by="predicted_spend", gamma="dcg"),
}

#: What was planted, as itemsets.
DEMO_TRUTH = {
    "elevated_fpr": "region=South, education=Primary",
    "hard_cohort": "employment=Self-employed",
    "defect": "channel=App",
}

_REGIONS = ["North", "South", "East", "West"]
_EDUCATION = ["Primary", "Secondary", "Degree"]
_EMPLOYMENT = ["Salaried", "Self-employed", "Public sector", "Retired"]
_CHANNELS = ["Branch", "Web", "App"]


def load_demo(n_rows: int = 10_000, seed: int = 7) -> pd.DataFrame:
    """The built-in credit-applications table (same rows for the same arguments)."""
    rng = np.random.default_rng(seed)
    n = int(n_rows)
    age = np.clip(np.round(rng.normal(42, 13, n)), 18, 85).astype(int)
    sex = rng.choice(["Female", "Male"], n)
    region = rng.choice(_REGIONS, n, p=[0.3, 0.25, 0.25, 0.2])
    education = rng.choice(_EDUCATION, n, p=[0.25, 0.45, 0.3])
    employment = rng.choice(_EMPLOYMENT, n, p=[0.55, 0.12, 0.2, 0.13])
    channel = rng.choice(_CHANNELS, n, p=[0.35, 0.45, 0.2])
    income = np.round(np.exp(rng.normal(np.log(45), 0.45, n)), 1)  # thousands a year

    # classification: default rate 0.3 for all; the classifier errs at fixed rates,
    # except for false positives in the planted group
    defaulted = rng.random(n) < 0.3
    planted = (region == "South") & (education == "Primary")
    fp_rate = np.where(planted, 0.35, 0.08)
    flip = np.where(defaulted, rng.random(n) < 0.25, rng.random(n) < fp_rate)
    predicted = defaulted ^ flip
    score = np.where(predicted, 0.5 + 0.5 * rng.beta(2, 2, n), 0.5 * rng.beta(2, 2, n))

    # regression: spend = signal + noise; the regressor knows the signal
    edu_level = np.array([_EDUCATION.index(e) for e in education])
    signal = 120 + 2.2 * income + 25 * edu_level + 0.8 * (age - 42)
    noise = rng.normal(0, 30, n)
    hard = employment == "Self-employed"
    center = 120 + 2.2 * 45 + 25 + 0.0
    scale = np.where(hard, 3.0, 1.0)
    spend = center + scale * (signal - center) + scale * noise
    model_noise = rng.normal(0, 8, n)
    predicted_spend = center + scale * (signal - center) + model_noise
    defect = channel == "App"
    # the defect: app applicants' predictions carry a unit bug that inflates them
    predicted_spend = np.where(defect, predicted_spend + 70.0, predicted_spend)

    return pd.DataFrame({
        "applicant_id": np.arange(100_001, 100_001 + n),
        "age": age,
        "sex": sex,
        "region": region,
        "education": education,
        "employment": employment,
        "channel": channel,
        "income": income,
        "defaulted": np.where(defaulted, "yes", "no"),
        "predicted_default": np.where(predicted, "yes", "no"),
        "default_score": np.round(score, 4),
        "spend": np.round(spend, 2),
        "predicted_spend": np.round(predicted_spend, 2),
    })


#: The built-in comparison: the models above against the previous ones of load_demo_models.
DEMO_COMPARE = {
    "classification": dict(target="defaulted", prediction="predicted_default", reference="previous_default",
                           positive="yes", metrics=["error", "fpr", "fnr"]),
    "regression": dict(target="spend", prediction="predicted_spend", reference="previous_spend",
                       regression=True, metrics=["abs_error"]),
}

#: What was planted in the comparison (the new model against the previous one).
DEMO_COMPARE_TRUTH = {
    "worse_fpr": "region=South, education=Primary",   # the new classifier's elevated FPR is new
    "better_fnr": "channel=App",                      # the previous classifier missed defaults there
    "worse_abs_error": "channel=App",                 # the new regressor's unit bug is new
}


def load_demo_models(n_rows: int = 10_000, seed: int = 7) -> pd.DataFrame:
    """The built-in table with the previous version of both models scored on the same rows
    (``previous_default``, ``previous_score``, ``previous_spend``), for comparisons.

    The previous classifier's false-positive rate is 0.10 everywhere (the new one: 0.35 in
    ``region=South, education=Primary``, 0.08 elsewhere: worse there, a little better
    elsewhere); its false-negative rate is 0.25, but 0.40 for ``channel=App`` (where the new
    one is better). The previous regressor has no unit bug for app applicants (the new one
    is worse there) and noisier predictions elsewhere (the new one is a little better).
    The columns of :func:`load_demo` are the same, row for row.
    """
    df = load_demo(n_rows, seed)
    rng = np.random.default_rng([seed, 1])  # a stream of its own: load_demo's rows are unchanged
    n = len(df)
    defaulted = (df["defaulted"] == "yes").to_numpy()
    app = (df["channel"] == "App").to_numpy()
    flip = np.where(defaulted, rng.random(n) < np.where(app, 0.40, 0.25), rng.random(n) < 0.10)
    previous = defaulted ^ flip
    score = np.where(previous, 0.5 + 0.5 * rng.beta(2, 2, n), 0.5 * rng.beta(2, 2, n))
    truth_signal = df["predicted_spend"].to_numpy() - np.where(app, 70.0, 0.0)
    previous_spend = truth_signal + rng.normal(0, 12, n)
    return df.assign(previous_default=np.where(previous, "yes", "no"), previous_score=np.round(score, 4),
                     previous_spend=np.round(previous_spend, 2))
