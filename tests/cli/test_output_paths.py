"""Issue 47 N1, N4, N8: every output path is compared with every input (a folder or a glob expanded
to its files) and with the other outputs before anything runs; text from the data printed by the
command line cannot reverse or hide what it shows (direction overrides, zero-width characters)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from divergence.cli.cli import main
from divergence.cli.terminal import inert

ROLES = ["--target", "y", "--prediction", "p", "--positive", "1", "--metric", "fpr", "--min-support", "0.1"]


@pytest.fixture()
def folder(tmp_path, monkeypatch):
    """A folder of two CSV files, named relative to the test's own folder (the working one): the messages
    name it whole, however long the path of the test's temporary folder is (a worker's is longer)."""
    monkeypatch.chdir(tmp_path)
    d = Path("d")
    d.mkdir()
    rows = 200
    frame = pd.DataFrame({"y": [i % 2 for i in range(rows)], "p": [(i // 2) % 2 for i in range(rows)],
                          "a": [f"v{(i // 7) % 4}" for i in range(rows)], "b": [f"w{(i // 3) % 3}" for i in range(rows)]})
    for name in ("a.csv", "b.csv"):
        frame.to_csv(d / name, index=False)
    return d


def one_line(capsys, *args) -> str:
    code = main([str(a) for a in args])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("divergence: error: "), err
    return lines[0]


@pytest.mark.parametrize("source", ["{d}/*.csv", "{d}/**/*.csv", "{d}"])
def test_an_output_over_a_file_of_a_glob_or_a_folder_is_refused(folder, capsys, source):
    """N1: ``scan 'dir/*.csv' --engine duckdb --output dir/a.csv`` replaced a.csv with the slice table."""
    before = (folder / "a.csv").read_bytes()
    for out in (folder / "a.csv", folder / "." / "b.csv"):
        line = one_line(capsys, "scan", source.format(d=folder), "--engine", "duckdb", *ROLES, "--output", out)
        assert "is the input file" in line and str(out) in line, line
    line = one_line(capsys, "scan", source.format(d=folder), "--engine", "duckdb", *ROLES, "--save-plan",
                    folder / "b.csv")
    assert line.startswith("divergence: error: --save-plan ") and "is the input file" in line
    assert (folder / "a.csv").read_bytes() == before


def test_an_output_beside_the_globbed_files_is_written(folder, capsys):
    """The check refuses only the files read: a new file in the folder is written."""
    assert main(["scan", f"{folder}/*.csv", "--engine", "duckdb", *ROLES, "--output", str(folder / "out.txt")]) == 0
    assert (folder / "out.txt").read_text().startswith('"itemset"')


def test_the_replication_table_is_an_input(folder, capsys):
    line = one_line(capsys, "scan", folder / "a.csv", *ROLES, "--replicate", folder / "b.csv", "--output",
                    folder / "b.csv")
    assert "is the --replicate file" in line


@pytest.mark.parametrize("command", ["scan", "compare"])
def test_two_outputs_naming_one_file_are_refused(folder, tmp_path, capsys, command):
    """N4: ``--output X --save-plan X`` reported both written, and the CSV replaced the plan."""
    roles = ROLES if command == "scan" else ["--target", "y", "--prediction", "p", "--reference", "y",
                                             "--positive", "1"]
    out = tmp_path / "same.out"
    link = tmp_path / "link.out"
    link.symlink_to(out)
    for plan in (out, tmp_path / "." / "same.out", link):
        line = one_line(capsys, command, folder / "a.csv", *roles, "--output", out, "--save-plan", plan)
        assert "--output" in line and "--save-plan" in line and "are the same file" in line, line
    assert not out.exists()


def test_direction_overrides_and_zero_width_characters_print_as_escapes(tmp_path, capsys):
    """N8: a value with U+202E (RIGHT-TO-LEFT OVERRIDE) printed reversed in the terminal, and a
    zero-width space hid in an itemset; both print as their escapes, like ESC."""
    rows = 200
    path = tmp_path / "bidi.csv"
    pd.DataFrame({"y": [i % 2 for i in range(rows)], "p": [(i // 2) % 2 for i in range(rows)],
                  "city": ["\u202eairotciv" if (i // 5) % 2 else "Vic\u200btoria\u2066x\u2069" for i in range(rows)],
                  "na\u200dme": [f"v{i % 3}" for i in range(rows)]}).to_csv(path, index=False)
    assert main(["scan", str(path), *ROLES, "--top", "50"]) == 0
    out = capsys.readouterr().out
    for ch in "\u202e\u200b\u2066\u2069\u200d":
        assert ch not in out
        assert f"\\u{ord(ch):04x}" in out
    assert "city=\\u202eairotciv" in out and "city=Vic\\u200btoria\\u2066x\\u2069" in out


@pytest.mark.parametrize("text, shown", [
    ("\u202a\u202b\u202c\u202d\u202e", "\\u202a\\u202b\\u202c\\u202d\\u202e"),
    ("\u2066\u2067\u2068\u2069", "\\u2066\\u2067\\u2068\\u2069"),
    ("a\u200bb\u200cc\u200dd\u200e\u200f\ufeff\u2060", "a\\u200bb\\u200cc\\u200dd\\u200e\\u200f\\ufeff\\u2060"),
    ("\u2028\u2029\u061c\u00ad\U000e0041\u3164", "\\u2028\\u2029\\u061c\\xad\\U000e0041\\u3164"),
    ("\x1b[2J\x9b", "\\x1b[2J\\x9b"),
    ("tab\tand\nline, é 日本 😀", "tab\tand\nline, é 日本 😀"),
])
def test_what_the_terminal_is_given(text, shown):
    assert inert(text) == shown
