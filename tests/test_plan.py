"""Slice plans: written and read back unchanged, re-running the same scan, bad files named."""
from __future__ import annotations

import numpy as np
import pytest

from divergence import DivergenceInputError, scan
from divergence.datasets import DEMO_ATTRIBUTES, load_demo
from divergence.plan import SlicePlan, dump_plan, load_plan, parse_plan, save_plan

PLAN = SlicePlan(
    scan=dict(target="defaulted", prediction="predicted_default", positive="yes", metrics=["fpr", "fnr"],
              attributes=list(DEMO_ATTRIBUTES), bins={"age": [30.0, 50.0], "income": 4}, quantile_bins=3,
              binning="quantile", min_support=0.03, max_length=3),
    statistics=dict(confidence=0.9, correction="holm", bootstrap=0, seed=0),
    explain=dict(redundancy=0.01),
    replication=dict(kind="holdout", share=0.3),
    data=dict(source="built-in", rows=10_000),
    kind="pre-registered",
)


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_round_trip(tmp_path, suffix):
    path = save_plan(PLAN, tmp_path / f"plan{suffix}")
    back = load_plan(path)
    assert back == PLAN
    text = path.read_text()
    assert ('"divergence_plan": 1' in text) if suffix == ".json" else text.startswith("divergence_plan: 1\n")


def test_numpy_values_become_plain():
    plan = SlicePlan(scan=dict(outcome="spend", min_support=np.float64(0.1), max_length=np.int64(2),
                               bins={"age": np.array([30.0, 50.0])}, positive=np.int64(1)))
    text = dump_plan(plan)
    assert "!!python" not in text
    back = parse_plan(text)
    assert back.scan == dict(outcome="spend", min_support=0.1, max_length=2, bins={"age": [30.0, 50.0]}, positive=1)


def test_the_plan_reruns_the_same_scan():
    df = load_demo(3000)
    plan = parse_plan(dump_plan(PLAN))
    direct = scan(df, **PLAN.scan, **PLAN.statistics)
    again = scan(df, **plan.scan, **plan.statistics)
    assert direct.frame.equals(again.frame) and len(direct) > 10


@pytest.mark.parametrize("text, message", [
    ("", "The plan file is empty."),
    ("scan: [1, 2", r"not valid YAML or JSON \(line 1\)"),
    ("[1, 2]", "must be a mapping of sections"),
    ("statistics: {confidence: 0.9}", "has no 'scan' section"),
    ("scan: {min_support: 0.1}\nfilters: {}", "Unknown section 'filters'"),
    ("scan: {min_supp: 0.1}", "Unknown key 'min_supp' in the plan's scan section"),
    ("scan: {outcome: x}\nstatistics: {alpha: 0.1}", "Unknown key 'alpha' in the plan's statistics section"),
    ("scan: {outcome: x}\nreplication: {kind: twice}", "Unknown replication kind 'twice'"),
    ("scan: {outcome: x}\nreplication: {kind: holdout, column: p}", "Unknown key 'column' in the plan's replication"),
    ("scan: {outcome: x}\nkind: final", "Plan kind must be exploratory or pre-registered; got 'final'"),
    ("divergence_plan: 2\nscan: {outcome: x}", "Plan version 2 is not supported"),
    ("scan: 3", "Section 'scan' of the plan must be a mapping; got 3"),
])
def test_bad_plans_are_named(text, message):
    with pytest.raises(DivergenceInputError, match=message):
        parse_plan(text)


def test_missing_file_and_bad_bytes(tmp_path):
    with pytest.raises(DivergenceInputError, match="Plan file '.*nope.yaml' does not exist"):
        load_plan(tmp_path / "nope.yaml")
    with pytest.raises(DivergenceInputError, match="not UTF-8 text"):
        parse_plan(b"\xff\xfe\x00scan")
