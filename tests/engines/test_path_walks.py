"""Every path walk is bounded (issue 33 F3, F6, F17): a glob or a folder never follows a link to a
folder (a loop inside the data folder cannot make it endless), reads each real file once, and reads
only regular files (a pipe is refused in one line, never opened)."""
from __future__ import annotations

import glob
import os
import time

import pytest

from divergence import DivergenceInputError
from divergence.engines import duckdb_engine
from divergence.engines.duckdb_engine import files_under, resolve_files


@pytest.fixture()
def tree(tmp_path, monkeypatch):
    for f in ("a.csv", "b.parquet", "sub/c.csv", "sub/deep/d.csv", ".hid/e.csv", "sub/.f.csv", "x[1].csv"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("y,p\n1,0\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


PATTERNS = ["*.csv", "**/*.csv", "sub/*.csv", "sub/**/*.csv", "**/d.csv", "?.csv", "[ab].*", "sub/**", "**"]


def test_globs_match_as_pythons_glob_without_links(tree):
    for pattern in PATTERNS + [str(tree / "**" / "*.csv")]:
        want = sorted(f for f in glob.glob(pattern, recursive=True) if os.path.isfile(f))
        assert duckdb_engine._glob_files(pattern) == want, pattern


def test_a_link_loop_ends_and_each_file_is_read_once(tree):
    os.symlink(".", tree / "sub" / "self")
    os.symlink("..", tree / "sub" / "up")
    os.symlink("../a.csv", tree / "sub" / "alink.csv")
    t0 = time.monotonic()
    files, fmt = files_under(tree, "**/*.csv")
    assert time.monotonic() - t0 < 5
    assert fmt == "csv" and sorted(os.path.relpath(f, tree) for f in files) == \
        ["a.csv", "sub/c.csv", "sub/deep/d.csv", "x[1].csv"]
    files, _ = resolve_files("sub")
    assert sorted(files) == ["sub/alink.csv", "sub/c.csv", "sub/deep/d.csv"]  # a link to a file is read


def test_a_pipe_is_refused_not_opened(tree):
    os.mkfifo(tree / "pipe.csv")
    for source in ("pipe.csv", ["pipe.csv"]):
        with pytest.raises(DivergenceInputError, match="not a regular file"):
            resolve_files(source)
    with pytest.raises(DivergenceInputError, match="not a regular file"):
        files_under(tree, "pipe.csv")
    assert "pipe.csv" not in [os.path.basename(f) for f in resolve_files("*.csv")[0]]


def test_a_walk_is_bounded(tree, monkeypatch):
    monkeypatch.setattr(duckdb_engine, "MAX_WALK", 5)
    with pytest.raises(DivergenceInputError, match="more than 5 files and folders"):
        resolve_files("**/*.csv")


def test_duckdb_types_yes_no_as_pandas_does(tmp_path):
    """Issue 33 F13: DuckDB read ``yes``/``no`` as BOOLEAN (``smoker=True``, and ``--positive yes`` was
    refused); now a column is boolean only when pandas would read it so (True/False words), and the
    items are the same from either engine."""
    import numpy as np
    import pandas as pd

    from divergence import scan, scan_duckdb

    rng = np.random.default_rng(4)
    n = 2_000
    df = pd.DataFrame({"smoker": rng.choice(["yes", "no"], n), "flag": rng.choice(["True", "False"], n),
                       "tf": rng.choice(["t", "f"], n), "y": rng.choice(["yes", "no"], n),
                       "pred": rng.choice(["yes", "no"], n)})
    path = tmp_path / "yesno.csv"
    df.to_csv(path, index=False)
    kw = dict(target="y", prediction="pred", positive="yes", metrics=["fpr"], min_support=0.05, bootstrap=0)
    ours = scan(pd.read_csv(path), **kw)
    theirs = scan_duckdb(str(path), **kw)
    assert sorted(theirs.frame["itemset"]) == sorted(ours.frame["itemset"])
    assert {"smoker=yes", "flag=True", "tf=t"} <= set(theirs.frame["itemset"])
    a, b = ours.frame.set_index("itemset"), theirs.frame.set_index("itemset")
    assert np.allclose(a.loc[b.index, "fpr"], b["fpr"], equal_nan=True)
