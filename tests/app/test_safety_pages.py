"""The dashboard against hostile files and under load (issue 21): nested columns in an upload, a scan cut by the time limit said on every page; more below."""
from __future__ import annotations

import numpy as np
import pytest
from apptest_readers import fresh_app, go, keyed, run_scan, setting
from conftest import NESTED


def test_the_upload_callback_reads_and_scans_it(nested_parquet):
    at = fresh_app(300)
    at = go(at, "data")
    keyed(at.radio, "w:source").set_value("upload").run()
    at.file_uploader[0].set_value(("nested.parquet", nested_parquet.read_bytes(), "application/octet-stream")).run()
    assert not at.exception and not [e.value for e in at.error]
    left = next(d.value for d in at.dataframe if list(d.value.columns) == ["column", "left out as", "why"])
    assert sorted(left["column"]) == sorted(NESTED) and set(left["left out as"]) == {"nested"}
    keyed(at.selectbox, "w:prediction").set_value("predicted").run()
    at = go(at, "outcome")
    run_scan(at)
    assert not at.exception and not [e.value for e in at.error]


def test_a_scan_cut_by_the_time_limit_is_said_on_every_page(tmp_path):
    """The time limit is a safety net: when it cuts, each page says the table depends on the machine."""
    rng = np.random.default_rng(3)
    import pandas as pd

    df = pd.DataFrame({f"c{j:02d}": rng.choice(list("abcd"), 4000) for j in range(30)})
    df["o"] = rng.normal(size=4000)
    at = fresh_app(300)
    at = go(at, "data")
    keyed(at.radio, "w:source").set_value("upload").run()
    at.file_uploader[0].set_value(("wide.csv", df.to_csv(index=False).encode(), "text/csv")).run()
    keyed(at.radio, "w:task").set_value("outcome").run()
    keyed(at.multiselect, "w:outcome").set_value(["o"]).run()
    at = go(at, "outcome")
    keyed(at.number_input, "w:min_support").set_value(0.0005).run()
    keyed(at.number_input, "w:bootstrap").set_value(0).run()
    keyed(at.number_input, "w:max_work").set_value(10**15).run()
    keyed(at.number_input, "w:time_limit").set_value(1.0).run()
    run_scan(at)
    assert not at.exception
    for page in ("slices", "intervals", "attributes", "export"):
        at = go(at, page)
        said = [e.value for e in at.error if e.value.startswith("**Cut by the time limit, not by the budget.**")]
        assert len(said) == 1 and "depends on this machine's speed and load" in said[0], page


def _radio_options(at, key):
    return list(keyed(at.radio, key).options)


def test_no_local_path_without_a_data_folder(monkeypatch):
    monkeypatch.delenv("DIVERGENCE_DATA_FOLDER", raising=False)
    at = go(fresh_app(120), "data")
    assert _radio_options(at, "w:source") == ["Built-in dataset (credit applications)", "Upload a file"]
    at.session_state["source"] = "path"  # a stale choice (an older session, a plan): not honoured
    at.run()
    assert not at.exception and at.session_state["source"] == "upload"
    assert not [t for t in at.text_input if t.key == "w:local_path_text"]


def _typed_path(monkeypatch, folder, typed: str):
    """The Data page, a local path under ``folder`` (the data folder) typed in its box; no traceback."""
    monkeypatch.setenv("DIVERGENCE_DATA_FOLDER", str(folder))
    at = go(fresh_app(120), "data")
    keyed(at.radio, "w:source").set_value("path").run()
    keyed(at.text_input, "w:local_path_text").input(typed).run()
    assert not at.exception
    return at


@pytest.mark.parametrize("typed", ["/etc/passwd", "../../../../../../etc/passwd", "/etc/*", "link", "linked_dir/passwd",
                                   "linked_dir", "*/passwd", "./../../../../../etc/pass*"])
