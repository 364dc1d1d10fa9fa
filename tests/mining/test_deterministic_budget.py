"""The same data and settings give the same table on any machine and under any load (issue 21):
the default budget counts work (slices, and units of mining work: rows x attributes the miner
visits), not seconds; the time limit is only a safety net, and when it cuts a scan every surface
says so (the API warns, the command line and the report say it)."""
from __future__ import annotations

import multiprocessing as mp
import time
import warnings

import numpy as np
import pandas as pd
import pytest

from divergence import DivergenceInputError, Settings, SlicePlan, scan
from divergence.budget import MAX_WORK, TIME_CUT, TIME_LIMIT
from divergence.errors import DivergenceTimeLimitWarning
from divergence.report.page import build_report
from divergence.report.plan import dump_plan, parse_plan


def wide(n: int = 20_000, attrs: int = 12, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"c{j:02d}": rng.choice(list("abcd"), n) for j in range(attrs)})
    df["o"] = rng.normal(size=n)
    return df


def _spin(stop) -> None:
    while not stop.is_set():
        pass


def _scan(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DivergenceTimeLimitWarning)  # a cut by time would fail the test
        return scan(df, outcome="o", min_support=kw.pop("min_support", 0.002), bootstrap=0, **kw)


@pytest.mark.slow
def test_a_work_budget_gives_the_same_table_idle_and_under_load():
    df = wide()
    quiet = _scan(df, max_work=100_000_000)
    stop = mp.Event()
    busy = [mp.Process(target=_spin, args=(stop,), daemon=True) for _ in range(3)]  # more than the cores
    for p in busy:
        p.start()
    try:
        time.sleep(0.5)
        loaded = _scan(df, max_work=100_000_000)
    finally:
        stop.set()
        for p in busy:
            p.join(5)
    q, lo = quiet.lattice, loaded.lattice
    assert q.cut_by == lo.cut_by == "work" and q.complete_length == lo.complete_length
    assert quiet.lattice.work == loaded.lattice.work > 100_000_000 // 2
    assert list(quiet.itemsets) == list(loaded.itemsets) and len(quiet) > 1000
    np.testing.assert_array_equal(quiet.tallies, loaded.tallies)
    assert quiet.notes == loaded.notes
    assert any("more than 100,000,000 units of mining work (max_work)" in n for n in quiet.notes)


def test_the_default_budget_is_work_and_the_time_limit_a_safety_net():
    m = Settings.from_keywords(outcome="o").mining
    assert m.max_work == MAX_WORK == 10_000_000_000 and m.time_limit == TIME_LIMIT == 600.0
    t = _scan(wide(n=1500, attrs=10), min_support=0.01)
    assert t.lattice.cut_by is None and t.lattice.work > 0


def test_a_cut_by_the_time_limit_is_said_on_every_surface():
    df = wide(n=4000, attrs=30, seed=3)
    with pytest.warns(DivergenceTimeLimitWarning) as caught:
        t = scan(df, outcome="o", min_support=0.0005, time_limit=1.0, max_work=None, bootstrap=0)
    assert t.lattice.cut_by == "time" and str(caught[0].message) in t.notes
    note = next(n for n in t.notes if n.startswith(TIME_CUT))
    assert "it depends on this machine's speed and load" in note and "raise the time limit" in note
    html = build_report(t)
    assert "<p class='warn'><b>Cut by the time limit.</b> The time limit (1 s, a safety net)" in html
    assert html.index("class='warn'") < html.index("<dl class='meta'>")  # before anything else


@pytest.mark.parametrize("value, message", [
    (0, "max_work must be a positive integer"), (-5, "max_work must be a positive integer"),
    (1.5, "max_work must be a positive integer"), ("lots", "max_work must be a positive integer"),
])
def test_bad_work_budgets_are_one_line(value, message):
    with pytest.raises(DivergenceInputError, match=message):
        Settings.from_keywords(outcome="o", max_work=value)


def test_a_plan_keeps_its_work_budget():
    settings = Settings.from_keywords(outcome="o", max_work=2_000_000_000)
    plan = SlicePlan.from_settings(settings)
    assert parse_plan(dump_plan(plan)).settings.mining.max_work == 2_000_000_000
    assert Settings.from_keywords(outcome="o", max_work=None).mining.max_work is None
