"""A score without a threshold (issue 44): 0.5 with a note within [0, 1]; otherwise refused in one line
naming the score's range, in Python, on the command line and in compare (for the reference too)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

from divergence import DivergenceInputError, compare, scan
from divergence.data.datasets import load_demo


@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    df = load_demo(2000)
    df["decile"] = np.ceil(df["default_score"] * 10).clip(1, 10)  # the same model on a 1-10 scale
    return df


ROLES = dict(target="defaulted", positive="yes", metrics=["fpr", "fnr"], attributes=["sex", "region", "education"])


def test_score_in_unit_interval_is_cut_at_half_with_a_note(demo):
    t = scan(demo, score="default_score", **ROLES)
    explicit = scan(demo, score="default_score", threshold=0.5, **ROLES)
    assert t.params["threshold"] == 0.5
    assert t.notes[0] == ("No threshold given for the score 'default_score': its values lie in [0, 1] (from "
                          f"{demo.default_score.min():g} to {demo.default_score.max():g}), so rows are predicted "
                          "positive where it is at least 0.5 (set threshold=, --threshold to choose).")
    assert not any("No threshold given" in n for n in explicit.notes)
    np.testing.assert_allclose(t.overall("fpr"), explicit.overall("fpr"))
    np.testing.assert_allclose(t.frame["fpr"], explicit.frame["fpr"])


def test_score_outside_unit_interval_is_refused(demo):
    with pytest.raises(DivergenceInputError, match=r"The score 'decile' runs from 1 to 10, not within \[0, 1\]: "
                                                   r"give its threshold with --threshold \(threshold=\)"):
        scan(demo, score="decile", **ROLES)
    t = scan(demo, score="decile", threshold=6, **ROLES)  # given: no note, cut where asked
    assert t.params["threshold"] == 6 and not any("No threshold" in n for n in t.notes)


def test_command_line_refuses_in_one_line_and_notes_the_default(demo, tmp_path):
    path = tmp_path / "demo.csv"
    demo.to_csv(path, index=False)
    base = [sys.executable, "-m", "divergence", "scan", str(path), "--target", "defaulted", "--positive", "yes",
            "--metric", "fpr", "--attributes", "sex,region"]
    r = subprocess.run(base + ["--score", "decile"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("divergence: error: The score 'decile' runs from 1 to 10"), lines
    r = subprocess.run(base + ["--score", "default_score", "--verbose"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "No threshold given for the score 'default_score'" in r.stdout + r.stderr


def test_compare_reference_score_alike(demo):
    df = demo.assign(other=np.clip(demo.default_score + 0.1 * (demo.index % 3 - 1), 0, 1))
    c = compare(df, target="defaulted", positive="yes", score="default_score", reference_score="other",
                metrics=["fpr"], attributes=["sex", "region"])
    assert sum("No threshold given for the score 'default_score'" in n for n in c.notes) == 1
    assert sum("No threshold given for the reference score 'other'" in n for n in c.notes) == 1
    with pytest.raises(DivergenceInputError, match=r"The reference score 'decile' runs from 1 to 10.*"
                                                   r"--reference-threshold"):
        compare(df, target="defaulted", positive="yes", score="default_score", reference_score="decile",
                metrics=["fpr"], attributes=["sex", "region"])
    with pytest.raises(DivergenceInputError, match=r"The score 'decile' runs from 1 to 10"):
        compare(df, target="defaulted", positive="yes", score="decile", reference_score="other",
                metrics=["fpr"], attributes=["sex", "region"])
