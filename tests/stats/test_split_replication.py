"""A split replication is honoured wherever settings come from (issue 29): scan() from Python, the
command line's --split-column/--confirm-on, a plan run by the report; it gives the same table as
splitting the rows by hand and replicating on the confirming ones; the SQL engines and a file
replication without its table refuse in words."""
from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from divergence import DivergenceInputError, scan
from divergence.data.datasets import DEMO_ROLES, load_demo
from divergence.prepare.replication_rows import split_rows
from divergence.settings import Replication, Settings

ROLES = DEMO_ROLES["classification"]
SPLIT = Replication(kind="split", column="region", confirm_values=("South",))


@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    return load_demo(4000)


def _settings(**kw) -> Settings:
    return Settings.from_keywords(**ROLES, min_support=0.05, **kw)


def _replicated(frame: pd.DataFrame) -> pd.DataFrame:
    cols = ["itemset"] + [c for c in frame.columns if "_replicated" in c]
    return frame[cols].reset_index(drop=True)


def test_scan_splits_the_rows_as_the_settings_say(demo):
    table = scan(demo, dataclasses.replace(_settings(), replication=SPLIT))
    mined, confirm = split_rows(demo, "region", ["South"])
    by_hand = scan(mined, _settings(), replicate=confirm)
    assert len(confirm) == int((demo["region"] == "South").sum()) > 0
    assert table.n_rows == len(mined)
    replicated = _replicated(table.frame)
    assert replicated.shape[1] > 1 and replicated["fpr_replicated_value"].notna().any()
    pd.testing.assert_frame_equal(replicated, _replicated(by_hand.frame))
    assert table.replication.label == f"rows with region in South ({len(confirm):,})"


def test_a_split_keeps_the_rows_positions_in_the_data_given(demo):
    table = scan(demo, dataclasses.replace(_settings(), replication=SPLIT))
    if table.kept_rows.positions is None:  # every row of the mined part, in order: positions are those of the mask
        pytest.skip("this table keeps no row positions")
    kept = demo.iloc[np.asarray(table.kept_rows.positions)]
    assert (kept["region"] != "South").all() and len(kept) == table.n_rows


def test_a_split_and_a_second_table_together_are_refused(demo):
    with pytest.raises(DivergenceInputError, match="either a replication table or a split column"):
        scan(demo, dataclasses.replace(_settings(), replication=SPLIT), replicate=demo)


@pytest.mark.parametrize("column, values, message", [
    ("nope", ("South",), "Split column 'nope' is not in the data"),
    ("region", ("Atlantis",), "Split column 'region' leaves no rows to confirm on"),
])
def test_a_split_the_data_cannot_give_names_the_column(demo, column, values, message):
    rep = Replication(kind="split", column=column, confirm_values=values)
    with pytest.raises(DivergenceInputError, match=message):
        scan(demo, dataclasses.replace(_settings(), replication=rep))


def test_a_file_replication_without_its_table_is_refused(demo):
    rep = Replication(kind="file", name="next_month.csv")
    with pytest.raises(DivergenceInputError, match=r"second file \(next_month.csv\).*replicate="):
        scan(demo, dataclasses.replace(_settings(), replication=rep))


def test_the_duckdb_engine_refuses_a_split(demo, tmp_path):
    from divergence.engines.duckdb_engine import scan_duckdb

    path = tmp_path / "demo.csv"
    demo.to_csv(path, index=False)
    with pytest.raises(DivergenceInputError, match="split column to confirm on is not available with the duckdb"):
        scan_duckdb(str(path), dataclasses.replace(_settings(), replication=SPLIT))



def test_a_second_file_in_the_settings_is_named_alike_by_scan_and_the_duckdb_engine(demo, tmp_path):
    """The second file carried in the Settings is called by its name wherever the table is made:
    scan(), scan_duckdb() and assess(mine_duckdb()) (scan_duckdb said "second table")."""
    from divergence import assess
    from divergence.engines.duckdb_engine import mine_duckdb, scan_duckdb

    path = tmp_path / "demo.parquet"
    demo.iloc[:3000].to_parquet(path, index=False)
    rep = Replication(kind="file", name="next_month.csv", rows=demo.iloc[3000:].reset_index(drop=True))
    settings = dataclasses.replace(_settings(), replication=rep)
    want = "second file next_month.csv (1,000 rows)"
    tables = {"scan": scan(demo.iloc[:3000].reset_index(drop=True), settings),
              "scan_duckdb": scan_duckdb(str(path), settings),
              "assess(mine_duckdb)": assess(mine_duckdb(str(path), settings), settings.statistics)}
    assert {k: t.assessment.replication for k, t in tables.items()} == dict.fromkeys(tables, want)
    assert {k: t.assessment.replication_rows for k, t in tables.items()} == dict.fromkeys(tables, 1000)


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "divergence", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def _role_args():
    return ["--target", ROLES["target"], "--prediction", ROLES["prediction"], "--positive", ROLES["positive"],
            "--metric", ",".join(ROLES["metrics"]), "--min-support", "0.05"]


def test_the_command_line_splits_as_python_does(demo, tmp_path):
    path, out = tmp_path / "demo.csv", tmp_path / "out.csv"
    demo.to_csv(path, index=False)
    p = _cli("scan", path, *_role_args(), "--split-column", "region", "--confirm-on", "South", "-o", out, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    from_cli = pd.read_csv(out).fillna({"itemset": ""})  # the whole dataset's itemset is empty
    expected = scan(demo, dataclasses.replace(_settings(), replication=SPLIT)).frame
    got, want = _replicated(from_cli), _replicated(expected)
    assert list(got["itemset"]) == list(want["itemset"])
    np.testing.assert_allclose(got["fpr_replicated_value"].to_numpy(float),
                               want["fpr_replicated_value"].to_numpy(float), rtol=1e-9, equal_nan=True)


def test_the_command_line_wants_the_column_and_its_values_together(demo, tmp_path):
    path = tmp_path / "demo.csv"
    demo.to_csv(path, index=False)
    p = _cli("scan", path, *_role_args(), "--split-column", "region", cwd=tmp_path)
    assert p.returncode != 0
    assert "--split-column and --confirm-on go together" in p.stderr and "Traceback" not in p.stderr
    p = _cli("scan", path, *_role_args(), "--split-column", "region", "--holdout", "0.5", "--confirm-on", "x",
             cwd=tmp_path)
    assert p.returncode != 0 and "not allowed with argument" in p.stderr


def test_a_plan_with_a_split_is_run_by_the_report(demo):
    from divergence.report.plan import SlicePlan
    from divergence.report.run import run_plan

    plan = SlicePlan.from_settings(dataclasses.replace(_settings(), replication=SPLIT))
    table = run_plan(plan, demo)
    assert table.replication.label.startswith("rows with region in South")
    expected = scan(demo, dataclasses.replace(_settings(), replication=SPLIT))
    pd.testing.assert_frame_equal(_replicated(table.frame), _replicated(expected.frame))


def test_a_plan_with_a_file_replication_and_no_file_says_so(demo):
    from divergence.report.plan import SlicePlan
    from divergence.report.run import run_plan

    plan = SlicePlan.from_settings(dataclasses.replace(_settings(), replication=Replication(kind="file", name="b.csv")))
    table = run_plan(plan, demo)
    assert any("replicates on a second file, and none was given" in n for n in table.notes)
    assert not any("_replicated" in c for c in table.frame.columns)
