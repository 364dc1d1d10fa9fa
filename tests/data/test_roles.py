"""Role guessing of a new table (divergence.data.roles): names first, then values; unsure roles empty."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import data_file

from divergence import build_outcomes
from divergence.data.datasets import load_demo
from divergence.data.roles import guess_positive, guess_roles


def _rng(seed=0):
    return np.random.default_rng(seed)


def test_raw_compas_asks_for_the_target_and_the_score_never_guesses_sex():
    df = pd.read_csv(data_file("compas-scores-two-years.csv"))
    g = guess_roles(df)
    assert g.task == "classification"
    # three *_recid columns fit the target equally: the user chooses, nothing is guessed
    assert g.target is None and g.candidates["target"] == ("is_recid", "is_violent_recid", "two_year_recid")
    # no predicted labels in the file; decile_score.1 is a copy of decile_score, not a third candidate
    assert g.prediction is None
    assert g.score is None and g.candidates["score"] == ("decile_score", "v_decile_score")
    assert "sex" not in (g.target, g.prediction, g.score)
    assert any("two_year_recid" in n for n in g.notes())


def test_law_data_has_no_model_output_and_asks_what_to_measure():
    g = guess_roles(pd.read_csv(data_file("law_data.csv")))
    assert (g.target, g.prediction, g.score, g.outcome) == (None, None, None, None)  # not sex / first_pf
    assert g.task == "classification" and "not recognised" in g.reasons["task"]


def test_curated_files_are_guessed_and_their_roles_build_outcomes():
    for name in ("compas_discretized.csv", "adult_discretized.csv"):
        df = pd.read_csv(data_file(name))
        g = guess_roles(df)
        assert (g.task, g.target, g.prediction, g.positive) == ("classification", "class", "predicted", 1)
        outcomes = build_outcomes(df, target=g.target, prediction=g.prediction, positive=g.positive,
                                  metrics=["fpr", "fnr"])
        assert [o.name for o in outcomes] == ["fpr", "fnr"]


def test_built_in_demo_pairs_the_prediction_and_score_with_their_target():
    g = guess_roles(load_demo(2000))
    assert (g.task, g.target, g.prediction, g.positive) == ("classification", "defaulted", "predicted_default", "yes")
    # the score named after the target, not predicted_spend (a regression's prediction)
    assert (g.score, g.threshold) == ("default_score", 0.5)
    assert "named after it" in g.reasons["target"]


def test_a_prediction_must_share_the_targets_values():
    n = 300
    df = pd.DataFrame({"label": _rng().integers(0, 2, n), "pred": _rng(1).choice(["Low", "High"], n),
                       "sex": _rng(2).choice(["F", "M"], n)})
    g = guess_roles(df)
    assert g.target == "label" and g.prediction is None
    assert "does not share the values of 'label'" in g.reasons["prediction"]
    # numbers match however they are spelled: 0/1 against 0.0/1.0 and "0"/"1"
    df["pred"] = _rng(3).integers(0, 2, n).astype(float)
    assert guess_roles(df).prediction == "pred"
    df["pred"] = _rng(3).integers(0, 2, n).astype(str)
    assert guess_roles(df).prediction == "pred"


def test_two_equally_good_targets_are_left_to_the_user():
    n = 200
    df = pd.DataFrame({"label": _rng().integers(0, 2, n), "target": _rng(1).integers(0, 2, n),
                       "x": _rng(2).normal(size=n)})
    g = guess_roles(df)
    assert g.target is None and g.candidates["target"] == ("label", "target") and g.positive is None
    # an exact name beats a pattern
    df = pd.DataFrame({"y": _rng().integers(0, 2, n), "is_recid": _rng(1).integers(0, 2, n)})
    assert guess_roles(df).target == "y"


def test_a_name_alone_is_not_enough_a_target_is_binary():
    n = 200
    df = pd.DataFrame({"class": _rng().integers(0, 3, n), "predicted": _rng(1).integers(0, 3, n),
                       "g": _rng(2).choice(list("ab"), n)})
    g = guess_roles(df)
    assert g.target is None and g.prediction is None and "target" not in g.candidates


def test_scores_probabilities_and_their_thresholds():
    n = 500
    rng = _rng()
    base = pd.DataFrame({"is_fraud": rng.integers(0, 2, n), "region": rng.choice(list("NSEW"), n)})
    # a probability: threshold 0.5
    g = guess_roles(base.assign(fraud_proba=rng.random(n)))
    assert (g.target, g.score, g.threshold, g.prediction) == ("is_fraud", "fraud_proba", 0.5, None)
    assert "named after it" in g.reasons["target"]
    # named a probability but outside [0, 1]: not a score
    g = guess_roles(base.assign(fraud_proba=rng.random(n) * 100))
    assert g.score is None and "score" not in g.candidates
    # a score on another scale: the threshold is the user's
    g = guess_roles(base.assign(risk_score=rng.integers(1, 11, n)))
    assert (g.score, g.threshold) == ("risk_score", None) and "from 1 to 10" in g.reasons["score"]
    # a copy of the score (pandas names a repeated header 'x.1') is not a second candidate
    s = rng.integers(1, 11, n)
    g = guess_roles(base.assign(**{"risk_score": s, "risk_score.1": s}))
    assert g.score == "risk_score"


def test_regression_and_numeric_outcomes():
    n = 300
    rng = _rng()
    price = rng.normal(100, 10, n)
    g = guess_roles(pd.DataFrame({"price": price, "predicted_price": price + rng.normal(0, 1, n),
                                  "city": rng.choice(list("abc"), n)}))
    assert (g.task, g.target, g.prediction) == ("regression", "price", "predicted_price")
    g = guess_roles(pd.DataFrame({"x": [1.5, 2.5, 3.5], "y": [0.1, 0.2, 0.3], "g": ["a", "b", "c"]}))
    assert (g.task, g.outcome) == ("outcome", "y")
    g = guess_roles(pd.DataFrame({"a": [1.5, 2.5, 3.5], "b": [0.1, 0.2, 0.3]}))
    assert (g.task, g.outcome, g.target) == ("classification", None, None)  # nothing recognised: the user says


def test_booleans_and_text_labels():
    n = 200
    rng = _rng()
    g = guess_roles(pd.DataFrame({"y": rng.random(n) < 0.3, "y_pred": rng.random(n) < 0.3,
                                  "g": rng.choice(list("ab"), n)}))
    assert (g.target, g.prediction, g.positive) == ("y", "y_pred", True)
    g = guess_roles(pd.DataFrame({"outcome": rng.choice(["no", "yes"], n), "prediction": rng.choice(["yes", "no"], n)}))
    assert (g.target, g.prediction, g.positive) == ("outcome", "prediction", "yes")
    g = guess_roles(pd.DataFrame({"label": rng.choice(["cat", "dog"], n), "pred_label": rng.choice(["cat", "dog"], n)}))
    assert g.positive == "dog" and "check it" in g.reasons["positive"]


def test_guess_positive():
    assert guess_positive(pd.Series([0, 1, 1, 0])) == 1
    assert guess_positive(pd.Series(["<=50K", ">50K"])) == ">50K"
    assert guess_positive(pd.Series(["b", "a", None])) == "b"
    assert guess_positive(pd.Series(["a", "b", "c"])) is None  # not binary: nothing to guess


@pytest.mark.parametrize("frame", [pd.DataFrame(), pd.DataFrame({"only": [np.nan] * 5}),
                                   pd.DataFrame({"label": [1] * 5})])
def test_degenerate_tables_give_an_empty_guess(frame):
    g = guess_roles(frame)
    assert g.target is None and g.prediction is None and g.outcome is None and "not recognised" in g.reasons["task"]
