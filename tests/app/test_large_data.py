"""AppTest of the Data page's third source: a local path (file, folder or glob) scanned by DuckDB.

The references are ``divergence.scan_duckdb`` on the same path with the dashboard's settings,
then ``divergence.assess`` with its statistics (as the app computes them); the Parquet files
are written to ``tmp_path``.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest
from apptest_readers import (
    charts,
    decode,
    fresh_app,
    go,
    keyed,
    left_out,
    metrics,
    run_scan,
    scanned,
    setting,
    table_cells,
)
from streamlit.testing.v1 import AppTest

import divergence
from divergence import assess, redundant_itemsets, scan, scan_duckdb
from divergence.data.datasets import load_demo
from divergence.present.cards import headline
from divergence.present.formats import format_count, format_percent
from divergence.present.views import redundancy_epsilon, slice_view

STATS = dict(confidence=0.95, correction="bh", bootstrap=0, seed=0, exploratory=True)
ROLES = dict(target="label", prediction="pred", positive=1, metrics=["fpr", "fnr"])
ATTRIBUTES = ["age", "region", "education", "channel"]


def _frame(n: int = 6000, seed: int = 0) -> pd.DataFrame:
    """Evaluation rows whose roles the app guesses (label, pred) and a row number it leaves out."""
    df = load_demo(n, seed=seed)
    return pd.DataFrame({"row": df["applicant_id"], "age": df["age"], "region": df["region"],
                         "education": df["education"], "channel": df["channel"],
                         "label": (df["defaulted"] == "yes").astype(int),
                         "pred": (df["predicted_default"] == "yes").astype(int)})


@pytest.fixture
def parquet_file(tmp_path):
    path = tmp_path / "evals.parquet"
    _frame().to_parquet(path, index=False)
    return path


@pytest.fixture
def parquet_folder(tmp_path):
    folder = tmp_path / "evals"
    folder.mkdir()
    df = _frame()
    df.iloc[:3500].to_parquet(folder / "part-0.parquet", index=False)
    df.iloc[3500:].to_parquet(folder / "part-1.parquet", index=False)
    return folder


@pytest.fixture(autouse=True)
def data_folder(tmp_path, monkeypatch):
    """Local paths are read under the data folder the server's owner sets: here the test's folder."""
    monkeypatch.setenv("DIVERGENCE_DATA_FOLDER", str(tmp_path))
    return tmp_path


@pytest.fixture
def app():
    return fresh_app(90)


def _errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def _captions(at: AppTest) -> list[str]:
    return [c.value for c in at.caption]


_metrics, _decode, _charts, _table_cells = metrics, decode, charts, table_cells


def _view(table, metric="fpr", eps=0.05):
    eps = redundancy_epsilon(table, metric, eps)  # the default ε: 0.05 standard deviations of the metric
    return slice_view(table, metric=metric, exclude=redundant_itemsets(table, eps, metric=metric), top_n=25)


def _choose_path(at: AppTest, path) -> AppTest:
    at = go(at, "data")
    keyed(at.radio, "w:source").set_value("path").run()
    keyed(at.text_input, "w:local_path_text").input(str(path)).run()
    assert not at.exception, at.exception
    return at


def _reference(path, **kw) -> divergence.SliceTable:
    """What the app computes: scan_duckdb with the scan settings, then the statistics."""
    settings = dict(ROLES, attributes=ATTRIBUTES, min_support=0.02, bins={}, quantile_bins=3,
                    binning="quantile", max_length=None)
    settings.update(kw)
    return assess(scan_duckdb(str(path), **settings), **STATS)


def _assert_slices_page_shows(at: AppTest, table) -> None:
    at = go(at, "slices")
    h = headline(table, "fpr")
    m = _metrics(at)
    assert m["FPR, whole dataset"] == format_percent(table.overall("fpr"))
    assert m["Slices tested"] == format_count(h["n_tested"]) == format_count(len(table) - 1)
    assert m["Significant"] == format_count(h["n_significant"])
    assert m["Not significant"] == format_count(h["n_not_significant"])
    cells = _table_cells(at)
    view = _view(table)
    assert cells["Slice"] == view.rows["itemset"].tolist()
    assert cells["FPR"] == [format_percent(x) for x in view.rows["fpr"]]
    assert cells["Rows"] == [format_count(c) for c in view.rows["count"]]
    assert "scanned by DuckDB, intervals analytic." in at.caption[0].value


# ---------------------------------------------------------------- a file, a folder

def test_local_parquet_file_preview_roles_and_run(app, parquet_file):
    at = _choose_path(app, parquet_file)
    assert not _errors(at)
    # the preview: the first rows, the row count of the whole file, the roles guessed from them
    assert f"`{parquet_file}` (a local path, scanned by DuckDB), 6,000 rows × 7 columns." in at.markdown[0].value
    assert at.dataframe[0].value.shape == (200, 7)
    assert "The first 200 of 6,000 rows." in _captions(at)
    assert at.session_state["frame"].shape == (1000, 7)  # the preview, not the rows
    assert (keyed(at.selectbox, "w:target").value, keyed(at.selectbox, "w:prediction").value,
            keyed(at.selectbox, "w:positive").value) == ("label", "pred", 1)
    assert keyed(at.multiselect, "w:attributes_pick").value == ATTRIBUTES
    assert list(left_out(at)) == ["row"] and left_out(at)["row"] in ("row index", "identifier")
    preview = pd.read_parquet(parquet_file).head(1000)
    measured = next(c for c in _captions(at) if c.startswith("Measured"))
    assert measured.startswith("Measured on the first 1,000 rows:")
    assert f"defined on {int((preview['label'] == 0).sum()):,} rows" in measured
    # holdout and split replication need rows in memory: not offered
    assert keyed(at.radio, "w:replication").options == ["None", "A second file"]
    # bootstrap disabled on the Outcome page, with the reason
    at = go(at, "outcome")
    assert keyed(at.number_input, "w:bootstrap").proto.disabled
    assert any(c.startswith("Intervals are analytic for DuckDB scans") for c in _captions(at))
    assert "6,000 rows" in at.caption[0].value
    run_scan(at)
    assert not at.exception and not _errors(at)
    table = _reference(parquet_file)
    assert table.assessment.intervals == "analytic" and table.kept_rows is None
    assert f"{len(table) - 1:,} slices mined" in at.success[0].value
    res = at.session_state["result"]["table"]
    assert res.engine == "duckdb" and res.kept_rows is None
    np.testing.assert_array_equal(res.tallies, table.tallies)
    # the default attributes were screened by the engine on every row, not on the preview
    assert json.loads(at.session_state["result"]["plan"])["scan"].get("attributes") is None
    assert list(res.attributes) == ATTRIBUTES
    _assert_slices_page_shows(at, table)


def test_local_folder_of_two_parquet_files(app, parquet_folder):
    at = _choose_path(app, parquet_folder)
    assert not _errors(at)
    assert "6,000 rows × 7 columns" in at.markdown[0].value
    at = scanned(at)
    table = _reference(parquet_folder)
    assert f"{len(table) - 1:,} slices mined" in at.success[0].value
    _assert_slices_page_shows(at, table)
    # the same numbers as pandas on the rows of both files
    rows = pd.concat([pd.read_parquet(f) for f in sorted(parquet_folder.iterdir())], ignore_index=True)
    in_memory = assess(scan(rows, attributes=ATTRIBUTES, min_support=0.02, **ROLES), **STATS)
    assert table.overall("fpr") == in_memory.overall("fpr")
    assert sorted(map(str, table.itemsets)) == sorted(map(str, in_memory.itemsets))


def test_a_glob_names_the_files(app, parquet_folder):
    at = _choose_path(app, parquet_folder / "part-*.parquet")
    assert not _errors(at) and "6,000 rows" in at.markdown[0].value
    at = scanned(at)
    assert f"{len(_reference(parquet_folder)) - 1:,} slices mined" in at.success[0].value


# ---------------------------------------------------------------- bad paths keep everything

def test_bad_path_shows_the_error_and_keeps_the_settings(app, parquet_file, tmp_path):
    # from the built-in data: nothing changes
    at = go(app, "data")
    keyed(at.radio, "w:source").set_value("path").run()
    missing = tmp_path / "nowhere.parquet"
    keyed(at.text_input, "w:local_path_text").input(str(missing)).run()
    assert not at.exception
    assert f"File or folder '{missing}' does not exist." in _errors(at)
    assert at.session_state["data_name"] == "built-in" and setting(at, "target") == "defaulted"
    assert "the built-in dataset" in at.markdown[0].value and "10,000 rows" in at.markdown[0].value
    # from a local path with settings changed: the path, its roles and the settings stay
    keyed(at.text_input, "w:local_path_text").input(str(parquet_file)).run()
    assert not _errors(at)
    keyed(at.multiselect, "w:attributes_pick").set_value(["age", "region"]).run()
    at = go(at, "outcome")
    keyed(at.number_input, "w:min_support").set_value(0.05).run()
    keys = ["local_path", "data_key", "target", "prediction", "positive", "attributes", "min_support", "metrics"]
    before = {k: setting(at, k) for k in keys}
    at = go(at, "data")
    empty = tmp_path / "empty"
    empty.mkdir()
    keyed(at.text_input, "w:local_path_text").input(str(empty)).run()
    assert f"Folder '{empty}' holds no CSV or Parquet file." in _errors(at)
    assert "The data and settings in use are unchanged." in _captions(at)
    assert {k: setting(at, k) for k in keys} == before
    assert f"`{parquet_file}`" in at.markdown[0].value
    # the run still uses the good path
    at = scanned(at)
    table = _reference(parquet_file, attributes=["age", "region"], min_support=0.05)
    assert f"{len(table) - 1:,} slices mined" in at.success[0].value


def test_back_to_the_local_path_reads_it_again(app, parquet_file):
    at = _choose_path(app, parquet_file)
    keyed(at.radio, "w:source").set_value("built-in").run()
    assert at.session_state["local_path"] is None and "the built-in dataset" in at.markdown[0].value
    keyed(at.radio, "w:source").set_value("path").run()
    assert at.session_state["local_path"] == str(parquet_file) and "6,000 rows" in at.markdown[0].value
    assert keyed(at.text_input, "w:local_path_text").value == str(parquet_file)


def test_a_corrupt_file_is_named_on_the_page(app, tmp_path):
    bad = tmp_path / "broken.parquet"
    bad.write_bytes(b"this is not parquet")
    at = _choose_path(app, bad)
    assert any(e.startswith(f"Could not read '{bad}' as Parquet") for e in _errors(at))
    assert at.session_state["data_name"] == "built-in"


def test_errors_only_the_full_scan_sees_are_shown_beside_the_run_button(app, tmp_path):
    """The preview's rows are fine; a later row is not: the scan reports it, nothing is mined."""
    df = _frame(3000)
    df["label"] = df["label"].astype(float)
    df.loc[2500, "label"] = 7.0  # a third class, beyond the preview
    path = tmp_path / "late_problem.parquet"
    df.to_parquet(path, index=False)
    at = _choose_path(app, path)
    assert not _errors(at)  # the first 1,000 rows are binary
    at = scanned(at)
    assert "Target column 'label' is not binary: it has 3 distinct values (0.0, 1.0, 7.0)." in _errors(at)
    assert at.session_state["result"]["data_key"] == "built-in"  # the previous result stays


