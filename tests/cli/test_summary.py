"""The command line's summary for a person (issue 45 point 5): at most 120 characters a line, rates as
percentages with their interval, divergences in points, q to two significant figures, the verdict and
finding words; every figure printed checked against pandas on the slice's own rows of the raw file."""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from conftest import data_file
from scipy import stats

from divergence.cli.cli import main
from divergence.cli.summary import WIDTH, format_points, format_q, format_rate_interval


@pytest.mark.parametrize("q, text", [(0.0, "< 1e-300"), (1.097030e-35, "1.1e-35"), (0.0043164, "0.0043"),
                                     (0.05, "0.05"), (1.0, "1"), (4.9e-324, "4.9e-324"), (float("nan"), "—"),
                                     (9.96e-5, "1.0e-4"), (0.000123, "0.00012")])
def test_q_has_two_significant_figures_and_never_prints_zero(q, text):
    assert format_q(q) == text


def test_rates_as_percentages_with_their_interval_and_divergences_in_points():
    assert format_rate_interval(0.237858, 0.21023, 0.26912, True) == "23.8% [21.0, 26.9]"
    assert format_rate_interval(0.004, 0.001, 0.012, True) == "0.40% [0.10, 1.2]"
    assert format_rate_interval(-0.829, -0.880, -0.778, False) == "-0.829 [-0.880, -0.778]"
    assert format_points(0.136420, True) == "+13.6 points"
    assert format_points(-0.079350, True) == "-7.9 points"
    assert format_points(-0.925, False) == "divergence -0.925"


def _summary(capsys, *args) -> str:
    assert main(["scan", *map(str, args)]) == 0
    return capsys.readouterr().out


#: a slice's figures as the summary prints them
FIGURES = re.compile(r"^ {6}(?P<metric>\w+) (?P<value>-?[\d.]+)(?P<pct>%?) \[(?P<low>-?[\d.]+), (?P<high>-?[\d.]+)\]; "
                     r"(?:divergence )?(?P<div>[+-]?[\d.]+)(?: points)?; q (?P<q>[^;]+); (?P<rows>[\d,]+) rows "
                     r"\((?P<support>[\d.]+)%\); (?P<rest>.*)$")


def _blocks(text: str) -> list[tuple[str, dict, str]]:
    """(itemset, figures, the words after them) of every slice printed, its wrapped lines joined."""
    lines = text.splitlines()
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("  ") and not line.startswith("   ") and i + 1 < len(lines) and \
                lines[i + 1].startswith("    "):
            itemset, i = line.strip(), i + 1
            while not FIGURES.match(lines[i]):  # a long itemset wraps
                itemset += " " + lines[i].strip()
                i += 1
            m = FIGURES.match(lines[i])
            rest, i = m["rest"], i + 1
            while i < len(lines) and lines[i].startswith("        "):
                rest += " " + lines[i].strip()
                i += 1
            out.append((itemset, m.groupdict(), rest))
            continue
        i += 1
    return out


def _mask(df: pd.DataFrame, itemset: str) -> pd.Series:
    """The rows of a slice, from its items read independently of the package: ``col=value``, ``col=<=x``,
    ``col=>x``, ``col=(a,b]``."""
    keep = pd.Series(True, index=df.index)
    for item in re.split(r", (?=[A-Za-z_]\w*=)", itemset):
        col, value = item.split("=", 1)
        x = df[col]
        if value.startswith("<="):
            keep &= x <= float(value[2:])
        elif value.startswith(">"):
            keep &= x > float(value[1:])
        elif value.startswith("("):
            a, b = value[1:-1].split(",")
            keep &= (x > float(a)) & (x <= float(b))
        else:
            keep &= x.astype(str) == value
    return keep


def _wilson(k: int, n: int, z: float) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def _check_width(text: str) -> None:
    assert max(len(line) for line in text.splitlines()) <= WIDTH
    assert "e+00" not in text and "0.000000" not in text and "nan" not in text.lower()


def test_raw_compas_summary_fits_in_120_columns_and_says_what_pandas_says(capsys):
    path = data_file("compas-scores-two-years.csv")
    text = _summary(capsys, path, "--target", "two_year_recid", "--score", "decile_score", "--threshold", "8",
                    "--positive", "1", "--metric", "fpr,fnr")
    _check_width(text)
    df = pd.read_csv(path)
    predicted = df["decile_score"] >= 8
    truth = df["two_year_recid"] == 1
    overall = {"fpr": predicted[~truth].mean(), "fnr": (~predicted[truth]).mean()}
    for metric, value in overall.items():
        assert f"{metric} ({'false-positive' if metric == 'fpr' else 'false-negative'} rate): whole dataset " \
               f"{100 * value:.1f}% [" in text
    blocks = _blocks(text)
    assert len(blocks) == 20
    z = stats.norm.ppf(0.975)
    words = set()
    for itemset, f, rest in blocks:
        rows = _mask(df, itemset)
        assert f"{rows.sum():,}" == f["rows"], itemset
        assert float(f["support"]) == pytest.approx(100 * rows.mean(), abs=0.051)
        metric = f["metric"]
        pool = rows & (~truth if metric == "fpr" else truth)
        k = int((predicted if metric == "fpr" else ~predicted)[pool].sum())
        rate = k / pool.sum()
        low, high = _wilson(k, int(pool.sum()), z)
        assert f["pct"] == "%" and float(f["value"]) == pytest.approx(100 * rate, abs=0.051), itemset
        assert float(f["low"]) == pytest.approx(100 * low, abs=0.051) and float(f["high"]) == pytest.approx(
            100 * high, abs=0.051), itemset
        assert float(f["div"]) == pytest.approx(100 * (rate - overall[metric]), abs=0.051), itemset
        assert re.fullmatch(r"< 1e-300|\d\.\de-\d+|0\.\d+|1", f["q"]), f["q"]
        words.add(rest.split(";")[0])
        assert "finding" in rest or "explained by" in rest or rest in ("above", "below")
    assert {"above", "below"} <= words


def test_law_data_summary_fits_in_120_columns_and_says_what_pandas_says(capsys):
    path = data_file("law_data.csv")
    text = _summary(capsys, path, "--outcome", "ZFYA")
    _check_width(text)
    df = pd.read_csv(path)
    blocks = _blocks(text)
    assert len(blocks) == 10 and any("< 1e-300" == f["q"] for _, f, _ in blocks)
    overall = df["ZFYA"].mean()
    for itemset, f, rest in blocks:
        y = df.loc[_mask(df, itemset), "ZFYA"]
        assert f"{len(y):,}" == f["rows"] and f["pct"] == ""
        mean, se = y.mean(), y.std(ddof=1) / np.sqrt(len(y))
        half = stats.t.ppf(0.975, len(y) - 1) * se
        for key, want in (("value", mean), ("low", mean - half), ("high", mean + half), ("div", mean - overall)):
            assert float(f[key]) == pytest.approx(want, rel=6e-3, abs=6e-4), (itemset, key)
        assert rest.split(";")[0] in ("above", "below")
