"""compare() by simulation (seeded, deterministic): no false alarms where the two models are
exchangeable or differ only in the shape of their errors, and the planted worse and better
slices found. The full count (200 runs per setting) is ``benchmarks/validation/sim_compare.py``; this
runs the same generator a few times."""
from __future__ import annotations

import pytest
from sim_compare import ALPHA, run_once


@pytest.mark.parametrize("setting, runs", [
    ("labels null", 8), ("regression null", 3), ("regression hard cohort", 3),
    ("regression skewed", 4), ("regression skewed squared", 3),
])
def test_no_false_alarm_where_nothing_changed(setting, runs):
    results = [run_once(setting, seed, n_rows=6000) for seed in range(runs)]
    assert all(r["tested"] > 1000 for r in results)  # slices down to 30 rows, every metric
    # each run alarms with probability at most ALPHA: none of these seeded runs should
    assert sum(r["alarm"] for r in results) == 0, [r for r in results if r["alarm"]]


@pytest.mark.parametrize("setting", ["labels planted", "regression planted"])
def test_planted_slices_found_and_few_false_findings(setting):
    results = [run_once(setting, seed) for seed in range(3)]  # 10,000 rows: the planted slices meet n_min
    for r in results:
        found = {k: v for k, v in r.items() if k.endswith("_found")}
        assert found and all(found.values()), found
        assert r["false"] <= ALPHA * r["findings"]  # BH: false findings a small share of the findings