# ---------------------------------------------------------------- cache, replication, per-row pages

def test_a_changed_file_is_scanned_again(app, tmp_path, monkeypatch):
    import ui.worker as worker

    calls = []  # the paths the scan workers mined (a request without a mining result mines)
    original = worker.start
    monkeypatch.setattr(worker, "start", lambda request, **kw: (request.mined is None and calls.append(request.path))
                        or original(request, **kw))
    path = tmp_path / "evals.parquet"
    _frame(6000).to_parquet(path, index=False)
    at = _choose_path(app, path)
    at = scanned(at)
    assert calls == [str(path)]
    # the same run again is the cached result; a changed file is scanned again
    run_scan(at)
    assert calls == [str(path)]
    _frame(5000, seed=3).to_parquet(path, index=False)
    os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 10**9))
    run_scan(at)
    assert not at.exception and not _errors(at)
    assert calls == [str(path)] * 2
    table = _reference(path)
    assert table.n_rows == 5000 and at.session_state["result"]["table"].n_rows == 5000
    assert f"{len(table) - 1:,} slices mined" in at.success[0].value
    assert "5,000 rows" in at.caption[0].value
    _assert_slices_page_shows(at, table)


def test_holdout_is_refused_and_a_second_file_replicates(app, parquet_file):
    at = _choose_path(app, parquet_file)
    # a held-out share chosen elsewhere (a plan) is refused with the reason
    at.session_state["replication"] = "holdout"
    at = scanned(at)
    assert any(e.startswith("Replication on a held-out share needs the rows in memory") for e in _errors(at))
    at = go(at, "data")
    keyed(at.radio, "w:replication").set_value("file").run()
    second = _frame(4000, seed=11)
    at.file_uploader(key="w:replicate_upload").set_value(
        ("next_month.csv", second.to_csv(index=False).encode(), "text/csv")).run()
    at = scanned(at)
    assert not _errors(at)
    at = go(at, "slices")
    settings = dict(ROLES, attributes=ATTRIBUTES, min_support=0.02, bins={}, quantile_bins=3,
                    binning="quantile", max_length=None)
    expected = assess(scan_duckdb(str(parquet_file), **settings), replicate=second,
                      replication_label="second file next_month.csv (4,000 rows)", **STATS)
    assert _table_cells(at)["Replicated"] == ["yes" if r else "no"
                                              for r in _view(expected).rows["fpr_replicated"]]
    assert "replicated on second file next_month.csv (4,000 rows)" in at.caption[0].value


