"""AppTest: the attribute screen on the Data page (issue 19, point 2) for a file with two models'
outputs: the other model's columns are left out with their reasons, offered as the comparison's
reference, and one choice brings one back; a customer export's personal identifiers (issue 48)."""
from __future__ import annotations

import pytest
from apptest_readers import fresh_app, go, keyed, left_out, run_scan
from personal_table import ATTRIBUTES, PERSONAL_COLUMNS, personal_table
from screen_fixtures import post_outcome, two_models

from divergence import screen_attributes


def _upload(at, name: str, df):
    at = go(at, "data")
    keyed(at.radio, "w:source").set_value("upload").run()
    at.file_uploader[0].set_value((name, df.to_csv(index=False).encode(), "text/csv")).run()
    assert not at.exception, at.exception
    return at


@pytest.fixture
def app():
    return fresh_app(300)


def test_two_models_file_leaves_the_other_model_out_and_offers_it_as_the_reference(app):
    at = _upload(app, "two_models.csv", two_models())
    keyed(at.selectbox, "w:target").set_value("survived").run()
    keyed(at.radio, "w:pred_kind").set_value("labels").run()
    if keyed(at.selectbox, "w:prediction").value != "pred_gb":
        keyed(at.selectbox, "w:prediction").set_value("pred_gb").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    kinds = left_out(at)
    assert kinds["pred_lr"] == kinds["proba_lr"] == "another model"
    attrs = keyed(at.multiselect, "w:attributes_pick").value
    assert attrs == ["pclass", "sex", "age", "sibsp", "fare", "embarked"]
    assert any("Another model's outputs in this table" in c.value and "`pred_lr` (labels)" in c.value
               for c in at.caption)
    # turning the comparison on takes the other model's labels as the reference
    keyed(at.toggle, "w:compare_on").set_value(True).run()
    assert at.session_state["compare_reference"] == "pred_lr"
    assert any("against reference `pred_lr`" in c.value for c in at.caption)
    # one choice brings a column back
    at = _upload(fresh_app(300), "post.csv", post_outcome())
    keyed(at.selectbox, "w:target").set_value("defaulted").run()
    keyed(at.radio, "w:pred_kind").set_value("labels").run()
    if keyed(at.selectbox, "w:prediction").value != "predicted":
        keyed(at.selectbox, "w:prediction").set_value("predicted").run()
    kinds = left_out(at)
    assert kinds["in_collections"] == "after the outcome" and kinds["region_recorded"] == "near copy"
    keyed(at.multiselect, "w:add_back").set_value(["in_collections"]).run()
    assert "in_collections" in keyed(at.multiselect, "w:attributes_pick").value



def test_personal_identifiers_are_listed_with_their_reasons_and_sliced_by_none(app):
    """Issue 48: the customer export's 15 personal columns are listed under the screen's reasons and
    sliced by none; one chosen in Add back comes back."""
    df = personal_table()
    at = _upload(app, "customers.csv", df)
    keyed(at.selectbox, "w:target").set_value("churned").run()
    keyed(at.radio, "w:pred_kind").set_value("labels").run()
    if keyed(at.selectbox, "w:prediction").value != "predicted":
        keyed(at.selectbox, "w:prediction").set_value("predicted").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert keyed(at.multiselect, "w:attributes_pick").value == ATTRIBUTES
    table = next(d.value for d in at.dataframe if list(d.value.columns) == ["column", "left out as", "why"])
    screen = screen_attributes(df, ["churned", "predicted"], target="churned", prediction="predicted")
    shown = dict(zip(table["column"], zip(table["left out as"], table["why"])))
    for col in PERSONAL_COLUMNS:
        assert shown[col] == ("personal identifier", screen.left_out[col]), col
    assert shown["first_name"][1] == "a person's name (by its header)"
    assert shown["host"][1].startswith("IP addresses (by its values")
    at.switch_page("pages/outcome.py")
    at.run()
    run_scan(at)
    assert not at.exception and not at.error, [e.value for e in at.error]
    result = at.session_state["result"]["table"]
    assert list(result.attributes) == ATTRIBUTES
    used = {item.split("=")[0] for s in result.frame["itemset"].iloc[1:] for item in s.split(", ")}
    assert used and not used & set(PERSONAL_COLUMNS)
    at = go(at, "data")
    keyed(at.multiselect, "w:add_back").set_value(["first_name"]).run()
    assert "first_name" in keyed(at.multiselect, "w:attributes_pick").value
