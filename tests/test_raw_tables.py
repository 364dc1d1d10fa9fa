"""Raw, wide tables as analysts have them, scanned with nothing but the roles given: the raw
ProPublica COMPAS file, the law school data, and a synthetic 60-column table."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
from conftest import ROOT, data_file

from divergence import scan

#: columns of the raw COMPAS file no slice may use: names, ids, case numbers, dates,
#: constant or all-missing columns, and copies or functions of the score
COMPAS_LEFT_OUT = ["id", "name", "first", "last", "compas_screening_date", "dob", "c_jail_in", "c_jail_out",
                   "c_case_number", "c_offense_date", "c_arrest_date", "r_case_number", "r_offense_date",
                   "r_jail_in", "r_jail_out", "violent_recid", "vr_case_number", "vr_offense_date",
                   "type_of_assessment", "decile_score.1", "score_text", "screening_date",
                   "v_type_of_assessment", "v_screening_date", "in_custody", "out_custody"]


def _attributes_used(itemsets: pd.Series) -> set:
    used = set()
    for s in itemsets.dropna():
        for item in str(s).split(", "):
            if item:
                used.add(item.split("=", 1)[0])
    return used


def test_raw_compas_from_the_command_line(tmp_path):
    """The issue's acceptance run: only the roles, exit 0, none of the left-out columns in any
    slice, priors_count among the top FPR divergences."""
    path = data_file("compas-scores-two-years.csv")
    out = tmp_path / "out.csv"
    r = subprocess.run([sys.executable, "-m", "divergence", "scan", str(path), "--target", "two_year_recid",
                        "--score", "decile_score", "--threshold", "8", "--positive", "1", "--metric", "fpr,fnr",
                        "--output", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    assert "appear more than once in the header" in r.stderr  # decile_score and priors_count, renamed
    f = pd.read_csv(out, keep_default_na=False, na_values=[""], low_memory=False)  # text columns mostly empty
    used = _attributes_used(f["itemset"])
    assert not used & set(COMPAS_LEFT_OUT), used & set(COMPAS_LEFT_OUT)
    assert {"priors_count", "age", "sex", "race"} <= used
    top = f.sort_values("fpr_divergence", ascending=False).head(10)
    assert top["itemset"].str.contains("priors_count=").any()
    assert f["length"].max() >= 3


def test_raw_compas_python_notes_say_what_was_left_out():
    df = pd.read_csv(data_file("compas-scores-two-years.csv"))
    t = scan(df, target="two_year_recid", score="decile_score", threshold=8, positive=1, metrics=["fpr"],
             max_length=2)
    text = " ".join(t.notes)
    for col in ("'first'", "'c_case_number'", "'dob'", "'violent_recid'", "'type_of_assessment'",
                "'decile_score.1'", "'score_text'"):
        assert col in text
    assert not set(t.attributes) & set(COMPAS_LEFT_OUT)


def test_law_school_data_with_the_target_only():
    df = pd.read_csv(data_file("law_data.csv"))
    t = scan(df, outcome="ZFYA", min_support=0.02)
    assert "Unnamed: 0" not in t.attributes
    assert {"race", "sex", "LSAT", "UGPA", "region_first"} <= set(t.attributes)
    assert t.lattice.complete_length is None and len(t) > 100
    assert [b.kind for b in t.bins if b.name == "sex"] == ["categorical"]  # a 1/2 code stays an attribute


def synthetic_wide(n: int = 20_000, seed: int = 0) -> pd.DataFrame:
    """60 columns as a raw export has them: ids, names, dates, free text, copies of the target,
    constant and empty columns, codes, and genuine attributes (some redundant with others)."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.35).astype(int)
    score = np.clip(rng.normal(0.35 + 0.3 * y, 0.2), 0, 1).round(4)
    cols: dict = {"row_id": np.arange(1, n + 1), "uuid": [f"{rng.integers(1 << 62):x}-{i}" for i in range(n)],
                  "customer_name": [f"{a} {b}" for a, b in zip(rng.choice([f"Name{k}" for k in range(900)], n),
                                                                rng.choice([f"Surname{k}" for k in range(1500)], n))],
                  "created": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 900, n), unit="D"),
                  "note": [f"called on day {i} about order {rng.integers(1e6)}, customer {w}" for i, w in
                           enumerate(rng.choice(["happy", "angry", "unsure"], n))],
                  "source": "export", "unused": np.nan,
                  "label_copy": y, "label_text": np.where(y == 1, "churned", "stayed"),
                  "score_pct": (score * 100).round(2)}
    cols["created"] = cols["created"].strftime("%Y-%m-%d %H:%M:%S")
    for k in range(20):  # categorical attributes, a few informative
        cols[f"cat{k:02d}"] = rng.choice(list("abcde")[: 2 + k % 4], n)
    for k in range(15):  # numeric attributes
        cols[f"num{k:02d}"] = rng.normal(size=n).round(3)
    for k in range(8):  # codes with few values
        cols[f"code{k}"] = rng.integers(1, 6, n)
    cols["email"] = [f"user{i}@example.org" for i in rng.permutation(n)]
    cols["updated"] = (pd.Timestamp("2021-06-01") + pd.to_timedelta(rng.integers(0, 400, n), unit="D")).strftime(
        "%d/%m/%Y")
    cols["score_band"] = np.round(score, 1)
    cols["cat00_copy"] = cols["cat00"]
    cols["num00_missing"] = np.where(rng.random(n) < 0.1, np.nan, cols["num00"])
    df = pd.DataFrame(cols)
    df["y"], df["score"] = y, score
    assert df.shape[1] == 60 + 2 - 2  # 60 columns, target and score included
    return df


def test_synthetic_wide_raw_table():
    df = synthetic_wide(8000)
    t = scan(df, target="y", score="score", threshold=0.5, positive=1, metrics=["fpr", "fnr"])
    left = {"row_id", "uuid", "customer_name", "created", "note", "source", "unused", "label_copy",
            "label_text", "score_pct", "email", "updated", "score_band"}
    assert not left & set(t.attributes)
    assert {f"code{k}" for k in range(8)} <= set(t.attributes)  # 1-5 codes stay attributes
    used = _attributes_used(pd.Series(t.itemsets))
    assert not used & left
    # cat00_copy repeats cat00: left out as its copy, named in the notes (issue 19: one name per finding)
    assert "cat00_copy" not in t.attributes and "cat00_copy" not in used
    assert "Left out column 'cat00_copy' from the attributes: a copy of attribute 'cat00'." in t.notes
