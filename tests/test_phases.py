"""The two public phases of a scan (issue 22): ``mine`` (the slices, their outcomes and divergences)
and ``assess`` (the worst-slice statistics); ``scan`` is one then the other, and the dashboard's
worker mines once and assesses once."""
from __future__ import annotations

import sys

import pandas as pd
import pytest

import divergence
import ui.worker as worker
from divergence import MinedTable, SliceTable, assess, mine, scan
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, load_demo

SUPPORT = dict(attributes=list(DEMO_ATTRIBUTES), min_support=0.05)
STATS = dict(confidence=0.9, correction="bonferroni", bootstrap=30, seed=1, exploratory=True)
#: the columns the mining phase computes, per metric (besides itemset, length, support and count)
MINED = ("", "_count", "_divergence", "_t", "_p")


@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    return load_demo(6000)


def _same(a: SliceTable, b: SliceTable) -> None:
    pd.testing.assert_frame_equal(a.frame, b.frame, check_exact=True)
    assert repr(a.assessment) == repr(b.assessment)
    assert a.notes == b.notes


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_assess_of_mine_is_scan(demo, task):
    roles = DEMO_ROLES[task]
    _same(assess(mine(demo, **roles, **SUPPORT)), scan(demo, **roles, **SUPPORT))
    # other statistics: given to scan, or to assess of the same mined table
    mined = mine(demo, **roles, **SUPPORT, seed=1)
    _same(assess(mined, **{k: v for k, v in STATS.items() if k != "exploratory"}), scan(demo, **roles, **SUPPORT, **STATS))


@pytest.mark.parametrize("extra", [dict(holdout=0.3, seed=4), dict(binning="tree", seed=2)],
                         ids=["holdout", "tree"])
def test_assess_of_mine_is_scan_where_mining_reads_the_seed(demo, extra):
    roles = DEMO_ROLES["regression"]
    mined = mine(demo, **roles, **SUPPORT, **extra)
    out = scan(demo, **roles, **SUPPORT, **extra)
    _same(assess(mined, seed=extra["seed"]), out)
    if "holdout" in extra:  # the held-out rows travel in the mined table: assess replicates on them
        assert mined.replication.holdout == 0.3 and len(mined.replication.rows) + mined.n_rows == len(demo)
        assert out.assessment.replication == mined.replication.label
        assert "abs_error_replicated" in out.frame.columns


def test_a_query_scan_keeps_its_replication_table_per_query():
    from test_queries import _planted

    df, other = _planted(0, nq=600), _planted(1, nq=400)
    kw = dict(query="q", relevance="rel", rank_by="score", metrics=["mrr"], min_support=0.05)
    mined = mine(df, **kw, replicate=other)
    assert len(mined.replication.rows) == 400  # one row per query
    _same(assess(mined), scan(df, **kw, replicate=other))
    assert "mrr_replicated" in assess(mined).frame.columns


def test_mine_has_no_statistics_columns(demo):
    roles = DEMO_ROLES["classification"]
    mined = mine(demo, **roles, **SUPPORT)
    assert isinstance(mined, MinedTable) and mined.assessment is None
    names = mined.metric_names
    assert list(mined.frame.columns) == ["itemset", "length", "support", "count"] + [
        f"{m}{s}" for m in names for s in MINED]
    out = assess(mined)
    assert {f"{m}_{c}" for m in names for c in ("q", "ci_low", "verdict")} <= set(out.frame.columns)
    # assessing again starts from the mined columns: the same table
    _same(assess(out), out)


def test_scan_costs_one_assessment(demo, monkeypatch):
    calls = _count_assess(monkeypatch)
    scan(demo, **DEMO_ROLES["classification"], **SUPPORT)
    assert calls == {"assess": 1, "mine": 1}


def _count_assess(monkeypatch) -> dict:
    """Count every assessment (however it is reached) and every mining pass."""
    calls = {"assess": 0, "mine": 0}
    original = sys.modules["divergence.stats.assess"].assess
    mined_table = sys.modules["divergence.mining.mined"]
    miner = mined_table.mine

    def counted(*args, **kwargs):
        calls["assess"] += 1
        return original(*args, **kwargs)

    def mined(*args, **kwargs):
        calls["mine"] += 1
        return miner(*args, **kwargs)

    monkeypatch.setattr(sys.modules["divergence.stats.assess"], "assess", counted)
    monkeypatch.setattr(divergence, "assess", counted)
    monkeypatch.setattr(mined_table, "mine", mined)
    return calls


def _request(**extra) -> worker.ScanRequest:
    base = dict(scan=dict(**DEMO_ROLES["classification"], **SUPPORT), statistics=dict(STATS))
    base.update(extra)
    return worker.ScanRequest(**base)


def _rows_of(request: worker.ScanRequest):
    """The second file's rows and their words, as the request's Settings carry them (or None)."""
    rep = request.settings.replication if request.settings is not None else None
    return (rep.rows, rep.label) if rep is not None and rep.rows is not None else (None, None)


def _before(request: worker.ScanRequest) -> SliceTable:
    """What the worker computed before the phases: a scan (assessed at the default statistics), then
    assessed again at the request's, on the second file given beside; a holdout scanned at once with them."""
    if "holdout" in request.scan:
        return scan(request.frame, **request.scan, **request.statistics)
    if request.path is not None:
        mined = divergence.scan_duckdb(request.path, **request.scan)
    else:
        mined = scan(request.frame, **request.scan)
    kw = dict(request.statistics)
    rows, label = _rows_of(request)
    if rows is not None:
        kw.update(replicate=rows, replication_label=label)
    return assess(mined, **kw)


