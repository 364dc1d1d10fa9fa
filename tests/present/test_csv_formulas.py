"""No CSV the product writes holds a formula cell (issue 21): text cells and column names that a
spreadsheet would run (starting with = + - @, a tab, a carriage return) get a leading apostrophe,
on by default for the command line and the dashboard's downloads; numbers stay numbers."""
from __future__ import annotations

import csv
import io
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

from divergence import compare, scan
from divergence.present.export import table_csv
from divergence.table import FORMULA_START, write_csv

HOSTILE_NAMES = ['=HYPERLINK("http://x","y")', "@SUM(1)", "+cmd", "-2+3", "\tlead"]
HOSTILE_VALUES = ["=1+1", "@SUM(A1)", "+x", "-x", "\rcr", "ok"]
NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def hostile_frame(n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({name: rng.choice(HOSTILE_VALUES, n) for name in HOSTILE_NAMES})
    df["y"] = rng.integers(0, 2, n)
    df["p"] = np.where(rng.random(n) < 0.8, df["y"], 1 - df["y"])
    df["ref"] = np.where(rng.random(n) < 0.7, df["y"], 1 - df["y"])
    return df


def formula_cells(text: str) -> list[str]:
    """Cells a spreadsheet would run: text starting with a trigger that is not a plain number."""
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row
            if cell[:1] and cell[:1] in FORMULA_START and not NUMBER.match(cell)]


def numbers_of(text: str, column: str) -> np.ndarray:
    return pd.read_csv(io.StringIO(text))[column].to_numpy(float)


@pytest.fixture(scope="module")
def data_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("formulas") / "hostile.csv"
    hostile_frame().to_csv(path, index=False)
    return path


