"""AppTest: raw, wide tables as analysts have them (the raw ProPublica file), with only the roles
given; the columns left out of the default attributes, added back, dates by period; the
budget's message beside Run; a cancelled scan. Numbers are checked against the engine."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from apptest_readers import APP, finish_scan, fresh_app, go, keyed, run_scan, setting
from conftest import data_file
from streamlit.testing.v1 import AppTest

from divergence import screen_attributes

RAW = "compas-scores-two-years.csv"
ROLES = dict(target="two_year_recid", score="decile_score", threshold=8)


@pytest.fixture
def app():
    return fresh_app(300)


@pytest.fixture(scope="module")
def raw() -> pd.DataFrame:
    return pd.read_csv(data_file(RAW))


def _errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def _upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at = go(at, "data")
    keyed(at.radio, "w:source").set_value("upload").run()
    at.file_uploader[0].set_value((name, data, "text/csv")).run()
    assert not at.exception, at.exception
    return at


def _left_out_table(at: AppTest) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if list(d.value.columns) == ["column", "left out as", "why"])


def _give_roles(at: AppTest) -> AppTest:
    keyed(at.selectbox, "w:target").set_value(ROLES["target"]).run()
    keyed(at.selectbox, "w:score").set_value(ROLES["score"]).run()
    keyed(at.number_input, "w:threshold").set_value(ROLES["threshold"]).run()
    assert not at.exception and not _errors(at), _errors(at)
    return at


def test_raw_compas_opens_without_an_error_and_scans_with_only_the_roles_given(app, raw):
    at = _upload(app, RAW, data_file(RAW).read_bytes())
    # the page opens on a question, not an error: the unsure roles are empty, their candidates named
    assert not _errors(at)
    assert any(i.value.startswith("Choose the target") for i in at.info)
    notes = " ".join(m.value for m in at.markdown)
    assert "'is_recid', 'is_violent_recid', 'two_year_recid' could each be the target" in notes
    assert at.session_state["pred_kind"] == "score"
    at = _give_roles(at)
    assert setting(at, "positive") == 1
    assert not any("could each be the target" in m.value for m in at.markdown)  # the guess is history now
    assert any("at 8, 19.4% of the rows are predicted positive" in c.value for c in at.caption)

    # the default attributes are the engine's screen, and the columns left out are listed with why
    screen = screen_attributes(raw, ["two_year_recid", "decile_score"], target="two_year_recid",
                               score="decile_score", threshold=8)
    assert keyed(at.multiselect, "w:attributes_pick").value == screen.attributes
    table = _left_out_table(at)
    assert table["column"].tolist() == list(screen.left_out)
    assert table["why"].tolist() == list(screen.left_out.values())
    for column, kind in [("id", "identifier"), ("first", "personal identifier"), ("c_case_number", "identifier"),
                         ("c_jail_in", "date"), ("decile_score.1", "leakage"), ("score_text", "leakage"),
                         ("violent_recid", "all missing"), ("type_of_assessment", "constant")]:
        assert screen.kinds[column] == kind and column in table["column"].tolist()

    at = go(at, "outcome")
    run_scan(at)
    assert not _errors(at), _errors(at)
    result = at.session_state["result"]["table"]
    assert "slices mined in" in at.success[0].value
    assert result.attributes == tuple(screen.attributes)
    used = {item.split("=")[0] for s in result.frame["itemset"].iloc[1:] for item in s.split(", ")}
    assert used <= set(screen.attributes) and not used & set(screen.left_out)
    # priors_count among the top FPR divergences that are findings (significant: at any size since
    # issue 20, n_min being the rows at which a delta divergence is found with 80% power)
    f = result.frame
    top = f[f["fpr_verdict"] == "above"].nlargest(10, "fpr_divergence")
    assert top["itemset"].str.contains("priors_count=").any()

    at = go(at, "slices")
    assert not at.exception and not _errors(at)


def test_a_browser_that_missed_the_new_defaults_does_not_undo_them(app, raw):
    """A click that cuts a run short sends the browser's widget values as they were: choosing
    the target changes the default attributes and the positive label, and a browser that did not
    receive them yet (its next click came first) must not send the old ones back as choices."""
    at = _upload(app, "raw.csv", raw.head(3000).to_csv(index=False).encode())
    before = keyed(at.multiselect, "w:attributes_pick").value
    keyed(at.selectbox, "w:target").set_value(ROLES["target"])
    stale = at._tree.get_widget_states()  # the browser: the target chosen, every other widget as drawn before
    at.run()
    after = keyed(at.multiselect, "w:attributes_pick").value
    assert after != before and setting(at, "positive") == 1  # the target's leaks left out; its label
    at._run(widget_state=stale)  # the next click arrives from that browser
    assert not at.exception
    assert setting(at, "attributes") is None and setting(at, "positive") == 1
    assert keyed(at.multiselect, "w:attributes_pick").value == after
    # the user's own change still counts, and a rerun without one draws no widget anew
    keyed(at.multiselect, "w:attributes_pick").set_value(after[:3]).run()
    assert setting(at, "attributes") == after[:3]
    keys = sorted(w.key for w in at.multiselect)
    at.run()
    assert sorted(w.key for w in at.multiselect) == keys


def test_a_left_out_column_added_back_and_a_date_binned_by_quarter(app, raw):
    small = raw.head(2000)
    at = _upload(app, "raw.csv", small.to_csv(index=False).encode())
    at = _give_roles(at)
    assert "c_charge_desc" not in keyed(at.multiselect, "w:add_back").value
    keyed(at.multiselect, "w:add_back").set_value(["compas_screening_date", "c_charge_desc"]).run()
    chosen = keyed(at.multiselect, "w:attributes_pick").value
    assert "compas_screening_date" in chosen and setting(at, "attributes") is None  # still the default
    # a date added back gets a period: the engine's choice, or month, quarter or year
    keyed(at.selectbox, "w:period:compas_screening_date").set_value("quarter").run()
    assert setting(at, "bins")["compas_screening_date"] == "quarter"
    assert not _errors(at)
    at = go(at, "outcome")
    keyed(at.number_input, "w:min_support").set_value(0.05).run()
    keyed(at.selectbox, "w:max_length").set_value(2).run()
    run_scan(at)
    assert not _errors(at), _errors(at)
    f = at.session_state["result"]["table"].frame
    dates = {i for s in f["itemset"] for i in s.split(", ") if i.startswith("compas_screening_date=")}
    assert dates and all(re.fullmatch(r"compas_screening_date=(\d{4}-Q[1-4]|missing)", d) for d in dates)
    assert f["itemset"].str.contains("c_charge_desc=").any()
    # the choice survives a page change and is in the plan
    at = go(at, "data")
    assert keyed(at.selectbox, "w:period:compas_screening_date").value == "quarter"
    assert {"compas_screening_date", "c_charge_desc"} <= set(keyed(at.multiselect, "w:attributes_pick").value)


def _wide(values: int) -> bytes:
    rng = np.random.default_rng(0)
    wide = pd.DataFrame({f"a{i}": [f"v{k}" for k in rng.integers(0, values, 3000)] for i in range(40)})
    wide["label"] = rng.integers(0, 2, 3000)
    wide["pred"] = rng.integers(0, 2, 3000)
    return wide.to_csv(index=False).encode()


def _tiny_support_every_itemset(at: AppTest, max_slices: int) -> AppTest:
    at = go(at, "outcome")
    keyed(at.number_input, "w:min_support").set_value(0.0001).run()
    keyed(at.checkbox, "w:exhaustive").check().run()
    keyed(at.number_input, "w:max_slices").set_value(max_slices).run()
    return run_scan(at)


def test_a_budget_error_is_said_beside_run_and_every_setting_is_kept(app):
    # 40 attributes of 30 values: 1,200 single items, past a budget of 1,000 slices
    at = _upload(app, "wide.csv", _wide(30))
    assert (setting(at, "target"), setting(at, "prediction")) == ("label", "pred")
    at = _tiny_support_every_itemset(at, 1000)
    errors = _errors(at)
    assert len(errors) == 1 and "\n" not in errors[0], errors
    assert re.search(r"raise the support|limit items per slice|drop attributes", errors[0])
    assert not at.exception
    assert at.session_state["result"]["data_key"] == "built-in"  # the previous result stays
    assert keyed(at.number_input, "w:min_support").value == 0.0001 and keyed(at.checkbox, "w:exhaustive").value
    assert keyed(at.number_input, "w:max_slices").value == 1000


def test_a_scan_cut_by_the_budget_says_how_far_it_is_complete(app):
    # 40 attributes of 4 values: the 160 single items fit in 1,000 slices, the pairs do not
    at = _tiny_support_every_itemset(_upload(app, "wide.csv", _wide(4)), 1000)
    assert not _errors(at), _errors(at)
    table = at.session_state["result"]["table"]
    assert table.lattice.complete_length == 1 and int(table.lengths.max()) == 1
    at = go(at, "slices")
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("Complete up to 1 item; 2-item slices would exceed the budget") for w in warnings), warnings


def test_cancel_keeps_the_previous_result_and_the_settings(app):
    before = app.session_state["result"]
    at = go(app, "outcome")
    keyed(at.number_input, "w:min_support").set_value(0.0001).run()
    keyed(at.checkbox, "w:exhaustive").check().run()
    keyed(at.number_input, "w:time_limit").set_value(600.0).run()
    at.button(key="run").click().run()
    job = at.session_state["scan_job"]
    assert job is not None and job.running
    assert at.button(key="run").disabled
    at.button(key="cancel-scan").click().run()
    assert at.session_state["scan_job"] is None and job.state == "cancelled"
    job.process.join(10)
    assert not job.process.is_alive()
    assert any(i.value.startswith("Scan cancelled after") for i in at.info)
    assert at.session_state["result"] is before
    assert keyed(at.number_input, "w:min_support").value == 0.0001 and keyed(at.checkbox, "w:exhaustive").value
    finish_scan(at)  # nothing left to wait for
    assert at.session_state["result"] is before and not at.button(key="run").disabled


def _csv_dialects() -> list[tuple[str, bytes]]:
    rng = np.random.default_rng(1)
    n = 400
    df = pd.DataFrame({"région": rng.choice(["Île-de-France", "Provence", "Bretagne"], n),
                       "âge": rng.integers(18, 80, n), "revenu": np.round(rng.normal(30, 8, n), 2),
                       "label": rng.integers(0, 2, n), "pred": rng.integers(0, 2, n)})
    return [("semicolon_cp1252.csv", df.to_csv(index=False, sep=";", decimal=",").encode("cp1252")),
            ("tab_bom.tsv", df.to_csv(index=False, sep="\t").encode("utf-8-sig")),
            ("pipe.csv", df.to_csv(index=False, sep="|").encode()),
            ("repeated_names.csv", df.rename(columns={"âge": "revenu"}).to_csv(index=False).encode())]


@pytest.mark.parametrize("name, data", _csv_dialects(), ids=lambda x: x if isinstance(x, str) else "")
def test_the_upload_reads_files_as_they_come_and_says_how(app, name, data):
    from divergence.data.io import load_table

    expected = load_table(data, name=name)
    at = _upload(app, name, data)
    assert not _errors(at) and at.session_state["data_name"] == name
    pd.testing.assert_frame_equal(at.session_state["frame"], expected.frame)
    assert list(at.session_state["frame"].columns)[:1] == ["région"]  # decoded, no byte-order mark
    assert at.session_state["frame"]["revenu"].dtype.kind == "f" or name == "repeated_names.csv"
    shown = [i.value for i in at.info]
    assert expected.notes and all(n in shown for n in expected.notes)
    if name == "repeated_names.csv":  # renamed, never silently: the note names the column
        assert any("revenu" in n for n in expected.notes)
    # roles guessed as on any file
    assert (setting(at, "target"), setting(at, "prediction")) == ("label", "pred")


def test_every_itemset_and_the_budget_go_into_the_plan_and_come_back(app):
    from divergence.report.plan import parse_plan

    at = go(app, "outcome")
    keyed(at.checkbox, "w:exhaustive").check().run()
    keyed(at.number_input, "w:max_slices").set_value(200_000).run()
    keyed(at.number_input, "w:time_limit").set_value(120.0).run()
    at = go(at, "export")
    text = at.code[0].value
    plan = parse_plan(text)
    assert (plan.scan["exhaustive"], plan.scan["max_slices"], plan.scan["time_limit"]) == (True, 200_000, 120.0)
    # the defaults stay out of a plan (it reads as before)
    fresh = AppTest.from_file(APP, default_timeout=300)
    fresh.run()
    default = parse_plan(go(fresh, "export").code[0].value).scan
    assert not {"exhaustive", "max_slices", "time_limit"} & set(default)
    fresh.file_uploader(key="w:plan_upload").set_value(("plan.yaml", text.encode(), "application/x-yaml")).run()
    assert not fresh.exception and not _errors(fresh)
    assert (setting(fresh, "exhaustive"), setting(fresh, "max_slices"),
            setting(fresh, "time_limit")) == (True, 200_000, 120.0)
