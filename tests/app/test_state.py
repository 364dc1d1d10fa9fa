"""State that never lies (issue 13): results always labelled with the data and settings they
came from, views that follow the table, caches keyed on content, across the transitions a
user makes in a meeting (a new upload before a run, filter then open, a metric switch, a
second upload with another schema).

Each test failed on the code before its fix.
"""
from __future__ import annotations

import datetime

import pandas as pd
import pytest
from apptest_readers import charts, fresh_app, go, keyed, open_row, run_scan, scanned
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

import ui.state  # noqa: F401  (the dashboard's support imports)
from divergence import assess, redundant_itemsets, scan
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, load_demo
from divergence.present.views import redundancy_epsilon, slice_view

STATS = dict(confidence=0.95, correction="bh", bootstrap=0, seed=0, exploratory=True)


@pytest.fixture
def app():
    return fresh_app(90)


@pytest.fixture
def deferred(monkeypatch):
    """The callables of deferred download buttons, by file name, as the browser would call them."""
    found: dict = {}
    original = MediaFileManager.add_deferred

    def record(self, data_callable, mimetype, coordinates, file_name=None, **kw):
        found.setdefault(file_name, []).append(data_callable)
        return original(self, data_callable, mimetype, coordinates, file_name=file_name, **kw)

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    return found


def _loans(n: int = 3000, seed: int = 7, flip: bool = False) -> pd.DataFrame:
    df = load_demo(n, seed=seed)
    pred = df["predicted_default"] == "yes"
    if flip:  # a corrected file: the same rows, other predictions
        pred = df["defaulted"] == "yes"
    return pd.DataFrame({"age": df["age"], "region": df["region"], "education": df["education"],
                         "channel": df["channel"], "label": (df["defaulted"] == "yes").astype(int),
                         "pred": pred.astype(int)})


def _upload(at: AppTest, name: str, df: pd.DataFrame) -> AppTest:
    at = go(at, "data")
    keyed(at.radio, "w:source").set_value("upload").run()
    at.file_uploader(key="w:upload").set_value((name, df.to_csv(index=False).encode(), "text/csv")).run()
    assert not at.exception, at.exception
    return at


def _open_slice(at: AppTest, itemset: str) -> AppTest:
    """Open a slice the way a user does: click its row in the slice table."""
    at = open_row(at, itemset)
    assert not at.exception, at.exception
    return at


def _open_items(at: AppTest) -> list[str]:
    """The items of the slice opened on the Slices page, read from its Shapley chart."""
    spec = next(s for s in charts(at) if s["data"] and s["data"][0]["type"] == "bar")
    return sorted(y for tr in spec["data"] for y in tr["y"])


def _view(table, metric="fpr", **kw):
    eps = redundancy_epsilon(table, metric, 0.05)  # the default ε: 0.05 standard deviations
    return slice_view(table, metric=metric, exclude=redundant_itemsets(table, eps, metric=metric),
                      top_n=kw.pop("top_n", 25), **kw)


def _demo(**kw):
    roles = kw.pop("roles", DEMO_ROLES["classification"])
    return assess(scan(load_demo(), attributes=DEMO_ATTRIBUTES, min_support=kw.pop("min_support", 0.02),
                       **roles, **kw), **STATS)


# ---------------------------------------------------------------- results labelled with their data

def test_a_new_upload_never_relabels_the_old_results(app):
    at = _upload(app, "semicolon.csv", pd.DataFrame({"a;b;c": [f"{i};{i};{i}" for i in range(200)]}))
    at = go(at, "slices")
    text = " ".join([c.value for c in at.caption] + [m.value for m in at.markdown] + [w.value for w in at.warning])
    # the slices shown are the built-in dataset's: say so, and say the data in use has changed
    about = [c.value for c in at.caption if "slices with support" in c.value]
    assert about and all("semicolon.csv" not in c for c in about)
    assert all("built-in dataset" in c for c in about)
    assert any("semicolon.csv" in w.value and "run" in w.value.lower() for w in at.warning), text


def test_outcome_page_drops_the_previous_data_error_and_n_min(app):
    at = go(app, "data")
    keyed(at.selectbox, "w:target").set_value("income").run()
    at = scanned(at)
    assert any("'income' is not binary" in e.value for e in at.error)
    at = _upload(at, "loans.csv", _loans())
    at = go(at, "outcome")
    assert not any("'income' is not binary" in e.value for e in at.error)
    # n_min boxes are derived from a result; the only result is the built-in dataset's
    assert not any("n_min" in i.value for i in at.info), [i.value for i in at.info]
    run_scan(at)
    table = assess(scan(_loans(), target="label", prediction="pred", positive=1, metrics=["fpr", "fnr"],
                        attributes=["age", "region", "education", "channel"], min_support=0.02), **STATS)
    assert any(f"{table.assessment.min_size['fpr'].n_min:,} rows" in i.value for i in at.info)


# ---------------------------------------------------------------- the view follows the result

def test_items_per_slice_widens_again_after_a_longer_result(app):
    at = go(app, "outcome")
    keyed(at.selectbox, "w:max_length").set_value(1).run()
    at = scanned(at)
    at = go(at, "slices")
    at = go(at, "outcome")
    keyed(at.selectbox, "w:max_length").set_value(0).run()
    run_scan(at)
    at = go(at, "slices")
    view = _view(_demo())
    caption = next(c.value for c in at.caption if c.value.startswith("Showing"))
    assert f"of {view.n_matching:,} matching slices" in caption, caption


