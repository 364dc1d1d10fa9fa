"""The command line's slice tables stay what they were. What is deterministic is compared
exactly: itemsets, lengths, counts, verdicts, flags (every text and integer column). Floats are
compared at the tolerance their arithmetic supports, so the test passes on any CPU the kernels
are built for (issue 21: another machine of the same kind rounded differently):

- closed forms (means, divergences, t, p, q, intervals): relative 1e-12, plus 1e-13 of the
  column's scale for values that cancel to about zero: another CPU's exp, log or summation order
  moves the last bits only;
- iterative fits: the empirical-Bayes shrinkage (``*_shrunk``) is an EM that stops when no
  mixture weight moves by more than 1e-4, so a fit that stops one iteration earlier or later on
  another CPU moves every estimate by up to about 5e-7 of the largest (measured: tolerance 1e-4
  against 1e-5); compared at 2e-6 of the column's scale (plus relative 1e-6); Tango's interval
  of a paired change (``*_change_ci_low``/``_high``) is a bisection to 2^-47: compared to 2^-46;
  the findings' model effects (``*_effect``, ``*_effect_ci_low``/``_high``), a Newton or reweighting
  fit stopped when the log-likelihood or the weights settle: relative 1e-5 plus 1e-5 of the scale.

The tables in tests/golden/ were written by ``python tests/golden_cases.py`` before the settings
and module refactor (issue 12); regenerate them only when an issue changes what a table holds,
and say so in the commit."""
from __future__ import annotations

import gzip
import json

import numpy as np
import pandas as pd
import pytest
from conftest import DATA_DIR, data_file
from golden_cases import CASES, GOLDEN, SCREENS, run_case, screens

#: column suffix -> (relative tolerance, absolute tolerance as a share of the column's largest value, or an
#: absolute tolerance when negative), for the numbers an iterative procedure finds; every other float: CLOSED_FORM
ITERATIVE = {"_shrunk": (1e-6, 2e-6), "_change_ci_low": (0.0, -2.0 ** -46), "_change_ci_high": (0.0, -2.0 ** -46),
             # the findings' model: Newton's method (0/1) or weights refitted until they settle (real)
             "_effect": (1e-5, 1e-5), "_effect_ci_low": (1e-5, 1e-5), "_effect_ci_high": (1e-5, 1e-5)}
CLOSED_FORM = (1e-12, 1e-13)


def tolerance(col: str, values: np.ndarray) -> tuple[float, float]:
    """(rtol, atol) for comparing a float column of a golden table (see the module's docstring)."""
    rtol, share = next((t for suffix, t in ITERATIVE.items() if col.endswith(suffix)), CLOSED_FORM)
    finite = values[np.isfinite(values)]
    scale = float(np.abs(finite).max()) if finite.size else 0.0
    return rtol, (-share if share < 0 else share * scale) or 1e-300


def _read(path) -> pd.DataFrame:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return pd.read_csv(f, keep_default_na=False, dtype=str)


def _exact_column(w: pd.Series) -> bool:
    """A column whose every cell is text or a whole number: compared exactly."""
    as_num = pd.to_numeric(w.replace("", "nan"), errors="coerce")
    if as_num.isna().sum() > (w == "").sum():  # text somewhere
        return True
    return bool(w[w != ""].str.fullmatch(r"-?\d+").all())


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
        if (w != "").any() and not col.endswith("verdict") and not _exact_column(w):
            gn = pd.to_numeric(g.replace("", "nan"), errors="coerce").to_numpy(float)
            wn = pd.to_numeric(w.replace("", "nan"), errors="coerce").to_numpy(float)
            assert np.array_equal(np.isnan(gn), np.isnan(wn)), f"{name}: {col} defined on other rows"
            ok = ~np.isnan(wn)
            rtol, atol = tolerance(col, wn)
            np.testing.assert_allclose(gn[ok], wn[ok], rtol=rtol, atol=atol, err_msg=f"{name}: {col}")
        else:
            bad = (g != w).to_numpy()
            assert not bad.any(), f"{name}: {col} differs, first at row {int(np.argmax(bad))}: " \
                                  f"{g[bad].iloc[0]!r} instead of {w[bad].iloc[0]!r}"


def test_default_attributes_are_unchanged():
    for name in SCREENS:
        data_file(name)
    want = json.loads((GOLDEN / "screens.json").read_text())
    assert screens(DATA_DIR) == want


def test_tolerances_follow_the_arithmetic():
    """Integers and text exactly; a last-bit difference of a closed form passes; a shrunk divergence
    may move by what one EM iteration moves it; anything larger fails."""
    assert _exact_column(pd.Series(["1", "", "25"])) and _exact_column(pd.Series(["a=1", "b=2"]))
    assert not _exact_column(pd.Series(["0.5", "1", ""]))
    closed = np.array([0.25, -0.125, 1e-17])
    rtol, atol = tolerance("fpr_divergence", closed)
    np.testing.assert_allclose(closed * (1 + 1e-15) + 1e-18, closed, rtol=rtol, atol=atol)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(closed * (1 + 1e-9), closed, rtol=rtol, atol=atol)
    shrunk = np.array([0.2, -0.01, 3e-9])
    rtol, atol = tolerance("fpr_divergence_shrunk", shrunk)
    np.testing.assert_allclose(shrunk + 2.7e-11 * shrunk + 1e-7, shrunk, rtol=rtol, atol=atol)  # another CPU
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(shrunk + 1e-5, shrunk, rtol=rtol, atol=atol)