@pytest.mark.parametrize("case", ["plain", "holdout", "replicate", "duckdb"])
def test_the_worker_mines_once_and_assesses_once(demo, case, monkeypatch, tmp_path):
    from divergence import Settings
    from divergence.settings import Replication

    extra: dict = dict(frame=demo)
    if case == "holdout":  # its own seed: the held-out rows do not move with the statistics' seed
        extra.update(scan=dict(**DEMO_ROLES["classification"], **SUPPORT, holdout=0.25, holdout_seed=1))
    elif case == "replicate":  # the second file's rows travel in the Settings' replication, nothing beside
        rep = Replication(kind="file", name="last.csv", rows=demo.iloc[4000:])
        extra = dict(frame=demo.iloc[:4000], settings=Settings(replication=rep))
    elif case == "duckdb":
        path = tmp_path / "demo.parquet"  # (DuckDB reads a CSV's yes/no as booleans)
        demo.to_parquet(path, index=False)
        extra = dict(frame=None, path=str(path))
    request = _request(**extra)
    want = _before(request)
    calls = _count_assess(monkeypatch)
    mined, table = worker.compute(request)
    assert calls == {"assess": 1, "mine": 1}
    _same(table, want)
    if case == "replicate":
        assert table.assessment.replication == "second file last.csv (2,000 rows)"
    assert mined.assessment is None
    # the cached mining result (a holdout's too: its rows are drawn from the replication's seed, not a
    # statistic), assessed at other statistics in a later request: no mining
    calls.update(assess=0, mine=0)
    other = dict(STATS, confidence=0.99, bootstrap=0, seed=5)
    again = worker.compute(worker.ScanRequest(scan=request.scan, statistics=other, mined=mined,
                                              settings=request.settings))[1]
    assert calls == {"assess": 1, "mine": 0}
    _same(again, _before(worker.ScanRequest(scan=request.scan, statistics=other, frame=request.frame,
                                            path=request.path, settings=request.settings)))


def test_the_request_carries_the_frozen_settings(demo, monkeypatch):
    """The page's validated Settings go to the worker as they are (no dict, no JSON): the table of
    scan() with those settings (the seed drawing the tree's cut rows and the held-out rows from
    them), in one mining pass and one assessment."""
    import pickle

    from divergence import Settings, SlicePlan

    sections = {"scan": dict(**DEMO_ROLES["regression"], **SUPPORT, binning="tree"),
                "statistics": dict(confidence=0.9, correction="holm", bootstrap=30, seed=3)}
    for holdout in (None, 0.3):
        if holdout is not None:
            sections["replication"] = dict(kind="holdout", share=holdout)
        plan = SlicePlan.from_settings(Settings.from_sections(sections))
        want = scan(demo, plan.settings)
        request = pickle.loads(pickle.dumps(worker.ScanRequest(settings=plan.settings, statistics=dict(exploratory=True),
                                                               frame=demo)))
        assert request.settings == plan.settings and request.settings.replication.kind == (
            "holdout" if holdout is not None else "none")
        calls = _count_assess(monkeypatch)
        _same(worker.compute(request)[1], want)
        assert calls == {"assess": 1, "mine": 1}
        monkeypatch.undo()


def test_a_query_table_is_assessed_on_replication_rows():
    """The dashboard sends a query scan's replication table as rows (a split column or a second
    file): assess takes them one row per query, as mine does (before: "Outcome column 'mrr' is not
    in the data")."""
    from test_queries import _planted

    df, other = _planted(0, nq=600), _planted(1, nq=400)
    kw = dict(query="q", relevance="rel", rank_by="score", metrics=["mrr"], min_support=0.05)
    want = scan(df, **kw, replicate=other)
    _same(assess(mine(df, **kw), replicate=other), want)
    from divergence import Settings
    from divergence.settings import Replication

    request = worker.ScanRequest(scan=kw, statistics={}, frame=df,
                                 settings=Settings(replication=Replication(kind="file", rows=other)))
    _same(worker.compute(request)[1], want)


def test_the_sql_engine_takes_the_second_files_rows_from_the_settings(demo, tmp_path):
    """A second file's rows in the Settings' replication reach DuckDB's mining and scan as
    ``replicate=`` does, named as the replication says; both at once is refused."""
    from divergence import DivergenceInputError, Settings, mine_duckdb, scan_duckdb
    from divergence.settings import Replication

    path = tmp_path / "first.parquet"
    demo.iloc[:4000].to_parquet(path, index=False)
    rows = demo.iloc[4000:]
    settings = Settings(replication=Replication(kind="file", name="last.parquet", rows=rows))
    kw = dict(**DEMO_ROLES["classification"], **SUPPORT)
    mined = mine_duckdb(str(path), settings, **kw)
    assert mined.replication.label == "second file last.parquet (2,000 rows)" and len(mined.replication.rows) == 2000
    want = assess(mine_duckdb(str(path), **kw), replicate=rows, replication_label="second file last.parquet (2,000 rows)")
    _same(assess(mined), want)
    assert "fpr_replicated" in scan_duckdb(str(path), settings, **kw).frame.columns
    with pytest.raises(DivergenceInputError, match="either in the replication settings or as replicate"):
        mine_duckdb(str(path), settings, **kw, replicate=rows)
