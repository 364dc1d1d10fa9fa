"""Files as they come: delimiters, encodings, byte-order marks and repeated column names, read
the same from a path, bytes, an upload buffer, the command line and DuckDB."""
from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import data_file

from divergence import DivergenceInputError, scan, scan_duckdb
from divergence.cli.cli import main
from divergence.data.io import LoadedTable, load_table, read_table, sniff_csv, write_atomically

ROWS = [("Zoë", "1,5", 3, 1), ("Ana", "2,5", 4, 0), ("José", "3,5", 5, 1), ("Li", "4,5", 6, 0)] * 10


def _text(delim: str, decimal_comma: bool = False) -> str:
    head = delim.join(["name", "x", "n", "y"])
    lines = [head]
    for name, x, n, y in ROWS:
        xv = x if decimal_comma else x.replace(",", ".")
        lines.append(delim.join([name, xv, str(n), str(y)]))
    return "\n".join(lines) + "\n"


def _expected() -> pd.DataFrame:
    return pd.DataFrame({"name": [r[0] for r in ROWS], "x": [float(r[1].replace(",", ".")) for r in ROWS],
                         "n": [r[2] for r in ROWS], "y": [r[3] for r in ROWS]})


@pytest.mark.parametrize("delim, word", [(",", None), (";", "semicolon"), ("\t", "tab"), ("|", "pipe")])
def test_delimiters_are_sniffed(tmp_path, delim, word):
    path = tmp_path / "t.csv"
    path.write_text(_text(delim, decimal_comma=delim == ";"), encoding="utf-8")
    got = load_table(path)
    assert isinstance(got, LoadedTable) and got.delimiter == delim and got.encoding == "utf-8"
    pd.testing.assert_frame_equal(got.frame, _expected(), check_dtype=False)
    if word:
        assert f"Read '{path}' as {word}-separated values." in got.notes
    else:
        assert got.notes == []
    if delim == ";":
        assert any("decimal comma" in n for n in got.notes)
    # the same from bytes and from an upload buffer
    data = path.read_bytes()
    for source in (data, io.BytesIO(data)):
        again = load_table(source, name="t.csv")
        pd.testing.assert_frame_equal(again.frame, got.frame)
        assert again.delimiter == delim


def test_quoted_delimiters_do_not_fool_the_sniffer():
    data = b'a,b\n"x;y;z",1\n"p;q;r",2\n"s;t;u",3\n'
    got = load_table(data, name="q.csv")
    assert got.delimiter == "," and list(got.frame.columns) == ["a", "b"]
    assert got.frame["a"].tolist() == ["x;y;z", "p;q;r", "s;t;u"]


@pytest.mark.parametrize("encoding, bom, note", [
    ("utf-8", b"", None),
    ("utf-8", b"\xef\xbb\xbf", None),
    ("cp1252", b"", "Windows-1252 (cp1252): it is not valid UTF-8"),
    ("utf-16", b"", "UTF-16"),
])
def test_encodings_and_byte_order_marks(tmp_path, encoding, bom, note):
    text = _text(",") + "Łódź€,9.5,7,1\n" if encoding != "cp1252" else _text(",") + "Ž€,9.5,7,1\n"
    path = tmp_path / "e.csv"
    path.write_bytes(bom + text.encode(encoding))
    got = load_table(path)
    assert list(got.frame.columns) == ["name", "x", "n", "y"]  # no BOM left in the first name
    assert got.frame["name"].iloc[-1] == ("Ž€" if encoding == "cp1252" else "Łódź€")
    assert got.frame["name"].iloc[0] == "Zoë"
    if note:
        assert any(note in n for n in got.notes), got.notes
    else:
        assert got.notes == []


def test_latin1_when_cp1252_cannot_decode(tmp_path):
    path = tmp_path / "l.csv"
    path.write_bytes(b"a,b\n\x81x,1\n\xe9,2\n")  # 0x81 is undefined in cp1252
    got = load_table(path)
    assert got.encoding == "latin-1" and got.frame["a"].tolist() == ["\x81x", "é"]
    assert any("Latin-1" in n for n in got.notes)


