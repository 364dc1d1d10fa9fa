"""The peers' scores (SliceLine's, WRAcc, lift) on our table: their formulas on random tables,
SliceLine's own top-k (the ``sliceline`` package) and pysubgroup's WRAcc top-k on Adult."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from divergence import DivergenceInputError, scan
from divergence.cli.cli import main
from divergence.scores import add_scores, parse_score, score_values

ADULT = ROOT.parent / "shared" / "data" / "adult_discretized.csv"
needs_adult = pytest.mark.skipif(not ADULT.exists(), reason=f"{ADULT} is absent (the shared datasets)")


def _random_frame(seed: int, n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"a{j}": rng.choice(list("xyz")[: 2 + j % 2], n) for j in range(4)})
    base = 0.15 + 0.35 * ((df["a0"] == "x") & (df["a1"] == "y"))
    df["err"] = (rng.random(n) < base).astype(float)
    df["loss"] = rng.gamma(2.0, 1.0 + (df["a1"] == "z"), n)
    return df


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), alpha=st.floats(0.05, 1.0))
def test_formulas_against_their_definitions(seed, alpha):
    df = _random_frame(seed, 120)
    t = scan(df, outcome=["err", "loss"], min_support=0.08, exhaustive=True, max_length=2,
             scores=[f"sliceline:{alpha}", "wracc", "lift"])
    f = t.frame
    for m in ("err", "loss"):
        e = df[m].to_numpy()
        for i in range(len(t)):
            rows = t.rows_of(i)
            n, es = rows.sum(), e[rows].mean()
            want = alpha * (es / e.mean() - 1) - (1 - alpha) * (len(df) / n - 1)
            assert f[f"{m}_sliceline"].iloc[i] == pytest.approx(want, rel=1e-9, abs=1e-12)
            assert f[f"{m}_wracc"].iloc[i] == pytest.approx(n / len(df) * (es - e.mean()), rel=1e-9, abs=1e-12)
            assert f[f"{m}_ratio"].iloc[i] == pytest.approx(es / e.mean(), rel=1e-9)
    assert t.params["scores"] == [f"sliceline:{alpha!r}", "wracc", "lift"]


def test_a_rate_counts_its_defined_rows():
    """FPR is defined on the negatives: |S| and N are negatives, as SliceLine would see them."""
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.choice(list("pq"), 600), "y": rng.integers(0, 2, 600), "p": rng.integers(0, 2, 600)})
    t = scan(df, target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.05)
    neg = df["y"] == 0
    fp = (df["p"] == 1) & neg
    rows = df["a"] == "p"
    got = score_values(t, "fpr", "wracc")[t.lookup("a=p")]
    want = (rows & neg).sum() / neg.sum() * (fp[rows & neg].mean() - fp[neg].mean())
    assert got == pytest.approx(want, rel=1e-12)


def test_bad_scores_are_named():
    with pytest.raises(DivergenceInputError, match="Unknown score 'gini'"):
        scan(_random_frame(0), outcome="err", scores=["gini"])
    with pytest.raises(DivergenceInputError, match=r"alpha must be in \(0, 1\]; got '1.5'"):
        parse_score("sliceline:1.5")
    with pytest.raises(DivergenceInputError, match="Cannot sort by 'nope'"):
        scan(_random_frame(0), outcome="err").top(3, by="nope")


def _sliceline_top(df: pd.DataFrame, attrs, errors: np.ndarray, alpha: float, k: int, max_l: int, min_sup: int):
    pytest.importorskip("sliceline")
    from sliceline.slicefinder import Slicefinder

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sf = Slicefinder(alpha=alpha, k=k, max_l=max_l, min_sup=min_sup, verbose=False)
        sf.fit(df[attrs].astype(str).to_numpy(), errors)
    out = []
    for sl, stats in zip(sf.top_slices_, sf.top_slices_statistics_):
        items = frozenset(f"{a}={v}" for a, v in zip(attrs, sl) if v is not None and v == v)
        out.append((items, stats["slice_score"], int(stats["slice_size"])))
    return out


def _ours_top(table, metric: str, by: str, k: int):
    rows = table.top(len(table), by=by, metric=metric)
    col = rows.columns[rows.columns.str.endswith(parse_score(by).suffix) & rows.columns.str.startswith(metric)][0]
    rows = rows[rows[col] > 0]
    return [(frozenset(s.split(", ")), v, int(c)) for s, v, c in zip(rows["itemset"], rows[col], rows["count"])][:k + 5]


def _same_top(ours, theirs):
    """Equal scores in order, and the same slices wherever the score is not tied at the cut."""
    assert len(theirs) >= 1
    np.testing.assert_allclose([v for _, v, _ in ours[:len(theirs)]], [v for _, v, _ in theirs], rtol=1e-10)
    last = theirs[-1][1]
    assert {s for s, v, _ in ours if v > last + 1e-12} == {s for s, v, _ in theirs if v > last + 1e-12}
    assert all(c == dict((s, n) for s, _, n in ours).get(s, c) for s, _, c in theirs)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sliceline_top_k_from_our_table(seed):
    """SliceLine's own search (the sliceline package) on random data: its top-k are ours, by its score."""
    df = _random_frame(seed, 500)
    attrs = ["a0", "a1", "a2", "a3"]
    for m in ("err", "loss"):
        theirs = _sliceline_top(df, attrs, df[m].to_numpy(), 0.9, 8, 3, 25)
        table = scan(df, outcome=m, attributes=attrs, min_support=25, exhaustive=True, max_length=3)
        _same_top(_ours_top(table, m, "sliceline:0.9", 8), theirs)


