"""One attribute screen for every way in (issue 44): a fitted model's outputs screened like a score
(other models' outputs, copies of a feature left out), an outcome alone's sibling outcomes, the note
saying which screen ran; and no real attribute lost where no such column exists."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from conftest import data_file

from divergence import scan
from divergence.data.columns import screen
from divergence.data.io import load_table
from divergence.prepare.model_outputs import apply_models
from divergence.settings import Settings

MEASURED = ("leakage", "another model", "after the outcome", "near copy")


def screened(df: pd.DataFrame, **keywords):
    """The screen a scan with these keywords runs (a fitted model's outputs computed first)."""
    run = apply_models(df, keywords)
    st = Settings.resolve(None, run.keywords)
    return run, screen(run.data, st.roles.columns(), **st.roles.screen_keywords())[0]


@pytest.fixture(scope="module")
def raw_compas() -> pd.DataFrame:
    return load_table(data_file("compas-scores-two-years.csv")).frame


@pytest.fixture(scope="module")
def law() -> pd.DataFrame:
    return load_table(data_file("law_data.csv")).frame


FEATURES = ["age", "priors_count", "juv_fel_count", "juv_misd_count", "juv_other_count"]
OTHERS = re.compile(r"^(decile_score(\.1)?|score_text|v_decile_score|v_score_text|priors_count\.1|is_recid|r_.*|vr_.*)$")


def test_fitted_model_on_raw_compas_slices_by_no_other_model_nor_copy(raw_compas):
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(max_iter=1000).fit(raw_compas[FEATURES], raw_compas["two_year_recid"])
    run, found = screened(raw_compas, target="two_year_recid", positive=1, model=model, features=FEATURES,
                          threshold=0.5, metrics=["fpr"])
    assert [a for a in found.attributes if OTHERS.match(a)] == []
    for col in ("decile_score", "v_decile_score", "score_text", "v_score_text"):
        assert found.kinds[col] == "another model", (col, found.left_out[col])
    assert found.left_out["v_score_text"].startswith("determined by column 'v_decile_score'")
    assert "priors_count.1" not in run.data.columns  # left out with the feature it copies, and said so
    assert "nor 'priors_count.1', a copy of feature 'priors_count'" in run.notes[-1]
    assert {"sex", "race", "c_charge_degree"} <= set(found.attributes)
    assert found.notes[0].startswith("Attribute screen measured against the score 'model_score' (cut at 0.5) "
                                     "and the target 'two_year_recid'")


def test_score_path_keeps_the_real_attributes_of_raw_compas(raw_compas):
    _, found = screened(raw_compas, target="two_year_recid", positive=1, score="decile_score", threshold=8,
                        metrics=["fpr"])
    assert {"priors_count", "age", "juv_fel_count", "sex", "race", "c_charge_degree"} <= set(found.attributes)
    assert found.kinds["v_decile_score"] == "another model"
    assert found.kinds["v_score_text"] == "another model"


@pytest.mark.parametrize("outcome, sibling", [("ZFYA", "first_pf"), ("first_pf", "ZFYA")])
def test_outcome_alone_leaves_out_its_sibling_outcome(law, outcome, sibling):
    _, found = screened(law, outcome=[outcome])
    assert found.kinds[sibling] == "after the outcome"
    assert f"an outcome of the same rows, a sibling of '{outcome}'?" in found.left_out[sibling]
    assert re.search(r"\d\.\d times as well as from any other attribute", found.left_out[sibling])  # how much better
    assert set(found.attributes) == {"race", "sex", "LSAT", "UGPA", "region_first", "sander_index"}
    assert found.notes[0].startswith(f"Attribute screen of the outcome '{outcome}' alone (no model to measure")


def test_outcome_alone_keeps_genuine_attributes_and_a_named_sibling(law):
    _, found = screened(law, outcome=["LSAT"])
    assert "race" in found.attributes  # read from LSAT best, but a cause, not an outcome
    assert found.kinds["sander_index"] == "after the outcome"  # an index computed from LSAT itself
    t = scan(law, outcome=["ZFYA"], attributes=["race", "first_pf"], metrics=None, min_support=0.05)
    assert "first_pf" in t.attributes and any("first_pf" in str(s) for s in t.frame["itemset"])


def test_fitted_model_features_are_not_leaks_of_its_outputs():
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(3)
    n = 4000
    df = pd.DataFrame({"a": rng.choice(list("xyz"), n), "b": rng.choice(list("pq"), n), "c": rng.choice(list("uvw"), n),
                       "num": rng.normal(size=n)})
    df["num.1"] = df["num"]
    df["y"] = (rng.random(n) < np.where(df.a == "x", 0.6, 0.3) + 0.1 * (df.b == "p")).astype(int)
    feats = ["a", "b", "num"]
    model = make_pipeline(make_column_transformer((OneHotEncoder(), ["a", "b"]), ("passthrough", ["num"])),
                          LogisticRegression()).fit(df[feats], df["y"])
    run, found = screened(df, target="y", positive=1, model=model, features=feats, threshold=0.5, metrics=["fpr"])
    assert found.attributes == ["a", "b", "c"]  # the score is a function of a and b: they stay its attributes
    assert "num.1" not in run.data.columns and "num" not in run.data.columns


def wide(n: int = 3000, seed: int = 1) -> pd.DataFrame:
    """Genuine attributes only: independent and correlated numbers, 1-10 ratings, categories, flags."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(n, 3))
    cols = {}
    for k in range(40):
        kind = k % 5
        if kind == 0:
            cols[f"num{k}"] = rng.normal(size=n) * 3 + 10
        elif kind == 1:
            cols[f"corr{k}"] = latent[:, k % 3] * rng.uniform(0.7, 3) + rng.normal(size=n)
        elif kind == 2:
            cols[f"rating{k}"] = np.clip(np.round(5.5 + 2 * latent[:, (k + 1) % 3] + 1.5 * rng.normal(size=n)), 1, 10)
        elif kind == 3:
            cols[f"cat{k}"] = rng.choice([f"c{i}" for i in range(k % 6 + 2)], n)
        else:
            cols[f"flag{k}"] = (rng.random(n) < 0.3).astype(int)
    df = pd.DataFrame(cols)
    numeric = [c for c in df.columns if not c.startswith("cat")]
    z = sum(((df[c] - df[c].mean()) / df[c].std()) * w for c, w in zip(numeric[:8], rng.normal(size=8))) / 2
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(int)
    df["outcome"] = z + rng.normal(size=n)
    return df


def test_no_real_attribute_lost_on_a_table_without_such_columns():
    from sklearn.linear_model import LogisticRegression

    df = wide()
    real = [c for c in df.columns if c not in ("y", "outcome")]
    feats = [c for c in real if not c.startswith("cat")][:4]
    model = LogisticRegression(max_iter=1000).fit(df[feats], df["y"])
    df["score"] = model.predict_proba(df[feats])[:, 1]
    df["pred"] = (df["score"] >= 0.5).astype(int)
    ways = [dict(target="y", positive=1, score="score", threshold=0.5),
            dict(target="y", positive=1, prediction="pred"),
            dict(target="y", positive=1, model=model, features=feats, threshold=0.5),
            dict(outcome=["outcome"]), dict(outcome=["y"])]
    for keywords in ways:
        data = df.drop(columns=["score", "pred"]) if "model" in keywords else df
        _, found = screened(data.drop(columns=["outcome"] if "target" in keywords else []), metrics=["fpr"]
                            if "target" in keywords else None, **keywords)
        lost = {c: found.left_out[c] for c in real if found.kinds.get(c) in MEASURED}
        assert lost == {}, (keywords, lost)


def test_a_score_on_categories_leaves_none_of_its_inputs_out():
    """A score of many values "gives" each category it is computed from; only intervals of it leak."""
    rng = np.random.default_rng(5)
    n = 6000
    df = pd.DataFrame({c: rng.choice([f"{c}{i}" for i in range(3)], n) for c in "abcd"})
    weight = {v: rng.normal() for c in "abcd" for v in df[c].unique()}
    z = sum(df[c].map(weight) for c in "abcd")
    df["score"] = 1 / (1 + np.exp(-z))  # a function of four categories: 81 values
    df["y"] = (rng.random(n) < df["score"]).astype(int)
    df["band"] = pd.cut(df["score"], [0, 0.3, 0.7, 1], labels=["low", "mid", "high"]).astype(str)
    _, found = screened(df, target="y", positive=1, score="score", threshold=0.5, metrics=["fpr"])
    assert found.attributes == list("abcd")
    assert found.kinds["band"] == "leakage" and "determined by the score 'score'" in found.left_out["band"]
