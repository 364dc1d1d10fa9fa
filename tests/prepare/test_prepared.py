"""One preparation for every source (issue 29): scan(), mine(), the SQL engines and compare() each
prepare their table into a Prepared and mine it through mining.mined.mine_prepared, and the in-memory
and SQL preparations of one table agree on what the miner is given."""
from __future__ import annotations

import inspect

import duckdb
import numpy as np
import pandas as pd
import pytest

import divergence as dv
from divergence.engines.duckdb_engine import duckdb_backend
from divergence.engines.engine_scan import prepare_sql
from divergence.mining import mined
from divergence.prepare.prepared import Prepared, prepare
from divergence.settings import Settings


def _table(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.choice(["x", "y", "z"], n), "b": rng.choice(["u", "v"], n),
                       "age": rng.integers(18, 80, n), "y": rng.integers(0, 2, n)})
    df["p"] = np.where(rng.random(n) < 0.2, 1 - df.y, df.y)
    df["q"] = np.where(rng.random(n) < 0.3, 1 - df.y, df.y)
    return df


KW = dict(target="y", prediction="p", positive=1, metrics=["fpr", "fnr"], min_support=0.05)


@pytest.fixture
def callers(monkeypatch):
    """The functions that call the miner's table step, one per mining."""
    seen: list[str] = []
    real = mined.mine_table

    def spy(*args, **kwargs):
        seen.append(inspect.stack()[1].function)
        return real(*args, **kwargs)

    monkeypatch.setattr(mined, "mine_table", spy)
    return seen


def test_every_entry_point_mines_a_prepared_table(callers, tmp_path):
    df = _table()
    dv.scan(df, **KW)
    dv.mine(df, **KW)
    dv.compare(df, target="y", prediction="p", reference="q", positive=1, min_support=0.05)
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    dv.scan_duckdb(str(path), **KW)
    assert callers == ["mine_prepared"] * 4


def _bins(p: Prepared) -> list[tuple[str, tuple[str, ...]]]:
    return [(b.name, tuple(b.labels)) for b in p.bins]


def _tallies_by_items(p: Prepared) -> dict:
    """Each distinct row's items (as labels) and its summed tallies, whatever the row order."""
    out: dict = {}
    for codes, w in zip(p.codes, p.weights):
        key = tuple(p.bins[j].labels[c] if c >= 0 else None for j, c in enumerate(codes))
        out[key] = out.get(key, 0) + w
    return out


def test_the_in_memory_and_sql_preparations_agree(tmp_path):
    df = _table(seed=1)
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    st = Settings.resolve(None, dict(KW, attributes=["a", "b", "age"]))
    here = prepare(df, st)
    con = duckdb.connect()
    try:
        there = prepare_sql(duckdb_backend(str(path), con), st)
    finally:
        con.close()
    assert here.n_rows == there.n_rows == len(df)
    assert _bins(here) == _bins(there)
    assert [(m.name, m.binary, m.aux, m.cube) for m in here.metrics] == \
        [(m.name, m.binary, m.aux, m.cube) for m in there.metrics]
    a, b = _tallies_by_items(here), _tallies_by_items(there)
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_allclose(a[key], b[key], rtol=0, atol=1e-9)
    assert here.params["engine"] == "fast" and there.params["engine"] == "duckdb"
    assert {k: v for k, v in here.params.items() if k != "engine"} == \
        {k: v for k, v in there.params.items() if k not in ("engine", "quantiles")}


def test_the_comparison_is_prepared_with_its_own_tallies():
    df = _table(seed=2)
    st = Settings.resolve(None, dict(target="y", prediction="p", positive=1, min_support=0.05))
    tallies = np.ones((len(df), 1))
    p = prepare(df, st, tallies=tallies, reserved=["q"], role="a target or a model")
    assert [b.name for b in p.bins] == ["a", "b", "age"]  # neither model, nor the target, is an attribute
    assert p.weights is tallies and p.metrics == () and p.n_rows == len(df)
    with pytest.raises(dv.DivergenceInputError, match="'q'.*a target or a model"):
        prepare(df, Settings.resolve(None, dict(target="y", prediction="p", positive=1, attributes=["a", "q"])),
                tallies=tallies, reserved=["q"], role="a target or a model")
