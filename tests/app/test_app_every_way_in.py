"""AppTest (issue 44): the dashboard screens as the engine does for every way in: an outcome alone
leaves out its sibling outcome (law school data), and a score without a threshold is cut at 0.5 with the
engine's note when within [0, 1], else the page asks for the threshold."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from apptest_readers import fresh_app, go, keyed, left_out, run_scan, setting
from conftest import data_file


@pytest.fixture
def app():
    return fresh_app(300)


def _upload(at, name: str, data: bytes):
    at = go(at, "data")
    keyed(at.radio, "w:source").set_value("upload").run()
    at.file_uploader[0].set_value((name, data, "text/csv")).run()
    assert not at.exception, at.exception
    return at


def test_outcome_alone_leaves_out_its_sibling_with_the_engines_words(app):
    law = pd.read_csv(data_file("law_data.csv")).head(8000)
    at = _upload(app, "law.csv", law.to_csv(index=False).encode())
    keyed(at.radio, "w:task").set_value("outcome").run()
    keyed(at.multiselect, "w:outcome").set_value(["ZFYA"]).run()
    assert not at.exception and not [e.value for e in at.error]
    assert "first_pf" not in keyed(at.multiselect, "w:attributes_pick").value
    assert left_out(at).get("first_pf") == "after the outcome"
    captions = [c.value for c in at.caption]
    assert any(c.startswith("Attribute screen of the outcome 'ZFYA' alone") for c in captions), captions
    # named, it is sliced by
    keyed(at.multiselect, "w:add_back").set_value(["first_pf"]).run()
    assert "first_pf" in keyed(at.multiselect, "w:attributes_pick").value


def test_score_without_threshold(app):
    rng = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame({"group": rng.choice(list("abc"), n), "region": rng.choice(list("xy"), n),
                       "label": rng.integers(0, 2, n)})
    df["proba"] = np.clip(0.3 * df["label"] + rng.random(n) * 0.7, 0, 1)
    df["points"] = np.round(df["proba"] * 9 + 1)  # the same model on a 1-10 scale
    at = _upload(app, "scores.csv", df.to_csv(index=False).encode())
    keyed(at.selectbox, "w:target").set_value("label").run()
    keyed(at.radio, "w:pred_kind").set_value("score").run()
    keyed(at.selectbox, "w:score").set_value("points").run()
    assert setting(at, "threshold") is None  # the guess's 0.5 was the other score's
    assert any("the threshold" in i.value for i in at.info), ([i.value for i in at.info], setting(at, "threshold"), [e.value for e in at.error], [c.value for c in at.caption][:5], setting(at, "score"))  # asked
    keyed(at.selectbox, "w:score").set_value("proba").run()
    assert setting(at, "threshold") is None
    assert not any("the threshold" in i.value for i in at.info)
    at = go(at, "outcome")
    run_scan(at)
    assert not [e.value for e in at.error], [e.value for e in at.error]
    table = at.session_state["result"]["table"]
    assert table.params["threshold"] == 0.5
    assert table.notes[0].startswith("No threshold given for the score 'proba': its values lie in [0, 1]")