@needs_adult
@pytest.mark.slow
def test_sliceline_top_k_on_adult():
    df = pd.read_csv(ADULT)
    attrs = [c for c in df.columns if c not in ("class", "predicted")]
    theirs = _sliceline_top(df, attrs, (df["class"] != df["predicted"]).to_numpy(float), 0.95, 10, 2, 452)
    table = scan(df, target="class", prediction="predicted", positive=1, metrics=["error"], attributes=attrs,
                 min_support=452, exhaustive=True, max_length=2)
    _same_top(_ours_top(table, "error", "sliceline", 10), theirs)


@needs_adult
def test_pysubgroup_wracc_top_k_on_adult():
    """pysubgroup 0.9.0's WRAcc top-20 (its values, tests/peer_values.py: it needs numpy < 2) from our table."""
    from peer_values import PYSUBGROUP_WRACC_ADULT as theirs

    df = pd.read_csv(ADULT)
    table = scan(df, target="class", prediction="predicted", positive=1, metrics=["error"], min_support=0.05,
                 exhaustive=True, max_length=3, scores=["wracc"])
    ours = _ours_top(table, "error", "wracc", len(theirs))
    _same_top(ours, [(frozenset(items), q, size) for items, size, _, q in theirs])
    for items, size, errors, _ in theirs:
        row = table.row(", ".join(items))
        assert (row["count"], round(row["error"] * row["count"])) == (size, errors)


def test_sort_by_a_score_everywhere(tmp_path, capsys):
    df = _random_frame(3, 600)
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    t = scan(df, outcome="err", min_support=30)
    best = t.top(1, by="sliceline")["itemset"].iloc[0]
    assert best == add_scores(t, ["sliceline"]).frame.iloc[1:].sort_values("err_sliceline").iloc[-1]["itemset"]
    out = tmp_path / "s.csv"
    assert main(["scan", str(path), "--outcome", "err", "--min-support", "30", "--scores", "sliceline:0.9,wracc,lift",
                 "--sort-by", "sliceline:0.9", "--output", str(out)]) == 0
    f = pd.read_csv(out, keep_default_na=False, na_values=[""])
    assert {"err_sliceline", "err_wracc", "err_ratio"} <= set(f.columns)
    assert f["itemset"].iloc[0] != f["itemset"].iloc[0] or f["itemset"].iloc[0] == ""  # the whole dataset first
    s = f["err_sliceline"].iloc[1:].to_numpy()
    assert np.all(np.diff(s[~np.isnan(s)]) <= 1e-15)
    assert main(["scan", str(path), "--outcome", "err", "--min-support", "30", "--sort-by", "wracc", "--top", "3"]) == 0
    text = capsys.readouterr().out
    top3 = t.top(3, by="wracc")["itemset"].tolist()
    assert all(s in text for s in top3) and "err_wracc" in text


def test_report_and_dashboard_view_sort_by_a_score():
    from divergence.present.views import display_frame, slice_view, sort_options
    from divergence.report.page import _sorted_rows, build_report

    t = scan(_random_frame(4, 600), outcome="err", min_support=30)
    want = t.top(5, by="wracc")["itemset"].tolist()
    assert _sorted_rows(t, "err", "wracc")["itemset"].head(5).tolist() == want
    html = build_report(t, sort_by="sliceline", top=20)
    assert "Slices, by SliceLine score" in html and "<th" in html and "SliceLine score</th>" in html
    options = sort_options(t, "err")
    assert options["WRAcc (support × divergence)"] == "err_wracc" and options["SliceLine score (α = 0.95)"] == "err_sliceline"
    view = slice_view(t, metric="err", sort_by="err_wracc", top_n=5)
    assert view.rows["itemset"].tolist() == want
    assert "WRAcc" in display_frame(t, view.rows, "err", also=[view.sort_by]).columns
    ratio = slice_view(t, metric="err", sort_by="err_ratio", top_n=3).rows
    assert ratio["err"].tolist() == sorted(ratio["err"].tolist(), reverse=True)
