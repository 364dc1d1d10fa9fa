"""The attribute screen's rules measured against the model (issue 19, point 2): columns that read
the target far better than the model (recorded after the outcome), another model's outputs, near
copies of another attribute. Fixtures: tests/screen_fixtures.py (synthetic) and ../shared/data."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import DATA_DIR
from screen_fixtures import post_outcome, two_models

from divergence import scan, screen_attributes
from divergence.data.column_rules import loo_accuracy
from divergence.table import split_items

DATA = DATA_DIR  # ../shared/data, or $DIVERGENCE_DATA
POST = ["in_collections", "days_to_missed_payment", "agency"]


def _items(table) -> set[str]:
    """The attributes that appear in some slice of the table."""
    return {item.split("=")[0] for s in table.frame["itemset"] if s for item in split_items(s, table.attributes)}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_post_outcome_columns_and_near_copies_leave_a_strong_ignored_attribute(seed):
    df = post_outcome(seed=seed)
    s = screen_attributes(df, ["defaulted", "predicted"], target="defaulted", prediction="predicted")
    # employment raises defaults from ~27% to ~60% and the model ignores it: a finding, kept
    assert s.attributes == ["age", "region", "income", "prior_defaults", "employment"]
    assert set(POST) <= set(s.left_out)
    assert s.kinds["in_collections"] == "after the outcome"
    assert "read from it alone on" in s.left_out["in_collections"]
    assert s.kinds["region_recorded"] == s.kinds["age_at_application"] == "near copy"
    assert s.copies == {"region_recorded": "region", "age_at_application": "age"}
    assert s.left_out["region_recorded"].startswith("a near copy of attribute 'region': the same value on 9")
    assert any("Left out column 'agency' from the attributes:" in n for n in s.notes)


def test_a_scan_with_roles_only_slices_by_no_post_outcome_column():
    df = post_outcome(seed=0)
    t = scan(df, target="defaulted", prediction="predicted", positive=1, metrics=["fpr", "fnr"], min_support=0.05)
    assert not (_items(t) & set(POST + ["region_recorded", "age_at_application"]))
    assert "employment" in _items(t)
    assert any(n.startswith("Left out column 'in_collections'") for n in t.notes)
    # one click back: naming a column brings it back
    t = scan(df, target="defaulted", prediction="predicted", positive=1, metrics=["fpr"], min_support=0.05,
             attributes=["employment", "in_collections"])
    assert "in_collections" in _items(t)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_another_models_outputs_are_left_out_and_offered(seed):
    df = two_models(seed=seed)
    s = screen_attributes(df, ["survived", "pred_gb"], target="survived", prediction="pred_gb")
    assert s.attributes == ["pclass", "sex", "age", "sibsp", "fare", "embarked"]
    assert s.kinds["pred_lr"] == s.kinds["proba_lr"] == "another model"
    assert s.models == {"pred_lr": "labels", "proba_lr": "score"}
    assert s.left_out["pred_lr"].startswith("another model's labels: agrees with the prediction 'pred_gb' on 9")
    assert s.kinds["proba_gb"] == "leakage"  # the model's own score
    t = scan(df, target="survived", prediction="pred_gb", positive=1, metrics=["fpr", "fnr"], min_support=0.02)
    assert not (_items(t) & {"pred_lr", "proba_lr", "proba_gb"})


def test_the_line_a_genuine_feature_a_weak_model_ignores_stays():
    """A feature moving the positive rate from 30% to 70% on half the rows, ignored by a model no better
    than chance, stays; the same feature recorded after the outcome (97% pure where present) goes."""
    rng = np.random.default_rng(3)
    n = 5000
    f = rng.integers(0, 2, n)
    y = (rng.random(n) < np.where(f == 1, 0.7, 0.3)).astype(int)
    pred = rng.integers(0, 2, n)
    flag = np.where(y == 1, rng.random(n) < 0.5, rng.random(n) < 0.015).astype(int)
    df = pd.DataFrame({"f": f, "g": rng.choice(list("abc"), n), "flag": flag, "y": y, "p": pred})
    s = screen_attributes(df, ["y", "p"], target="y", prediction="p")
    assert s.attributes == ["f", "g"]
    assert s.kinds["flag"] == "after the outcome"
    assert s.left_out["flag"].startswith("where it is 1 (")


def test_loo_accuracy_gives_rare_values_nothing():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 2000)
    unique = np.arange(2000)  # every value once: in-sample 100%, out of sample the commonest class
    assert loo_accuracy(unique, 2000, y, 2) == max(y.mean(), 1 - y.mean())
    # two groups of known counts: (3 ones, 1 zero) and (2, 2)
    assert loo_accuracy(np.array([0, 0, 0, 0, 1, 1, 1, 1]), 2, np.array([1, 1, 1, 0, 1, 1, 0, 0]), 2) == 3 / 8


def test_a_regressors_rival_and_a_post_outcome_column():
    rng = np.random.default_rng(1)
    n = 4000
    x = rng.normal(0, 1, n)
    spend = 100 + 20 * x + rng.normal(0, 10, n)
    df = pd.DataFrame({"x_band": np.digitize(x, [-1, 0, 1]), "region": rng.choice(list("NSEW"), n),
                       "refund": np.round(spend + rng.normal(0, 1, n)),  # known after the purchase
                       "old_model": 100 + 20 * x + rng.normal(0, 6, n),
                       "spend": spend, "predicted": 100 + 20 * x + rng.normal(0, 8, n)})
    s = screen_attributes(df, ["spend", "predicted"], target="spend", prediction="predicted")
    assert s.attributes == ["x_band", "region"]
    assert s.kinds["old_model"] == "another model" and s.models["old_model"] == "prediction"
    assert s.kinds["refund"] in ("after the outcome", "another model")


needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data is absent (public datasets for tests)")


@needs_data
def test_raw_compas_with_roles_only():
    from divergence.data.io import load_table

    raw = load_table(DATA / "compas-scores-two-years.csv").frame
    s = screen_attributes(raw, ["two_year_recid", "decile_score"], target="two_year_recid", score="decile_score",
                          threshold=8)
    post = ["event", "end", "r_days_from_arrest", "is_violent_recid", "vr_charge_degree", "vr_charge_desc"]
    assert {s.kinds[c] for c in post} == {"after the outcome"}
    assert ("read from it alone on 89.2% of rows, from the score 'decile_score' at its most accurate threshold (6) "
            "on 65.8%") in s.left_out["event"]
    assert s.kinds["v_decile_score"] == s.kinds["v_score_text"] == "another model"
    assert s.copies == {"priors_count.1": "priors_count"}
    assert "priors_count" in s.attributes and "age" in s.attributes and "juv_fel_count" in s.attributes
    t = scan(raw, target="two_year_recid", score="decile_score", threshold=8, positive=1, metrics=["fpr", "fnr"])
    assert not (_items(t) & set(post + ["v_decile_score", "priors_count.1"]))
    assert "priors_count" in _items(t)


@needs_data
@pytest.mark.parametrize("name", ["adult_discretized.csv", "compas_discretized.csv"])
def test_every_attribute_of_adult_and_compas_stays(name):
    df = pd.read_csv(DATA / name)
    s = screen_attributes(df, ["class", "predicted"], target="class", prediction="predicted")
    assert s.attributes == [c for c in df.columns if c not in ("class", "predicted")]
    assert len(s.attributes) == (11 if name.startswith("adult") else 6)


@needs_data
def test_law_data_keeps_its_attributes():
    df = pd.read_csv(DATA / "law_data.csv")
    s = screen_attributes(df, ["ZFYA"], target="ZFYA")
    # first_pf (passed the first year) is a sibling outcome of ZFYA (issue 44), the rest stay
    assert s.attributes == ["race", "sex", "LSAT", "UGPA", "region_first", "sander_index"]
    assert s.kinds["first_pf"] == "after the outcome"


@needs_data
def test_raw_compas_leaves_out_the_same_columns_at_every_threshold():
    """issue 30 point 6: whether a column was recorded after the outcome (or is another model's output)
    does not depend on the threshold the prediction is read at: the rules read the score at its most
    accurate threshold, and a score's ranking for the groups a column marks."""
    from divergence.data.io import load_table

    raw = load_table(DATA / "compas-scores-two-years.csv").frame
    screens = {th: screen_attributes(raw, ["two_year_recid", "decile_score"], target="two_year_recid",
                                     score="decile_score", threshold=th) for th in (2, 4, 5, 6, 7, 8, 9)}
    first = screens[8]
    for th, s in screens.items():
        assert s.attributes == first.attributes, th
        assert s.left_out == first.left_out, th
    for c in ("is_violent_recid", "vr_charge_degree", "vr_charge_desc", "event", "end", "r_days_from_arrest"):
        assert first.kinds[c] == "after the outcome", c


def test_a_scores_leak_rules_do_not_move_with_the_threshold():
    """A synthetic classifier with a score: a column recorded after the outcome (it marks a tenth of the
    rows, nearly all positives, that the score ranks like any positives) is left out at every threshold;
    a genuine attribute the score uses, as pure, stays at every threshold."""
    from divergence.data.column_rules import model_rules, most_accurate_threshold

    rng = np.random.default_rng(3)
    n = 6000
    y = (rng.random(n) < 0.4).astype(int)
    vip = np.where(rng.random(n) < 0.12, "yes", "no")  # genuine: nearly all positive, and the score knows it
    y = np.where((vip == "yes") & (rng.random(n) < 0.95), 1, y)
    score = np.clip(0.35 + 0.25 * y + 0.35 * (vip == "yes") + rng.normal(0, 0.2, n), 0, 1).round(3)
    later = np.where((y == 1) & (rng.random(n) < 0.3), "recorded", "none")  # marks positives the score cannot
    df = pd.DataFrame(dict(vip=vip, later=later, region=rng.choice(["a", "b", "c"], n), y=y, score=score))
    best = most_accurate_threshold(score, y)
    assert 0.3 < best < 0.9
    found = {th: model_rules(df, ["vip", "later", "region"], target="y", score="score", threshold=th)
             for th in (0.2, 0.4, best, 0.7, 0.9)}
    for th, f in found.items():
        assert set(f) == {"later"}, (th, f)
        assert f["later"].kind == "after the outcome" and "ranks them no higher" in f["later"].reason


def test_the_most_accurate_threshold_is_the_brute_force_one():
    from divergence.data.column_rules import most_accurate_threshold

    rng = np.random.default_rng(0)
    for _ in range(20):
        s = rng.integers(0, 12, 300).astype(float)
        s[rng.random(300) < 0.05] = np.nan
        y = (rng.random(300) < 0.2 + 0.05 * np.nan_to_num(s)).astype(np.int64)
        ok = ~np.isnan(s)
        acc = {t: np.mean((s[ok] >= t) == (y[ok] == 1)) for t in [*np.unique(s[ok]), np.inf]}
        top = max(acc.values())
        assert most_accurate_threshold(s, y) == min(t for t, a in acc.items() if a == top)


def test_near_copies_text_codes_split_the_rows_as_the_text_does():
    """The near copies' bound compares columns as text (missing as "\\u0001"): a column of text gives
    its group codes for it (no text built nor factorized again), which must split the rows exactly as its
    text does, and the text is factorized where they could differ (a value "\\u0001", objects, numbers)."""

    from divergence.data.column_rules import _text_codes, groups

    def same_split(a, b):
        pairs = pd.Series(a.astype(np.int64) * (int(b.max()) + 2) + b.astype(np.int64))
        return pairs.nunique() == len(np.unique(a)) == len(np.unique(b))

    rng = np.random.default_rng(5)
    words = np.array(["a", "b", "=x", "", " a", "A", "\u0001"], dtype=object)
    for trial in range(60):
        values = words[rng.integers(0, 6 if trial % 2 else 7, 500)].astype(object)
        values[rng.random(500) < 0.1] = None
        for s in (pd.Series(values, dtype="string"), pd.Series(values, dtype="str"),
                  pd.Series(values, dtype=object), pd.Series(rng.integers(0, 4, 500).astype(float))):
            codes = groups(s)[0]
            text = pd.factorize(s.astype("string").fillna("\u0001").to_numpy())[0]
            assert same_split(_text_codes(s, codes), text)