def test_files_outside_the_data_folder_are_not_read(tmp_path, monkeypatch, typed):
    folder = tmp_path / "evals"
    folder.mkdir()
    (folder / "link").symlink_to("/etc/passwd")
    (folder / "linked_dir").symlink_to("/etc")
    at = _typed_path(monkeypatch, folder, typed)
    errors = [e.value for e in at.error]
    # a glob does not walk through a link to a folder (a link loop cannot make it endless): nothing matches
    refused = "No file matches" if typed == "*/passwd" else "outside the data folder"
    assert errors and refused in errors[0] and "root:" not in errors[0]
    assert at.session_state["data_name"] == "built-in" and at.session_state["local_path"] is None
    shown = " ".join(str(d.value.to_csv()) for d in at.dataframe)
    assert "root:x:0:0" not in shown and "/bin/" not in shown


def test_a_file_inside_the_data_folder_is_read(tmp_path, monkeypatch):
    import pandas as pd

    folder = tmp_path / "evals"
    (folder / "2026").mkdir(parents=True)
    rng = np.random.default_rng(0)
    pd.DataFrame({"label": rng.integers(0, 2, 500), "pred": rng.integers(0, 2, 500),
                  "a": rng.choice(["x", "y"], 500)}).to_parquet(folder / "2026" / "part.parquet")
    (folder / "alias.parquet").symlink_to(folder / "2026" / "part.parquet")  # a link that stays inside: fine
    monkeypatch.setenv("DIVERGENCE_DATA_FOLDER", str(folder))
    at = go(fresh_app(120), "data")  # one session: the path in use changes only when the new one is read
    keyed(at.radio, "w:source").set_value("path").run()
    for typed in ("2026/part.parquet", str(folder / "2026"), "alias.parquet", "*/*.parquet"):
        keyed(at.text_input, "w:local_path_text").input(typed).run()
        assert not at.exception and not [e.value for e in at.error], typed
        assert at.session_state["local_path"] == typed and "500 rows" in at.markdown[0].value


@pytest.mark.parametrize("typed, message", [("data\x00.csv", "NUL character"), ("x" * 5000, "longer than a path"),
                                            ("a/" + "y" * 300 + ".csv", "longer than a path")])
def test_a_path_no_file_system_takes_is_one_line(tmp_path, monkeypatch, typed, message):
    """Issue 33 F16: a NUL byte or a path longer than any file system takes is said in one line beside
    the box (it was a traceback on the page); the built-in data stays."""
    folder = tmp_path / "evals"
    folder.mkdir()
    at = _typed_path(monkeypatch, folder, typed)
    errors = [e.value for e in at.error]
    assert errors and message in errors[0]
    assert at.session_state["data_name"] == "built-in"


def test_a_parquet_of_megabyte_rows_is_not_previewed_in_the_server(tmp_path, monkeypatch):
    """Issue 33 F2: a 50 KB Parquet file of 2,000 rows holding one 1 MB value through a dictionary, typed
    as a local path: the preview (in the server's process) took 3.2 GB. Its rows are sized from the
    footer and the dictionary first and it is refused in one line; the built-in data stays."""
    import tracemalloc

    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "evals"
    folder.mkdir()
    values = pa.DictionaryArray.from_arrays(pa.array([0] * 2000, pa.int32()), pa.array(["x" * (1 << 20)]))
    pq.write_table(pa.table({"s": values, "y": pa.array([i % 2 for i in range(2000)])}), folder / "bomb.parquet",
                   compression="zstd", store_schema=False)
    monkeypatch.setenv("DIVERGENCE_DATA_FOLDER", str(folder))
    at = go(fresh_app(120), "data")
    keyed(at.radio, "w:source").set_value("path").run()
    tracemalloc.start()
    try:
        keyed(at.text_input, "w:local_path_text").input("bomb.parquet").run()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert errors and "too large to read here" in errors[0]
    assert at.session_state["data_name"] == "built-in" and peak < 256 << 20


# ---------------------------------------------------------------- uploads read by a worker

def _upload(at, name: str, data: bytes):
    at = go(at, "data")
    keyed(at.radio, "w:source").set_value("upload").run()
    at.file_uploader[0].set_value((name, data, "text/csv")).run()
    assert not at.exception, at.exception
    return at