def test_a_late_non_utf8_byte_falls_back_to_cp1252(tmp_path):
    rows = "".join(f"r{i},{i}\n" for i in range(20_000))
    path = tmp_path / "late.csv"
    path.write_bytes(("a,b\n" + rows).encode() + "caf\xe9,1\n".encode("cp1252"))
    got = load_table(path)
    assert got.encoding == "cp1252" and got.frame["a"].iloc[-1] == "café"


def test_repeated_column_names_are_renamed_with_a_note(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("score,a,score,a,score\n1,2,3,4,5\n6,7,8,9,10\n")
    got = load_table(path)
    assert list(got.frame.columns) == ["score", "a", "score.1", "a.1", "score.2"]
    assert got.notes == ["Column names 'score', 'a' appear more than once in the header; the later ones are "
                         "read as 'score.1', 'a.1', 'score.2'."]


def test_parquet_by_name_or_content(tmp_path):
    df = _expected()
    path = tmp_path / "p.parquet"
    df.to_parquet(path)
    got = load_table(path)
    assert got.delimiter is None and got.encoding is None
    pd.testing.assert_frame_equal(got.frame, df)
    pd.testing.assert_frame_equal(load_table(path.read_bytes(), name="upload.bin").frame, df)  # magic bytes


@pytest.mark.parametrize("content, message", [
    (b"", "is empty"),
    (b"   \n", "is empty"),
    (b"a,b\n", "has a header but no rows"),
])
def test_bad_files_say_what_is_wrong(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(DivergenceInputError, match=message):
        load_table(path)
    with pytest.raises(DivergenceInputError, match=message):
        load_table(content, name="bad.csv")


def test_missing_path_and_folder(tmp_path):
    with pytest.raises(DivergenceInputError, match="does not exist"):
        read_table(tmp_path / "nope.csv")
    with pytest.raises(DivergenceInputError, match="is a folder"):
        read_table(tmp_path)


def test_sniff_reports_the_header_as_written():
    d = sniff_csv(b"a;b;a\n1;2;3\n")
    assert d.delimiter == ";" and d.header == ("a", "b", "a")


# ----------------------------------------------------------------------------- one reader everywhere
@pytest.mark.parametrize("encoding, delim", [("cp1252", ";"), ("utf-16", "\t"), ("utf-8-sig", "|")])
def test_command_line_and_duckdb_read_a_file_as_pandas_does(tmp_path, encoding, delim):
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({"town": rng.choice(["Zürich", "Málaga", "Žilina €", "Oslo"], n),
                       "size": rng.normal(10, 2, n).round(1), "g": rng.choice(["é", "ü"], n),
                       "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n)})
    df.insert(1, "g_dup", df["g"])
    text = df.to_csv(index=False, sep=delim)
    text = text.replace("g_dup", "g", 1)  # a repeated header name
    path = tmp_path / "f.csv"
    path.write_bytes(text.encode(encoding))
    loaded = load_table(path)
    assert list(loaded.frame.columns) == ["town", "g", "size", "g.1", "y", "p"]
    kw = dict(target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.05,
              attributes=["town", "g", "size", "g.1"], exhaustive=True)
    want = scan(loaded.frame, **kw)
    got = scan_duckdb(path, **kw)
    assert list(got.frame["itemset"]) == list(want.frame["itemset"])
    np.testing.assert_array_equal(got.frame["count"], want.frame["count"])
    assert [b.labels for b in got.bins] == [b.labels for b in want.bins]
    for note in loaded.notes:  # how the file was read is said on both paths
        assert note.replace(str(path), str(path)) in got.notes
    out = tmp_path / "out.csv"
    assert main(["scan", str(path), "--target", "y", "--prediction", "p", "--positive", "1", "--metric", "fpr",
                 "--attributes", "town,g,size,g.1", "--min-support", "0.05", "--exhaustive",
                 "--output", str(out)]) == 0
    cli = pd.read_csv(out, keep_default_na=False, na_values=[""])
    assert list(cli["itemset"].fillna("")) == list(want.frame["itemset"])


def test_duckdb_reads_a_blank_header_name_as_pandas_does(tmp_path):
    """A header name of spaces: pandas keeps it as a column; DuckDB refused the whole file ("names
    cannot have empty (or all whitespace) value"). It is read under a stand-in name and renamed."""
    rng = np.random.default_rng(1)
    n = 400
    df = pd.DataFrame({"town": rng.choice(["a", "b", "c"], n), "  ": rng.choice(["u", "v"], n),
                       "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n)})
    path = tmp_path / "blank.csv"
    df.to_csv(path, index=False)
    loaded = load_table(path)
    assert list(loaded.frame.columns) == ["town", "  ", "y", "p"]
    for attributes in (["town", "  "], None):
        kw = dict(target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.05, attributes=attributes)
        want = scan(loaded.frame, **kw)
        got = scan_duckdb(path, **kw)
        assert list(got.frame["itemset"]) == list(want.frame["itemset"])
        assert any(s.startswith("  =") for s in got.frame["itemset"])  # the blank-named column is sliced by
        np.testing.assert_array_equal(got.frame["count"], want.frame["count"])
        np.testing.assert_allclose(got.frame["fpr"], want.frame["fpr"], rtol=0, atol=1e-12)


def test_command_line_says_how_the_file_was_read(tmp_path, capsys):
    path = tmp_path / "s.csv"
    path.write_bytes(b"g;x;y;p\n" + b"".join(f"{c};{i},5;{i % 2};{(i // 2) % 2}\n".encode("cp1252")
                                                     for i, c in enumerate("éaéaéaéaéaéaéaéa")))
    out = tmp_path / "o.csv"
    assert main(["scan", str(path), "--target", "y", "--prediction", "p", "--positive", "1", "--metric", "fpr",
                 "--attributes", "g", "--min-support", "0.1", "--output", str(out)]) == 0
    err = capsys.readouterr().err
    assert "semicolon-separated" in err and "Windows-1252" in err and "decimal comma" in err


def test_raw_compas_reads_the_same_on_every_path():
    path = data_file("compas-scores-two-years.csv")
    loaded = load_table(path)
    assert "decile_score.1" in loaded.frame.columns and "priors_count.1" in loaded.frame.columns
    assert any("'decile_score', 'priors_count' appear more than once" in n for n in loaded.notes)
    pd.testing.assert_frame_equal(loaded.frame, pd.read_csv(path, low_memory=False))


# ----------------------------------------------------------------------------- write_atomically


@pytest.mark.parametrize("content", ["naïve text\n", b"\x00bytes", "callable"])
def test_write_atomically_text_bytes_or_a_writer(tmp_path, content):
    path = tmp_path / "out.txt"
    path.write_text("old")
    if content == "callable":
        got = write_atomically(path, lambda tmp: Path(tmp).write_text("from a writer", encoding="utf-8"))
        want = b"from a writer"
    else:
        got = write_atomically(str(path), content)
        want = content.encode("utf-8") if isinstance(content, str) else content
    assert got == path and path.read_bytes() == want
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]  # no temporary file left
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # readable as any file, not private


def test_write_atomically_failure_keeps_the_old_file(tmp_path):
    path = tmp_path / "out.csv"
    path.write_text("old")

    def fail(tmp: str) -> None:
        Path(tmp).write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        write_atomically(path, fail)
    assert path.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_write_atomically_names_a_missing_folder(tmp_path):
    path = tmp_path / "nowhere" / "out.html"
    with pytest.raises(DivergenceInputError) as err:
        write_atomically(path, "x")
    assert str(err.value) == f"Cannot write '{path}': folder '{tmp_path / 'nowhere'}' does not exist."


def test_slice_and_comparison_tables_write_csv_atomically(tmp_path, monkeypatch):
    """SliceTable.to_csv, Comparison.to_csv and the command line all go through write_csv: a
    path is written through a temporary file, a file object directly (also in row blocks)."""
    import io

    import pyarrow as pa

    from divergence.data import csv_writer

    frame = pd.DataFrame({"itemset": [f"a={i}" for i in range(45_000)], "x": np.arange(45_000) / 7})
    path = tmp_path / "t.csv"
    path.write_text("old")

    def fail(table, tmp):
        Path(tmp).write_text("half")
        raise RuntimeError("disk full")

    with monkeypatch.context() as m:
        m.setattr(csv_writer, "_write_arrow_csv", fail)
        with pytest.raises(RuntimeError, match="disk full"):
            csv_writer.write_csv(frame, path)
    assert path.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]
    csv_writer.write_csv(frame, path)
    buf = io.BytesIO()
    csv_writer.write_csv(pa.Table.from_pandas(frame, preserve_index=False), buf)  # two row blocks
    assert buf.getvalue() == path.read_bytes()
    back = pd.read_csv(path)
    assert back["itemset"].tolist() == frame["itemset"].tolist() and np.array_equal(back["x"], frame["x"])


def test_many_repeated_header_names_are_read_in_linear_time(tmp_path):
    """Issue 33 F10: pandas renames repeated header names in quadratic time (20,000 repeats of one
    name: 7 s, a 100 MB header never ended); the names are computed here in one pass and given to
    pandas, the same names it would give (v, v.1, v.2, ...): the time is measured outside tests
    (7.7 s before, 1.2 s after, `load_table` of this file)."""
    n = 20_000
    path = tmp_path / "repeated.csv"
    path.write_text(",".join(["v"] * n) + ",y,p\n" + "".join(",".join(["1"] * n) + f",{i % 2},0\n" for i in range(5)))
    loaded = load_table(path)
    assert list(loaded.frame.columns[:3]) == ["v", "v.1", "v.2"] and list(loaded.frame.columns[-3:]) == ["v.19999", "y", "p"]
    assert loaded.frame["y"].tolist() == [0, 1, 0, 1, 0] and any("more than once" in n for n in loaded.notes)
    note = next(n for n in loaded.notes if "more than once" in n)
    assert "'v.1', 'v.2', 'v.3', 'v.4', 'v.5' and 19,994 more" in note and len(note) < 300  # not 20,000 names


def test_a_header_of_too_many_columns_is_refused_before_it_is_parsed(tmp_path):
    """Issue 33 F10: a header of more columns than any scan can use is refused in one line from its
    first line's bytes, before pandas parses anything (a 100 MB header never ended); a header just
    under the limit is read."""
    from divergence.data.io import ReadLimits

    limits = ReadLimits.default(max_columns=1_000)
    wide = tmp_path / "wide.csv"
    wide.write_text(",".join(f"c{i}" for i in range(1_001)) + "\n" + ",".join(["1"] * 1_001) + "\n")
    with pytest.raises(DivergenceInputError) as e:
        load_table(wide, limits=limits)
    assert "more than 1,000 columns (1,001 names" in str(e.value) and "DIVERGENCE_MAX_COLUMNS" in str(e.value)
    assert "\n" not in str(e.value)
    ok = tmp_path / "ok.csv"
    ok.write_text(",".join(f"c{i}" for i in range(1_000)) + "\n" + ",".join(["1"] * 1_000) + "\n")
    assert load_table(ok, limits=limits).frame.shape == (1, 1_000)
    # one line of 30 MB with no newline: counted block by block, refused after the first
    line = tmp_path / "line.csv"
    line.write_bytes(b"a," * (15 << 20))
    with pytest.raises(DivergenceInputError, match="more than 1,000 columns"):
        load_table(line, limits=limits)
    assert ReadLimits.default().max_columns == 100_000


@pytest.mark.parametrize("rows", [0, 1, 8_191, 40_000, 40_001, 70_001])
def test_the_csv_in_row_blocks_is_arrows_csv_of_the_whole_table(rows, monkeypatch):
    """The CSV formatted in blocks of rows on several threads, each written as soon as it is
    ready, is byte for byte Arrow's CSV of the whole table in one pass (one header, every row once,
    in order), whatever the number of rows and of blocks."""
    import io

    import pyarrow as pa
    import pyarrow.csv as pacsv

    from divergence.data import csv_writer

    monkeypatch.setattr(csv_writer, "_cpus", lambda: 2)
    rng = np.random.default_rng(rows)
    x = rng.normal(size=rows)
    x[::7] = np.nan
    t = pa.table({"itemset": [f"a={i}, b=\"{i % 3}\"" for i in range(rows)], "x": x,
                  "n": np.arange(rows), "flag": np.arange(rows) % 2 == 0})
    whole = io.BytesIO()
    pacsv.write_csv(t, whole)
    blocks = io.BytesIO()
    csv_writer._write_arrow_csv(t, blocks)
    assert blocks.getvalue() == whole.getvalue()
