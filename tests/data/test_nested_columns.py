"""Nested or binary columns (lists, structs, maps, bytes; e.g. from Parquet) are left out of the
attributes with a note, and named in one line when asked for: never a traceback (issue 21)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import NESTED, ROOT

from divergence import DivergenceInputError, scan, screen_attributes
from divergence.data.io import load_table
from divergence.data.roles import guess_roles
from divergence.present.columns import describe_columns, preview_frame

KW = dict(target="label", prediction="predicted", positive=1, metrics=["fpr"], min_support=0.1)


def test_left_out_of_the_default_attributes_with_a_note(nested_parquet):
    df = load_table(nested_parquet).frame
    table = scan(df, **KW)
    assert list(table.attributes) == ["a"]
    for col in NESTED:
        assert any(n.startswith(f"Left out column '{col}' from the attributes: it holds ") for n in table.notes)
    screen = screen_attributes(df, ["label", "predicted"], target="label", prediction="predicted")
    assert screen.attributes == ["a"] and all(screen.kinds[c] == "nested" for c in NESTED)
    assert guess_roles(df).target == "label"
    summary = describe_columns(df).set_index("column")
    assert (summary.loc[NESTED, "type"] == "nested (not sliced by)").all()
    assert preview_frame(df)["st"].map(type).eq(str).all()


def test_python_objects_of_a_frame_too():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"y": rng.integers(0, 2, 200), "p": rng.integers(0, 2, 200), "a": rng.choice(["u", "v"], 200)})
    df["tags"] = [["x", "y"] if i % 2 else ["z"] for i in range(200)]
    df["mixed"] = ["text" if i % 50 else {"k": 1} for i in range(200)]  # one mapping among strings
    table = scan(df, target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.1)
    assert list(table.attributes) == ["a"]


@pytest.mark.parametrize("kw, message", [
    (dict(attributes=["a", "st"]), "Column 'st' cannot be used as an attribute: it holds structs or mappings, "
                                   "which no slice can be cut from."),
    (dict(target="lst"), "Column 'lst' cannot be used as a target, prediction, score or outcome: it holds lists"),
])
def test_asked_for_they_are_named_in_one_line(nested_parquet, kw, message):
    df = load_table(nested_parquet).frame
    with pytest.raises(DivergenceInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        scan(df, **{**KW, **kw})


def test_the_command_line_says_so_and_scans(nested_parquet):
    run = subprocess.run([sys.executable, "-m", "divergence", "scan", str(nested_parquet), "--target", "label", "--prediction",
                          "predicted", "--positive", "1", "--metric", "fpr", "--min-support", "0.1"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    assert "note: Left out column 'st' from the attributes: it holds structs or mappings" in run.stderr
    run = subprocess.run([sys.executable, "-m", "divergence", "scan", str(nested_parquet), "--target", "label", "--prediction",
                          "predicted", "--positive", "1", "--metric", "fpr", "--attributes", "a,lst"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stderr.strip().splitlines() == [
        "divergence: error: Column 'lst' cannot be used as an attribute: it holds lists (arrays), which no slice "
        "can be cut from."]