def test_a_gzip_bomb_upload_is_refused_in_one_line_and_the_data_stays():
    import zlib

    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    member = c.compress(b"0" * (64 << 20)) + c.flush()
    bomb = zlib.compressobj(9, zlib.DEFLATED, 31)
    data = bomb.compress(b"a,b\n") + bomb.flush() + member * 16  # about 1 GB out of about 1 MB, named .csv
    at = _upload(fresh_app(300), "evaluation.csv", data)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("'evaluation.csv' decompresses to more than 100 times its")
    assert at.session_state["data_name"] == "built-in" and setting(at, "target") == "defaulted"
    assert at.session_state["read_job"] is None


def test_an_upload_too_large_for_memory_is_read_by_duckdb_where_it_lies(monkeypatch):
    import pandas as pd

    monkeypatch.setenv("DIVERGENCE_UPLOAD_MEMORY", str(4 << 20))  # an upload's frame may take 2 MB here (it takes 4.5)
    if True:
        rng = np.random.default_rng(0)
        n = 100_000
        df = pd.DataFrame({"label": rng.integers(0, 2, n), "pred": rng.integers(0, 2, n),
                           "region": rng.choice(["north", "south", "east"], n), "age": rng.integers(18, 90, n)})
        at = _upload(fresh_app(300), "big.csv", df.to_csv(index=False).encode())
        assert not [e.value for e in at.error]
        path = at.session_state["local_path"]
        assert path is not None and path.endswith("big.csv") and at.session_state["local_path_rows"] == n
        notes = " ".join(i.value for i in at.info)
        assert "big.csv would take about" in notes and "DuckDB reads it where the server stored it" in notes
        assert at.session_state["data_name"] == "big.csv" and setting(at, "target") == "label"
        at = go(at, "outcome")
        run_scan(at)
        assert not at.exception and not [e.value for e in at.error]
        assert at.session_state["result"]["table"].engine == "duckdb"


def test_wide_tables_are_described_and_screened_in_a_worker(monkeypatch):
    import pandas as pd

    import ui.cache as cache
    import ui.worker as worker

    done = []
    real = worker.run_task
    monkeypatch.setattr(cache, "WIDE_COLUMNS", 40)
    monkeypatch.setattr(worker, "run_task", lambda task, *a, **k: done.append(task) or real(task, *a, **k))
    rng = np.random.default_rng(0)
    df = pd.DataFrame({f"c{i}": rng.integers(0, 3, 300) for i in range(60)})
    df["label"], df["pred"] = rng.integers(0, 2, 300), rng.integers(0, 2, 300)
    at = _upload(fresh_app(300), "wide.csv", df.to_csv(index=False).encode())
    assert not [e.value for e in at.error] and at.session_state["data_name"] == "wide.csv"
    assert "screen" in done  # the default attributes of the guessed roles, off the server
    keyed(at.selectbox, "w:target").set_value("c1").run()  # other roles: screened again, in a worker
    assert done.count("screen") >= 2 and not at.exception


def test_sessions_hold_their_results_through_the_servers_budget():
    """Six sessions do not keep six tables: a session's result is the server's (within its budget);
    one the server dropped is gone for the session too, which says so and offers to run again."""
    from apptest_readers import APP
    from streamlit.testing.v1 import AppTest

    import ui.cache as cache
    from ui.state import DROPPED

    first = fresh_app(300)  # the first visit's scan of the built-in data
    assert first.session_state["result"]["table"] is not None
    results = cache.assessed_results()
    old_size = results.size
    results.size = 1  # room for one result: the next one drops the first
    try:
        second = AppTest.from_file(APP, default_timeout=300)
        second.run()
        second = go(second, "outcome")
        keyed(second.number_input, "w:min_support").set_value(0.05).run()
        run_scan(second)
        assert second.session_state["result"]["table"].min_support == 0.05
        first.run()  # the first session's next run: its result is gone, and it says so
        assert not first.exception and first.session_state["result"] is None
        assert DROPPED in [i.value for i in first.info]
    finally:
        results.size = old_size