def test_open_slice_follows_a_filter(app):
    at = go(app, "slices")
    chosen = "region=South, education=Primary, employment=Salaried"
    at = _open_slice(at, chosen)
    assert _open_items(at) == sorted(chosen.split(", "))
    keyed(at.multiselect, "w:f_attributes").set_value(["channel"]).run()
    first = _view(_demo(), attributes=["channel"]).rows["itemset"].iloc[0]
    assert _open_items(at) == sorted(first.split(", "))


def test_open_slice_survives_a_metric_switch(app):
    at = go(app, "slices")
    chosen = "region=South, education=Primary, employment=Salaried"
    at = _open_slice(at, chosen)
    keyed(at.radio, "w:view_metric").set_value("fnr").run()
    keyed(at.radio, "w:view_metric").set_value("fpr").run()
    assert _open_items(at) == sorted(chosen.split(", "))


def test_open_slice_follows_a_new_scan(app):
    at = go(app, "slices")
    chosen = "region=South, education=Primary, employment=Salaried"
    at = _open_slice(at, chosen)
    at = go(at, "data")
    keyed(at.radio, "w:task").set_value("regression").run()
    keyed(at.selectbox, "w:target").set_value("spend").run()
    keyed(at.selectbox, "w:prediction").set_value("predicted_spend").run()
    at = scanned(at)
    at = go(at, "slices")
    view = _view(_demo(roles=DEMO_ROLES["regression"]), metric="abs_error")
    assert chosen not in view.rows["itemset"].tolist()
    assert _open_items(at) == sorted(view.rows["itemset"].iloc[0].split(", "))


# ---------------------------------------------------------------- caches keyed on content

def test_replication_file_with_the_same_name_and_rows_is_read_again(app):
    first, corrected = _loans(2000, seed=11), _loans(2000, seed=11, flip=True)
    at = _upload(app, "loans.csv", _loans())
    keyed(at.radio, "w:replication").set_value("file").run()
    for df in (first, corrected):
        at.file_uploader(key="w:replicate_upload").set_value(
            ("next_month.csv", df.to_csv(index=False).encode(), "text/csv")).run()
        at = scanned(at)
        at = go(at, "data")
    table = at.session_state["result"]["table"]
    expected = assess(scan(_loans(), target="label", prediction="pred", positive=1, metrics=["fpr", "fnr"],
                           attributes=["age", "region", "education", "channel"], min_support=0.02),
                      replicate=corrected, **STATS)
    assert table.frame["fpr_replicated_value"].iloc[0] == expected.frame["fpr_replicated_value"].iloc[0] == 0.0


class _LaterEachCall(datetime.datetime):
    """A clock that moves on by an hour each time it is read."""

    calls = 0

    @classmethod
    def now(cls, tz=None):
        cls.calls += 1
        return datetime.datetime(2026, 1, 1, tzinfo=tz) + datetime.timedelta(hours=cls.calls)


def test_report_is_built_once_per_result(app, deferred, monkeypatch):
    import divergence.report.page

    built = []
    original = divergence.report.page.build_report
    monkeypatch.setattr(divergence.report.page, "build_report", lambda *a, **k: built.append(1) or original(*a, **k))
    monkeypatch.setattr(datetime, "datetime", _LaterEachCall)
    at = go(app, "export")
    at = go(at, "slices")
    at = go(at, "export")
    monkeypatch.setattr(datetime, "datetime", _LaterEachCall.__mro__[1])
    reports = deferred["slice_report.html"]
    assert len(reports) >= 2
    first, second = reports[0](), reports[-1]()
    assert first == second and len(built) == 1


# ---------------------------------------------------------------- exports say what they hold

def test_report_names_the_data_it_came_from(app, deferred):
    at = _upload(app, "loans.csv", _loans())
    at = scanned(at)
    at = go(at, "export")
    html = deferred["slice_report.html"][-1]()
    assert "<dt>Data</dt><dd>loans.csv, 3,000 rows</dd>" in html


def test_a_second_upload_with_another_schema(app):
    # a slice typed on the built-in data, a filter on one of its attributes
    at = go(app, "slices")
    keyed(at.multiselect, "w:slice_items").set_value(["channel=App", "region=South"]).run()
    keyed(at.multiselect, "w:f_attributes").set_value(["channel"]).run()
    at = _upload(at, "loans.csv", _loans())
    at = scanned(at)
    other = pd.DataFrame({"shop": load_demo(2500)["region"], "hour": load_demo(2500)["age"] % 24,
                          "y": (load_demo(2500)["defaulted"] == "yes").astype(int),
                          "yhat": (load_demo(2500)["predicted_default"] == "yes").astype(int)})
    at = _upload(at, "shops.csv", other)
    at = go(at, "slices")
    # the results are still loans.csv's, said so; nothing of the new schema is applied to them
    about = next(c.value for c in at.caption if "slices with support" in c.value)
    assert about.startswith("Results of `loans.csv`, 3,000 rows") and "shops.csv" not in about
    assert any("shops.csv" in w.value for w in at.warning)
    at = scanned(at)
    at = go(at, "slices")
    assert not at.exception and not [e.value for e in at.error]
    table = at.session_state["result"]["table"]
    assert table.attributes == ("shop", "hour")
    first = _view(table).rows["itemset"].iloc[0]
    assert _open_items(at) == sorted(first.split(", "))  # the typed slice of other columns is dropped
    assert not at.warning
