"""The default attributes: each rule that leaves a column out, and the look-alikes it keeps."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import data_file

from divergence import AttributeScreen, DivergenceInputError, scan, screen_attributes
from divergence.data.io import load_table
from divergence.prepare.discretize import discretize

N = 400


@pytest.fixture
def rng():
    return np.random.default_rng(11)


def _names(rng, n, pool=3000):
    first = [f"{a}{b}" for a in ("jo", "ma", "li", "ka", "de", "ro", "sa", "mi", "an", "el", "ty", "qu")
             for b in ("hn", "ry", "sa", "ne", "rek", "bert", "die", "chael", "drea", "la", "ler", "inn")]
    last = [f"{a}{b}" for a in ("smi", "jo", "wil", "bro", "gar", "mar", "lee", "cla", "lew", "rob", "wal",
                                "you", "kin", "sco", "gre") for b in ("th", "nes", "son", "wn", "cia", "tin",
                                                                      "ker", "ark", "is", "ley", "ng")]
    return [f"{rng.choice(first)} {rng.choice(last)}" for _ in range(n)]


def test_each_rule_and_its_look_alike(rng):
    """One column per exclusion rule, each beside a column that looks like it and is an attribute."""
    y = rng.integers(0, 2, N)
    score = rng.integers(1, 11, N)
    df = pd.DataFrame({
        "Unnamed: 0": np.arange(N),                                     # row index
        "case_id": rng.permutation(10_000_000)[:N] + 10_000_000,        # identifier (numeric)
        "case_number": [f"{i:08d}CF10A" for i in rng.permutation(10**6)[:N]],  # identifier (text)
        "rating": rng.integers(1, 6, N),                                # look-alike: a 1-5 code
        "region": rng.choice([11, 12, 31, 47, 52], N),                  # look-alike: a numeric code
        "income": rng.normal(50_000, 9_000, N).round(2),                # look-alike: unique floats
        "holder": _names(rng, N),                                       # person names (by values: no telling header)
        "city": rng.choice([f"city{k}" for k in range(30)], N),         # look-alike: many rare values
        "visit": pd.date_range("2013-01-01", periods=N, freq="D").strftime("%Y-%m-%d"),  # dates
        "visit_time": [f"{h:02d}:{m:02d}:00" for h, m in zip(rng.integers(0, 24, N), rng.integers(0, 60, N))],
        "grade": rng.choice(["A1-3", "B2-4", "C3-5"], N),               # look-alike: digits in text
        "comment": [f"the client said item {i} was {w} and asked again" for i, w in
                    zip(range(N), rng.choice(["fine", "late", "broken", "missing"], N))],  # free text
        "kind": ["assessment"] * N,                                     # constant
        "flag": np.where(rng.random(N) < 0.3, "yes", None),             # look-alike: one value + missing
        "empty": [np.nan] * N,                                          # all missing
        "y_copy": y.copy(),                                             # leakage: copy of the target
        "y_text": np.where(y == 1, "recidivist", "none"),               # leakage: relabelling
        "score_copy": score.copy(),                                     # leakage: copy of the score
        "score_level": np.where(score >= 8, "High", np.where(score >= 5, "Medium", "Low")),  # function
        "score_pct": score * 10.0 + 3,                                  # leakage: monotone transform
        "sex": rng.choice(["F", "M"], N),                               # look-alike: binary, independent
        "y": y,
        "score": score,
    })
    screen = screen_attributes(df, ["y", "score"], target="y", score="score", threshold=8)
    assert isinstance(screen, AttributeScreen)
    want = {"Unnamed: 0": "row index", "case_id": "identifier", "case_number": "identifier",
            "holder": "name", "visit": "date", "visit_time": "date", "comment": "free text",
            "kind": "constant", "empty": "all missing", "y_copy": "leakage", "y_text": "leakage",
            "score_copy": "leakage", "score_level": "leakage", "score_pct": "leakage"}
    assert screen.kinds == want
    assert screen.attributes == ["rating", "region", "income", "city", "grade", "flag", "sex"]
    assert list(screen.left_out) == [c for c in df.columns if c in want]  # column order
    assert screen.left_out["y_copy"] == "a copy of the target 'y'"
    assert screen.left_out["score_copy"] == "a copy of the score 'score'"
    assert "determined by the score 'score'" in screen.left_out["score_level"]
    assert "relabelling of the score 'score'" in screen.left_out["score_pct"]
    assert "relabelling of the target 'y'" in screen.left_out["y_text"]
    assert screen.left_out["kind"] == "one value ('assessment') on every row"
    # one note per kind, each naming its columns; leakage one per column, with its reason
    assert any(n.startswith("Left out 2 identifier columns") and "'case_id'" in n for n in screen.notes)
    assert "Left out column 'y_copy' from the attributes: a copy of the target 'y'." in screen.notes
    assert "Left out column 'Unnamed: 0' from the attributes: it only numbers the rows." in screen.notes


def test_leakage_of_the_prediction_and_partial_copies(rng):
    y = rng.integers(0, 2, N)
    pred = np.where(rng.random(N) < 0.8, y, 1 - y)
    partial = np.where(rng.random(N) < 0.7, pred.astype(float), np.nan)  # a copy where present
    df = pd.DataFrame({"pred_word": np.where(pred == 1, "high", "low"), "pred_partial": partial,
                       "g": rng.choice(list("abc"), N), "y": y, "pred": pred})
    screen = screen_attributes(df, ["y", "pred"], target="y", prediction="pred")
    assert screen.kinds == {"pred_word": "leakage", "pred_partial": "leakage"}
    assert screen.attributes == ["g"]
    assert "where it is present" in screen.left_out["pred_partial"]


def test_transforms_and_intervals_of_a_continuous_score(rng):
    score = rng.random(N)
    df = pd.DataFrame({"logit": np.log(score / (1 - score)), "band": np.round(score, 1),
                       "noisy": score + rng.normal(0, 0.05, N), "y": rng.integers(0, 2, N), "score": score})
    screen = screen_attributes(df, ["y", "score"], target="y", score="score", threshold=0.5)
    assert "increasing transform of the score 'score'" in screen.left_out["logit"]
    assert "determined by the score 'score' (intervals of its values)" == screen.left_out["band"]
    # close to the score, no function of it, but ranking the rows like it: another model's score
    assert screen.kinds["noisy"] == "another model"
    assert screen.left_out["noisy"].startswith("another model's score: orders the rows like the score 'score'")
    assert screen.models == {"noisy": "score"}
    assert screen.attributes == []


def test_a_strong_but_honest_attribute_stays(rng):
    """A column that predicts the target well (85%), not near-perfectly, is an attribute."""
    y = rng.integers(0, 2, 2000)
    strong = np.where(rng.random(2000) < 0.85, y, 1 - y)
    df = pd.DataFrame({"strong": np.where(strong == 1, "s", "t"), "y": y})
    assert screen_attributes(df, ["y"], target="y").attributes == ["strong"]


def test_near_copy_of_the_target_and_second_score(rng):
    n = 3000
    y = rng.integers(0, 2, n)
    score = rng.integers(1, 11, n)
    other = np.clip(score + rng.integers(-1, 2, n), 1, 10)  # another 1-10 score, close to the first
    df = pd.DataFrame({"near": np.where(rng.random(n) < 0.98, y, 1 - y), "other": other,
                       "other_text": np.where(other >= 8, "High", "Low"), "age": rng.integers(18, 80, n),
                       "y": y, "score": score})
    screen = screen_attributes(df, ["y", "score"], target="y", score="score")
    assert screen.kinds == {"near": "leakage", "other": "another model", "other_text": "another model"}
    assert "near copy of the target 'y'" in screen.left_out["near"]
    assert "another model's score: on the scale of the score 'score'" in screen.left_out["other"]
    assert screen.left_out["other_text"] == "determined by column 'other', itself another model's output"
    assert screen.models == {"other": "score"}
    assert screen.attributes == ["age"]


def test_tiny_tables_keep_their_columns():
    df = pd.DataFrame({"g": list("aabb"), "id": ["x1", "x2", "x3", "x4"], "y": [1, 0, 1, 0], "p": [1, 1, 0, 0]})
    screen = screen_attributes(df, ["y", "p"], target="y", prediction="p")
    assert screen.attributes == ["g", "id"]


def test_scan_uses_the_screen_and_says_why(rng):
    y = rng.integers(0, 2, N)
    df = pd.DataFrame({"id": np.arange(N), "g": rng.choice(list("ab"), N), "y_copy": y, "y": y,
                       "p": rng.integers(0, 2, N)})
    t = scan(df, target="y", prediction="p", positive=1, min_support=0.1)
    assert t.attributes == ("g",)
    assert "Left out column 'y_copy' from the attributes: a copy of the target 'y'." in t.notes
    # named explicitly, a left-out column is an attribute again
    t = scan(df, target="y", prediction="p", positive=1, min_support=0.1, attributes=["g", "y_copy"])
    assert t.attributes == ("g", "y_copy")


# ----------------------------------------------------------------------------- dates by period
def test_date_columns_bin_by_period():
    dates = pd.Series(pd.date_range("2013-01-15", "2014-12-15", freq="MS").strftime("%Y-%m-%d").tolist() * 3)
    df = pd.DataFrame({"d": dates, "o": np.arange(len(dates), dtype=float)})
    for period, first, count in (("month", "2013-02", 23), ("quarter", "2013-Q1", 8), ("year", "2013", 2)):
        b = discretize(df, ["d"], bins={"d": period}).bins[0]
        assert b.kind == "date" and b.period == period
        assert b.labels[0] == first and len(b.labels) == count
        assert list(b.labels) == sorted(b.labels)
    # without bins: the finest period with at most 12 items (two years: quarters)
    b = discretize(df, ["d"]).bins[0]
    assert b.period == "quarter"
    t = scan(df, outcome="o", attributes=["d"], min_support=0.01, bins={"d": "year"})
    assert t.row("d=2014")["count"] == (dates.str[:4] == "2014").sum()
    with pytest.raises(DivergenceInputError, match="must be edges, a bin count or a period"):
        discretize(df, ["d"], bins={"d": "week"})
    bad = df.assign(d=df["d"].where(df.index != 3, "soon"))
    with pytest.raises(DivergenceInputError, match="holds values that are not dates.*'soon'"):
        discretize(bad, ["d"], bins={"d": "month"})


def test_datetime_dtype_and_missing_dates():
    s = pd.Series(pd.to_datetime(["2013-01-05", "2013-05-05", None, "2015-03-01"] * 10))
    b = discretize(pd.DataFrame({"d": s}), ["d"]).bins[0]
    assert b.kind == "date" and b.labels == ("2013-01", "2013-05", "2015-03", "missing")  # 3 months


# ----------------------------------------------------------------------------- raw COMPAS
def test_raw_compas_default_attributes():
    df = load_table(data_file("compas-scores-two-years.csv")).frame
    screen = screen_attributes(df, ["two_year_recid", "decile_score"], target="two_year_recid",
                               score="decile_score", threshold=8)
    kinds = screen.kinds
    for col in ("name", "first", "last"):  # a person's name by its header (divergence.data.personal)
        assert kinds[col] == "personal identifier"
        assert screen.left_out[col] == "a person's name (by its header)"
    for col in ("c_case_number", "r_case_number", "vr_case_number"):
        assert kinds[col] == "identifier"
    for col in ("compas_screening_date", "dob", "c_jail_in", "c_jail_out", "screening_date", "in_custody"):
        assert kinds[col] == "date"
    assert kinds["id"] == "identifier" and kinds["violent_recid"] == "all missing"
    assert kinds["type_of_assessment"] == kinds["v_type_of_assessment"] == "constant"
    assert kinds["decile_score.1"] == kinds["score_text"] == "leakage"
    for col in ("sex", "age", "age_cat", "race", "priors_count", "juv_fel_count", "c_charge_degree"):
        assert col in screen.attributes


def test_an_outcome_column_is_checked_as_a_target(rng):
    o = rng.normal(size=N).round(2)
    df = pd.DataFrame({"o_copy": o, "o_sign": np.where(o > 0, "up", "down"), "g": rng.choice(list("ab"), N),
                       "o": o})
    t = scan(df, outcome="o", min_support=0.1)
    assert t.attributes == ("g",)
    assert "Left out column 'o_sign' from the attributes: determined by the target 'o' (intervals of its values)." \
        in t.notes
