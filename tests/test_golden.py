"""The command line's slice tables stay what they were: every itemset, count and verdict
exactly, every number to the last digits (relative 1e-12: a build of the kernels for another
CPU may round a real-valued sum's last bit differently). The tables in tests/golden/ were
written by ``python tests/golden_cases.py`` before the settings and module refactor (issue 12);
regenerate them only when an issue changes what a table holds, and say so in the commit."""
from __future__ import annotations

import gzip
import json

import numpy as np
import pandas as pd
import pytest

from conftest import DATA_DIR, data_file
from golden_cases import CASES, GOLDEN, SCREENS, run_case, screens


def _read(path) -> pd.DataFrame:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return pd.read_csv(f, keep_default_na=False, dtype=str)


@pytest.mark.parametrize("name", list(CASES))
def test_slice_table_is_unchanged(name, tmp_path):
    kind = CASES[name][0]
    if kind.endswith(".csv"):
        data_file(kind)
    got = _read(run_case(name, tmp_path, DATA_DIR))
    want = _read(GOLDEN / f"{name}.csv.gz")
    assert list(got.columns) == list(want.columns)
    assert len(got) == len(want)
    for col in want.columns:
        g, w = got[col], want[col]
        as_num = pd.to_numeric(w.replace("", "nan"), errors="coerce")
        numeric = as_num.notna() | (w == "")
        if numeric.all() and (w != "").any() and not col.endswith("verdict"):
            gn = pd.to_numeric(g.replace("", "nan"), errors="coerce").to_numpy(float)
            wn = as_num.to_numpy(float)
            assert np.array_equal(np.isnan(gn), np.isnan(wn)), f"{name}: {col} defined on other rows"
            ok = ~np.isnan(wn)
            np.testing.assert_allclose(gn[ok], wn[ok], rtol=1e-12, atol=1e-300, err_msg=f"{name}: {col}")
        else:
            bad = (g != w).to_numpy()
            assert not bad.any(), f"{name}: {col} differs, first at row {int(np.argmax(bad))}: " \
                                  f"{g[bad].iloc[0]!r} instead of {w[bad].iloc[0]!r}"


def test_default_attributes_are_unchanged():
    for name in SCREENS:
        data_file(name)
    want = json.loads((GOLDEN / "screens.json").read_text())
    assert screens(DATA_DIR) == want