def test_slice_detail_shapley_without_bootstrap(app, parquet_file):
    at = scanned(_choose_path(app, parquet_file))
    at = go(at, "slices")
    table = _reference(parquet_file)
    selected = _view(table).rows["itemset"].iloc[0]  # the table's first row is open
    assert keyed(at.multiselect, "w:slice_items").value == selected.split(", ")
    spec = next(s for s in _charts(at) if s["data"][0]["type"] == "bar")
    drawn = {y: x for tr in spec["data"] for x, y in zip(tr["x"], tr["y"])}
    expected = divergence.item_contributions(table, selected, metric="fpr")
    assert drawn == pytest.approx(dict(zip(expected["item"], 100 * expected["contribution"])))  # pp
    assert "contribution_low" not in expected.columns
    row = table.row(selected)
    interval = next(c for c in _captions(at) if c.startswith("interval "))
    assert "bootstrap" not in interval.split(";")[0] and interval.endswith("(a DuckDB scan keeps no rows to bootstrap)")
    assert _metrics(at)["Rows"] == format_count(row["count"])


def test_every_page_works_on_a_duckdb_result(app, parquet_file):
    at = scanned(_choose_path(app, parquet_file))
    table = _reference(parquet_file)
    at = go(at, "attributes")
    values = divergence.global_divergence(table, metric="fpr")
    specs = _charts(at)
    drawn = {y: x for tr in specs[1]["data"] for x, y in zip(tr["x"], tr["y"])}
    top = values.loc[values["global"].abs().sort_values(ascending=False, kind="stable").index[:15]]
    assert drawn == pytest.approx(dict(zip(top["item"], 100 * top["global"])))  # a rate: in pp
    drawn = {y: x for tr in specs[0]["data"] for x, y in zip(tr["x"], tr["y"])}
    assert drawn["region=South"] == pytest.approx(100 * table.row("region=South")["fpr_divergence"])
    at = go(at, "intervals")
    assert not _errors(at)
    at = go(at, "export")
    assert not _errors(at)
    plan = next(c.value for c in at.code)
    assert f"file: {parquet_file}" in plan and "rows: 6000" in plan
