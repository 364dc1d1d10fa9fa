"""The result's typed per-metric statistics (``SliceTable.statistics``, ``by_metric``): the same
numbers as the frame's columns, every column of a metric in exactly one place."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from divergence import Settings, mine, scan
from divergence.data.datasets import DEMO_ROLES, load_demo
from divergence.table import MetricStatistics


@pytest.fixture(scope="module")
def table():
    return scan(load_demo(), **DEMO_ROLES["classification"], min_support=0.05, bootstrap=50, seed=1)


def test_each_statistic_is_the_frames_column(table):
    f = table.frame
    for m in table.metric_names:
        s = table.statistics(m)
        assert isinstance(s, MetricStatistics) and s.name == m and s.overall == pytest.approx(table.overall(m))
        np.testing.assert_array_equal(s.q, f[f"{m}_q"].to_numpy())
        np.testing.assert_array_equal(s.divergence, f[f"{m}_divergence"].to_numpy())
        assert list(s.verdict) == list(f[f"{m}_verdict"]) and list(s.itemsets) == list(f["itemset"])
        assert s.n_min == table.assessment.min_size[m].n_min and s.delta == pytest.approx(0.05)
        assert s.n_power == table.assessment.min_size[m].n_power
        # every column of the metric is a named field or in ``other``, once
        own = {c for c in table.columns if c == m or c.startswith(m + "_")}
        named = {m if k == "value" else f"{m}_{k}" for k in s.frame.columns if k not in s.other}
        assert named | {f"{m}_{k}" for k in s.other} == own and not named & {f"{m}_{k}" for k in s.other}
        assert {"boot_low", "boot_high"} <= set(s.other)
        assert s.frame.index.name == "itemset" and len(s.frame) == len(table)
    assert list(table.by_metric) == ["fpr", "fnr"] and table.statistics().name == "fpr"


def test_a_mined_table_has_the_first_five_and_no_assessment():
    mined = mine(load_demo(), Settings.from_keywords(**DEMO_ROLES["classification"], min_support=0.05))
    s = mined.statistics("fnr")
    assert s.q is None and s.verdict is None and s.n_min is None and s.other == {}
    assert len(s.value) == len(s.count) == len(s.p) == len(mined)


def test_a_metric_whose_name_starts_another_keeps_its_own_columns():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.choice(list("xy"), 300), "spend": rng.normal(size=300),
                       "spend_2": rng.normal(size=300)})
    t = scan(df, outcome=["spend", "spend_2"], min_support=0.1)
    assert set(t.statistics("spend").frame.columns).isdisjoint({"2", "2_p", "2_q"})
    np.testing.assert_array_equal(t.statistics("spend_2").value, t.frame["spend_2"].to_numpy())


def test_every_itemset_round_trips_whatever_its_values_hold():
    """Issue 33 F11: a value holding ``", b=1"`` (another attribute's item) made 3 of 8 itemsets fail
    ``table.lookup`` (a traceback on the Intervals page, a failed report). The text is cut where the
    table's own items allow."""
    import numpy as np
    import pandas as pd

    import divergence

    rng = np.random.default_rng(1)
    n = 2000
    df = pd.DataFrame({"city": rng.choice(["Paris, b=1", "Rome", "x, city=Rome", "a,b"], n), "b": rng.choice(["1", "2"], n),
                       "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n)})
    t = divergence.scan(df, target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.01)
    assert len(t) > 10
    assert [t.lookup(s) for s in t.frame["itemset"]] == list(range(len(t)))
    assert t.lookup("city=Paris, b=1, b=2") == t.lookup(["city=Paris, b=1", "b=2"])


def test_a_table_is_its_itemsets_and_four_named_parts():
    """Issue 29: what passes from mining to assessment is a named, typed part of the table, never a
    loose field: the lattice, the kept rows, the rows to replicate on, the assessment."""
    import dataclasses

    from divergence.prepare.kept_rows import KeptRows
    from divergence.prepare.replication_rows import ReplicationRows
    from divergence.table import Assessment, Lattice, MinSize, SliceTable

    names = [f.name for f in dataclasses.fields(SliceTable)]
    assert names[-4:] == ["lattice", "kept_rows", "replication", "assessment"] and len(names) == 17
    demo = load_demo()
    kw = dict(**DEMO_ROLES["classification"], min_support=0.05, holdout=0.3)
    mined = mine(demo, **kw)
    assert isinstance(mined.lattice, Lattice) and mined.lattice.parent[0] == -1 and mined.lattice.work > 0
    assert isinstance(mined.kept_rows, KeptRows) and mined.kept_rows.codes.shape == (mined.n_rows, len(mined.attributes))
    assert len(mined.kept_rows.positions) == mined.n_rows and len(mined.kept_rows.outcomes) == 2
    assert isinstance(mined.replication, ReplicationRows) and mined.replication.holdout == 0.3
    assert len(mined.replication.rows) + mined.n_rows == len(demo) and mined.assessment is None
    assessed = scan(demo, **kw)
    a = assessed.assessment
    assert isinstance(a, Assessment) and a.replication == mined.replication.label
    assert a.replication_rows == len(mined.replication.rows)
    assert all(isinstance(a.min_size[m], MinSize) and a.min_size[m].n_min >= 1 for m in assessed.metric_names)
    assert set(a.n_tested) == set(a.family_size) == set(assessed.metric_names)


def test_a_few_itemsets_names_are_the_columns_without_every_rows_string(monkeypatch):
    """``itemsets_of`` gives the rows' readable itemsets (those of ``itemsets``): a few joined on
    their own, more from the Arrow column; a scan's statistics name their findings with it and
    build neither every row's Python string (10 MiB on Adult) nor the Arrow column."""
    import divergence.table as table_module

    t = scan(load_demo(), **DEMO_ROLES["classification"], min_support=0.05)
    assert "itemsets" not in t.__dict__ and "_itemset_array" not in t.__dict__
    rows = np.array([3, 0, len(t) - 1, 3])
    got = t.itemsets_of(rows)
    assert "itemsets" not in t.__dict__ and "_itemset_array" not in t.__dict__
    every = np.arange(len(t))
    monkeypatch.setattr(table_module, "FEW_NAMES", 0)  # the Arrow column's way, for the same rows
    assert t.itemsets_of(rows) == got and "_itemset_array" in t.__dict__
    assert t.itemsets_of(every) == [str(x) for x in t.itemsets]
    assert got == [str(x) for x in t.itemsets[rows]] and got[1] == "" and t.itemsets_of([]) == []
    assert "=" in got[0] and ", " in t.itemsets[np.argmax(t.lengths)]
    assert t.itemsets_of(rows) == got  # the same from the built column
