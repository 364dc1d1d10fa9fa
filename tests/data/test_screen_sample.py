"""The attribute screen reads each column once (divergence.data.column_rules.Sample) and shares what it read
between its rules: every value it shares is the one each rule computed from the column itself."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from divergence.data import column_rules, columns, rival_rules
from divergence.data.screen_sample import SAMPLE_ROWS, Sample, coded_values, groups, numeric_values, sample_index

STORAGES = ["str", "string", "string[python]", "string[pyarrow]"]
POOL = ["a", "b", "A", " a", "\u0001", "", "é", "ab", None, np.nan]


def _text(rng: np.random.Generator, n: int, dtype: str, pool: list = POOL) -> pd.Series:
    return pd.Series([pool[i] for i in rng.integers(0, len(pool), n)], dtype=dtype)


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"t_{d}": _text(rng, n, d) for d in STORAGES})
    df["f"] = np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n).round(1))  # binned: many values
    df["i"] = rng.integers(0, 4, n)
    df["o"] = pd.Series([["x", 1, 1.0, None][i] for i in rng.integers(0, 4, n)], dtype=object)
    df["c"] = pd.Categorical(rng.choice(["u", "v"], n))
    text = df["t_str"].astype(object).where(df["t_str"].notna(), None).tolist()
    chunked = pa.chunked_array([pa.array(text[: n // 3], pa.large_string()), pa.array(text[n // 3:], pa.large_string())])
    df["t_chunks"] = pd.Series(pd.arrays.ArrowStringArray(chunked))
    return df


def _same(a, b) -> bool:
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    return a == b


@pytest.mark.parametrize("n", [500, SAMPLE_ROWS + 1_500])
@pytest.mark.parametrize("factorized_first", [False, True])
def test_a_samples_columns_are_those_of_the_sampled_rows(n, factorized_first):
    """Codes, groups, numbers, presence and distinct values as the rules computed them from the sampled
    column; text factorized on every row first (as the screen's first checks do) gives the same codes."""
    df = _table(n)
    idx = sample_index(n)
    rows = Sample(df)
    for col in df.columns:
        if factorized_first:
            rows.full.factorized(col)
        s = df[col] if idx is None else df[col].iloc[idx]
        codes, uniques = pd.factorize(s, use_na_sentinel=True)
        got_codes, got_uniques = rows.factorized(col)
        assert np.array_equal(got_codes, codes) and list(got_uniques) == list(uniques), col
        assert _same(rows.coded(col), coded_values(s)), col
        assert _same(rows.codes(col), columns._factorize(s)), col
        assert _same(rows.groups(col), groups(s)), col
        x, want = rows.numeric(col), numeric_values(s)
        assert (x is None and want is None) or np.array_equal(x, want, equal_nan=True), col
        assert np.array_equal(rows.present(col), s.notna().to_numpy()), col
        assert list(rows.distinct(col)) == list(pd.unique(s[s.notna()])), col
        assert rows.series(col).equals(s) and rows.n == len(s)
        assert not rows.codes(col)[0].flags.writeable  # shared between the rules: read-only


def test_text_compared_by_its_distinct_values_is_text_compared_row_by_row():
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = int(rng.integers(1, 120))
        df = pd.DataFrame({"x": _text(rng, n, str(rng.choice(STORAGES))),
                           "y": _text(rng, n, str(rng.choice(STORAGES)))})
        text = {c: df[c].astype("string").fillna("\u0001").to_numpy() for c in df.columns}
        assert column_rules._same_text(Sample(df), "x", "y") == float(np.mean(text["x"] == text["y"]))


def test_distinct_pairs_counted_in_a_table_as_by_unique():
    rng = np.random.default_rng(2)
    for ka, kb in [(1, 1), (2, 3), (40, 50), (3, 2_000)]:
        a, b = rng.integers(0, ka, 1_000), rng.integers(0, kb, 1_000)
        assert columns._n_pairs(a, b, kb, ka) == len(pd.unique(a * kb + b))


def test_text_counted_from_its_codes_as_by_value_counts():
    """The constant, identifier and person-name checks read the distinct values and the commonest
    one's count from the shared factorize: what value_counts gives."""
    rng = np.random.default_rng(3)
    names = ["N" + chr(97 + i // 26) + chr(97 + i % 26) + "o" for i in range(300)]  # Naao, Nabo ...
    df = pd.DataFrame({"one": pd.Series(["x"] * 60 + [None] * 3, dtype="str"),
                       "same": pd.Series(["x"] * 63, dtype="str"),
                       "who": _text(rng, 63, "str", names),
                       "few": _text(rng, 63, "string[python]")})
    full = Sample(df, None)
    for col in df.columns:
        assert columns._classify(col, df[col], full) == columns._classify(col, df[col]), col
    people = pd.Series([names[i] for i in rng.integers(0, 300, 5_000)] + [None] * 10, dtype="str", name="first_name")
    frame = people.to_frame()
    assert columns._classify("first_name", people, Sample(frame, None)) == columns._classify("first_name", people)
    assert columns._classify("first_name", people)[0] == "name"  # the commonest value's count read


def _mixed(rng: np.random.Generator, n: int) -> pd.Series:
    kind = rng.integers(0, 5)
    if kind == 0:
        specials = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e20, 1e-7, 0.1 + 0.2, 1.0, 2.5e-300])
        return pd.Series(np.where(rng.random(n) < 0.5, rng.choice(specials, n), rng.normal(size=n).round(2)))
    if kind == 1:
        return pd.Series(rng.integers(-3, 3, n))
    if kind == 2:
        return pd.Series(rng.integers(0, 3, n).astype(np.uint8))
    if kind == 3:
        return pd.Series(rng.choice(["1", "1.0", "-0.0", "0.0", "nan", "\u0001", "x"], n), dtype=str(rng.choice(STORAGES)))
    return pd.Series(rng.choice([True, False], n))  # neither text nor plain numbers: compared as before


def test_text_read_on_distinct_values_is_the_text_of_every_row():
    """Near copies compare columns as text: converting each distinct value once (every bit pattern of a
    float apart) gives the codes and the equalities of converting every row."""
    rng = np.random.default_rng(4)
    for _ in range(300):
        n = int(rng.integers(1, 150))
        df = pd.DataFrame({"x": _mixed(rng, n), "y": _mixed(rng, n)})
        rows = Sample(df)
        text = {c: df[c].astype("string").fillna("\u0001").to_numpy() for c in df.columns}
        for c in df.columns:
            codes = rows.groups(c)[0]
            assert np.array_equal(column_rules._text_codes_of(rows, c, codes), column_rules._text_codes(df[c], codes))
        same = column_rules._same_text(rows, "x", "y")
        assert same is None or same == float(np.mean(text["x"] == text["y"]))


def test_columns_equal_as_text_by_their_distinct_values():
    """A column that is a copy of one left out follows it: two text columns compared by their distinct
    values are equal exactly when their texts are (missing equal only to missing, not to "\u0001")."""
    rng = np.random.default_rng(5)
    for _ in range(300):
        n = int(rng.integers(1, 40))
        x = _text(rng, n, str(rng.choice(STORAGES)), ["a", "\u0001", None])
        y = x.copy() if rng.random() < 0.5 else _text(rng, n, str(rng.choice(STORAGES)), ["a", "\u0001", None])
        df = pd.DataFrame({"x": x, "y": y.astype(str(rng.choice(STORAGES)))})
        want = df["x"].astype("string").equals(df["y"].astype("string"))
        assert rival_rules.equal_as_text(Sample(df, None), "x", "y") == want


def test_agreement_of_many_numbers_in_the_shared_bins():
    """A column of many numbers agrees with the target in ten equal-count bins: those of the groups the
    rules share (column_rules.binned) are the bins it made itself."""
    rng = np.random.default_rng(6)
    for _ in range(20):
        n = 2_000
        x = np.where(rng.random(n) < 0.05, np.nan, rng.normal(size=n).round(int(rng.integers(1, 3))))
        y = pd.Series((rng.random(n) < 0.3).astype(int))
        role = columns._Role("the target 'y'", *columns._factorize(y), None, y)
        cx, kx = columns._factorize(pd.Series(x))
        bins = column_rules.binned(x)
        assert kx > 50 and bins is not None
        assert columns._agreement(x, cx, kx, role, bins) == columns._agreement(x, cx, kx, role)


def test_a_sample_of_every_row_is_freed_without_the_cyclic_collector():
    """A Sample holding every row is its own ``full``: read as a property, not kept as a reference to
    itself (a cycle held the table and every column read until the cyclic collector ran: 13 MiB at
    the peak of an Adult scan); a sampled one keeps its full table, which does not point back."""
    import gc
    import weakref

    from divergence.data.screen_sample import Sample

    df = pd.DataFrame({"a": ["x", "y", "z"] * 100, "b": range(300)})
    was = gc.isenabled()
    gc.disable()
    try:
        whole = Sample(df, None)
        assert whole.full is whole
        whole.factorized("a")
        ref = weakref.ref(whole)
        del whole
        assert ref() is None
        sampled = Sample(df, 50)
        full = weakref.ref(sampled.full)
        assert sampled.full.full is sampled.full and sampled.full is not sampled
        del sampled
        assert full() is None
    finally:
        if was:
            gc.enable()