ROLES = ["--target", "y", "--prediction", "p", "--positive", "1", "--min-support", "0.05"]
COMMANDS = {
    "scan": ["scan", "{data}", *ROLES, "--metric", "fpr,fnr"],
    "explain global": ["explain", "{data}", *ROLES, "--metric", "fpr", "--global"],
    "explain itemset": ["explain", "{data}", *ROLES, "--metric", "fpr", "--itemset", "=HYPERLINK(\"http://x\",\"y\")==1+1"],
    "compare": ["compare", "{data}", "--target", "y", "--prediction", "p", "--reference", "ref", "--positive", "1",
                "--metric", "error", "--min-support", "0.05"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_the_command_line_writes_no_formula_cell(tmp_path, data_path, command):
    out = tmp_path / "out.csv"
    args = [a.format(data=data_path) for a in COMMANDS[command]]
    run = subprocess.run([sys.executable, "-m", "divergence", *args, "--output", str(out)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    text = out.read_text(encoding="utf-8")
    assert formula_cells(text) == []
    assert "'=HYPERLINK" in text  # the text is still there, marked as text
    raw = tmp_path / "raw.csv"
    run = subprocess.run([sys.executable, "-m", "divergence", *args, "--output", str(raw), "--allow-formulas"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert formula_cells(raw.read_text(encoding="utf-8"))  # turned off on request: written as they are


def test_numbers_stay_numbers_and_only_formula_text_changes():
    df = hostile_frame(800)
    table = scan(df, target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.05)
    frame = table.frame
    text = table_csv(frame)  # the dashboard's download
    assert formula_cells(text.decode("utf-8")) == []
    back = pd.read_csv(io.BytesIO(text), keep_default_na=False)
    # negative divergences are numbers, unchanged to the last digit
    got = back["fpr_divergence"].replace("", np.nan).astype(float).to_numpy()
    want = frame["fpr_divergence"].to_numpy(float)
    assert (want < 0).any() and np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[~np.isnan(got)], want[~np.isnan(want)])
    # each itemset is its text, with one apostrophe in front exactly where a trigger starts it
    for shown, itemset in zip(back["itemset"], frame["itemset"]):
        assert shown == (f"'{itemset}" if itemset[:1] and itemset[:1] in FORMULA_START else itemset)
    plain = pd.DataFrame({"t": ["-5", "+1.5e3", "-1+1", "a-b"], "x": [-1.0, 2.0, -3.5, 4.0]})
    buf = io.BytesIO()
    write_csv(plain, buf)
    assert buf.getvalue().decode() == '"t","x"\n"-5",-1\n"+1.5e3",2\n"\'-1+1",-3.5\n"a-b",4\n'


def test_comparison_csv_is_guarded(tmp_path):
    df = hostile_frame(800)
    c = compare(df, target="y", prediction="p", reference="ref", positive=1, metrics=["error"], min_support=0.05)
    c.to_csv(tmp_path / "c.csv")
    assert formula_cells((tmp_path / "c.csv").read_text(encoding="utf-8")) == []
    c.to_csv(tmp_path / "raw.csv", neutralise_formulas=False)
    assert formula_cells((tmp_path / "raw.csv").read_text(encoding="utf-8"))


@pytest.mark.parametrize("large", [False, True])
def test_the_quick_screen_finds_every_value_that_starts_a_formula(large):
    """Issue 49: ``formula_safe`` reads each text column's first bytes before its regular
    expressions; the screen must say yes wherever a value starts with a formula character
    (full-width forms, a slice of an array, nulls, large strings), so the cells written stay the same."""
    import pyarrow as pa

    from divergence.data.csv_writer import formula_safe, may_start_a_formula

    kind = pa.large_string() if large else pa.string()
    for start in FORMULA_START:
        values = ["age=young", None, "", f"{start}x", "sex=1"]
        arr = pa.array(values, type=kind)
        assert may_start_a_formula(arr), repr(start)
        assert may_start_a_formula(arr.slice(3)), repr(start)
        assert not may_start_a_formula(arr.slice(4)), repr(start)  # the slice's offset is honoured
        assert not may_start_a_formula(arr.slice(0, 3)), repr(start)
        fixed = formula_safe(pa.table({"c": arr})).column("c").to_pylist()
        assert fixed == values[:3] + [f"'{start}x", "sex=1"]
    assert not may_start_a_formula(pa.array([], type=kind))
    assert not may_start_a_formula(pa.array([None, None], type=kind))
    # U+FF21 shares the full-width forms' first byte: the screen lets it through, the regex keeps it
    assert may_start_a_formula(pa.array(["\uff21b"], type=kind))
    assert formula_safe(pa.table({"c": pa.array(["\uff21b"], type=kind)})).column("c").to_pylist() == ["\uff21b"]


def test_the_row_blocks_write_the_bytes_of_one_write(tmp_path, monkeypatch):
    """Issue 49: the writer formats blocks of BLOCK_ROWS rows on two threads, a few in flight; the
    file is byte for byte Arrow's single write of the whole table (one header, every row in order,
    NaN and nulls, quotes and commas in text)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from divergence.data import csv_writer

    rng = np.random.default_rng(3)
    n = 45_001  # 44 blocks, the last one short
    x = rng.normal(size=n)
    x[rng.random(n) < 0.1] = np.nan
    text = np.array(['a "quoted", text', "plain", "", "=1+1"], dtype=object)[rng.integers(0, 4, n)]
    table = pa.table({"itemset": pa.array(text, type=pa.string()), "x": pa.array(x, from_pandas=True),
                      "k": pa.array(rng.integers(-5, 5, n)), "b": pa.array(rng.random(n) < 0.5)})
    monkeypatch.setattr(csv_writer, "_cpus", lambda: 2)
    csv_writer._write_arrow_csv(table, tmp_path / "blocks.csv")
    pacsv.write_csv(table, tmp_path / "one.csv")
    assert (tmp_path / "blocks.csv").read_bytes() == (tmp_path / "one.csv").read_bytes()
    assert -(-n // csv_writer.BLOCK_ROWS) > 3 * 2  # more blocks than are ever in flight
