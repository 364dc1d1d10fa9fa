"""A finding inside another is read against the rest of it (issue 30 point 2): the table names the
finding holding its rows (``M_within``) and how it differs from the rest of that one, with an
interval; its card says so in words and sits right after its holder's; the header no longer calls
the cards "each a different cohort"; "shrunk for the winner's curse" never reads larger than the raw
value. Checked on a small file of a real file's size (900 passengers, four attributes), on the
correlated synthetic worlds and on Adult."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import DATA_DIR

from divergence import scan
from divergence.present.cards import findings, findings_header
from divergence.simulate import correlated_world

DATA = DATA_DIR  # ../shared/data, or $DIVERGENCE_DATA


def passengers(seed: int = 0, n: int = 900) -> pd.DataFrame:
    """A small classifier's table: men are predicted to survive wrongly far more than women, except
    third-class men, whose rate is about half the other men's though still above everyone's."""
    rng = np.random.default_rng(seed)
    gender = rng.choice(["female", "male"], n)
    klass = rng.choice(["1", "2", "3"], n, p=[0.25, 0.25, 0.5])
    embarked = rng.choice(["C", "Q", "S"], n)
    parch = rng.choice(["0", "1"], n)
    y = (rng.random(n) < 0.2).astype(int)
    rate = np.where(gender == "female", 0.03, np.where(klass == "3", 0.45, 0.9))
    pred = np.where(y == 1, rng.random(n) < 0.7, rng.random(n) < rate).astype(int)
    return pd.DataFrame(dict(gender=gender, klass=klass, embarked=embarked, parch=parch, survived=y, predicted=pred))


ROLES = dict(target="survived", prediction="predicted", positive=1, metrics=["fpr"], min_support=0.02)


@pytest.fixture(scope="module")
def small():
    df = passengers()
    return df, scan(df, **ROLES)


def _rows(df: pd.DataFrame, itemset: str, negatives: pd.Series) -> pd.Series:
    """The rows an FPR slice is measured on: the negatives holding every item."""
    mask = negatives.copy()
    for item in itemset.split(", "):
        a, v = item.split("=")
        mask &= df[a].astype(str) == v
    return mask


def _check_within_against_rows(df: pd.DataFrame, table, negatives: pd.Series, flagged: pd.Series) -> int:
    """Every FPR finding said to be inside another has all its measured rows there, and its
    difference from the rest of that one is the rows' own (``flagged``: predicted positive); returns
    how many were checked."""
    f = table.frame
    flagged = flagged.astype(float)
    checked = 0
    for _, r in f[f["fpr_within"] != ""].iterrows():
        inner, holder = _rows(df, r["itemset"], negatives), _rows(df, r["fpr_within"], negatives)
        assert not (inner & ~holder).any() and (holder & ~inner).any()
        rest = holder & ~inner
        expected = flagged[inner].mean() - flagged[rest].mean()
        assert r["fpr_within_difference"] == pytest.approx(expected, abs=1e-12)
        assert r["fpr_within_rest"] == pytest.approx(flagged[rest].mean(), abs=1e-12)
        assert r["fpr_within_ci_low"] < r["fpr_within_difference"] < r["fpr_within_ci_high"]
        assert bool(r["fpr_finding"])
        checked += 1
    # a finding not inside another has no holder and no difference
    assert f.loc[f["fpr_within"] == "", "fpr_within_difference"].isna().all()
    return checked


def test_the_finding_inside_another_is_named_with_its_difference_from_the_rest(small):
    df, table = small
    f = table.frame
    row = f[f["itemset"] == "gender=male, klass=3"].iloc[0]
    assert bool(row["fpr_finding"]) and row["fpr_within"] == "gender=male"
    assert row["fpr_divergence"] > 0 and row["fpr_within_difference"] < -0.3  # above everyone, below other men
    assert row["fpr_within_ci_high"] < 0
    assert _check_within_against_rows(df, table, df["survived"] == 0, df["predicted"]) >= 1


def test_its_card_reads_it_against_the_rest_of_its_holder(small):
    _, table = small
    cards, total = findings(table, "fpr")
    names = [c.itemset for c in cards]
    assert names.index("gender=male, klass=3") == names.index("gender=male") + 1  # right under its holder
    card = cards[names.index("gender=male, klass=3")]
    assert card.within == "gender=male" and card.within_card == names.index("gender=male") + 1
    assert card.inside == f"Inside finding {card.within_card} (“gender=male”)"
    assert "lower than the rest of “gender=male”" in card.what and "though above" in card.what
    assert "difference -45.0 pp, interval [-52.7, -36.2] pp" in card.what  # its interval in percentage points
    header = findings_header(cards, total)
    assert "each a different cohort" not in header and "1 of them lies inside another finding" in header
    # what to do follows what makes it distinct
    assert card.todo.startswith("Review these rows as part of “gender=male”: the metric is reliably lower here")
    assert "though higher than overall" in card.todo
    # the slice table says where it lies too
    from divergence.present.views import display_frame

    rows = table.frame[table.frame["itemset"] == "gender=male, klass=3"]
    # its effect in the findings' model, given gender=male, is the same difference from the rest of it
    assert display_frame(table, rows, "fpr")["Finding"].tolist() == [
        "distinct finding inside gender=male, effect -45.0 [-57.7, -31.4] pp given the other findings"]
    holder = cards[names.index("gender=male")]
    assert not holder.within and not holder.inside and "against" in holder.what


def test_the_report_shows_where_the_card_sits(small, tmp_path):
    from divergence.report.page import build_report

    _, table = small
    html = build_report(table)
    html = html if isinstance(html, str) else html.html
    assert "Inside finding 1 (“gender=male”)" in html


def test_shrunk_never_reads_larger_than_raw_for_the_winners_curse(small):
    _, table = small
    for card in findings(table, "fpr", top=50)[0]:
        assert "after shrinking towards" in card.what or "shrunk for the winner's curse" in card.what or \
            "replication rows" in card.what
    f = table.frame
    for i in np.nonzero(f["fpr_finding"].to_numpy(bool))[0]:
        r = f.iloc[i]
        words = findings(table, "fpr", top=50)[0]
        card = next((c for c in words if c.index == i), None)
        if card is not None and abs(r["fpr_divergence_shrunk"]) > abs(r["fpr_divergence"]):
            assert "winner's curse" not in card.what


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_on_correlated_worlds_every_holder_holds_its_rows(seed):
    df, kw, _ = correlated_world(seed, "three", n=10_000)
    table = scan(df, **kw)
    _check_within_against_rows(df, table, df["y"] != "yes", df["pred"] == "yes")


@pytest.mark.skipif(not (DATA / "adult_discretized.csv").exists(), reason=f"{DATA} not found")
def test_adult_cards_follow_the_rules():
    df = pd.read_csv(DATA / "adult_discretized.csv")
    table = scan(df, target="class", prediction="predicted", positive=1, metrics=["fpr"], min_support=0.01)
    cards, total = findings(table, "fpr", top=40)
    f = table.frame
    assert any(c.within for c in cards)
    assert "each a different cohort" not in findings_header(cards, total)
    for c in cards:
        r = f.iloc[c.index]
        if abs(r["fpr_divergence_shrunk"]) > abs(r["fpr_divergence"]):
            assert "winner's curse" not in c.what and "after shrinking towards" in c.what
        if c.within:
            word = "higher" if r["fpr_within_difference"] > 0 else "lower"
            assert f"{word} than the rest of “{c.within}”" in c.what
