"""The open slice's AUC, F1… computed on its own rows (issue 45 point 3): the Slices page shows what
``table.evaluate`` gives, checked against scikit-learn on the slice's rows of the built-in data."""
from __future__ import annotations

from apptest_readers import fresh_app, go, keyed, run_scan
from sklearn.metrics import balanced_accuracy_score, f1_score, roc_auc_score

from divergence.data.datasets import DEMO_TRUTH, load_demo
from divergence.present.formats import format_number


def _rows(df, itemset):
    keep = df.index == df.index
    for item in itemset.split(", "):
        col, value = item.split("=")
        keep &= df[col].astype(str) == value
    return df[keep]


def test_open_slice_shows_f1_and_balanced_accuracy_of_its_rows():
    at = fresh_app(90)
    assert not at.exception
    shown = {m.label: m for m in at.metric}
    df = load_demo()
    r = _rows(df, DEMO_TRUTH["elevated_fpr"])  # the slice open first: the finding
    y, p = r["defaulted"] == "yes", r["predicted_default"] == "yes"
    assert shown["F1"].value == format_number(f1_score(y, p))
    assert shown["Balanced accuracy"].value == format_number(balanced_accuracy_score(y, p))
    assert "AUC" not in shown  # predicted labels: no score to rank by
    whole = f1_score(df["defaulted"] == "yes", df["predicted_default"] == "yes")
    assert any(f"whole dataset {format_number(whole)}" in c.value for c in at.caption)


def test_with_a_score_auc_is_shown():
    at = go(fresh_app(90), "data")
    keyed(at.radio, "w:pred_kind").set_value("score").run()
    keyed(at.selectbox, "w:score").set_value("default_score").run()
    at = go(at, "outcome")
    run_scan(at)
    at = go(at, "slices")
    shown = {m.label: m.value for m in at.metric}
    df = load_demo()
    r = _rows(df, DEMO_TRUTH["elevated_fpr"])
    assert shown["AUC"] == format_number(roc_auc_score(r["defaulted"] == "yes", r["default_score"]))
