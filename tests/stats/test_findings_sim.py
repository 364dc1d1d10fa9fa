"""Distinct findings and the estimates at the top of the default order, by simulation (a few seeds
of each world; benchmarks/sim_findings.py runs 200 and prints the table in docs/method-record.md)."""
from __future__ import annotations

import pytest

from divergence.simulate import findings_run, findings_summary

SEEDS = range(6)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["one", "two", "null", "planted"])
def test_findings_worlds(kind):
    runs = [findings_run(kind, seed) for seed in SEEDS]
    rows = findings_summary(runs)
    assert rows
    failed = [(setting, value, target) for setting, _, value, target, ok in rows if not ok]
    assert not failed, failed
    if kind == "one":  # every run: the cohort alone, first, its refinements explained
        assert all(r["findings"] == ["a0=v0"] and r["first"] == "a0=v0" for r in runs)
    if kind == "two":
        assert all(set(r["cohorts"]) <= set(r["findings"]) and len(r["findings"]) <= 4 for r in runs)
