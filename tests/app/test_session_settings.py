"""The dashboard holds one Settings (issue 29 point 4): every setting with a field in the settings
model lives in the session's ``divergence.Settings``, a value the model refuses is kept as typed
with the model's words beside it and at Run, and the settings widgets take their bounds and words
from the fields' kinds, as the command line's options do."""
from __future__ import annotations

import pytest
import streamlit as st
from apptest_readers import finish_scan, fresh_app, go, keyed, setting

from divergence import Settings
from divergence.settings import Columns, Flag, Integer, Names, OneOf, PerMetric, Real, Support, Text, setting_field
from ui.state import DASHBOARD_OPENS_ON, DEFAULTS, SETTING_FIELDS, K, widget_for


def test_every_setting_key_is_a_field_of_the_settings_model():
    for key, name in SETTING_FIELDS.items():
        field = setting_field(name)
        assert field.name == name, key


def test_one_default_per_setting_the_fields():
    """Issue 46 point 1: the dashboard opens every setting on its field's default, but where
    DASHBOARD_OPENS_ON says otherwise (and says why): redundancy 0.05 σ there, 0 (no pruning) in the
    model. No default of a field is written in the dashboard: DEFAULTS holds the other keys only."""
    from ui.state import _field, _to_page, field_default

    model = Settings()
    assert not set(DEFAULTS) & set(SETTING_FIELDS)
    differ = {key for key in SETTING_FIELDS if field_default(key) != _to_page(key, _field(model, key))}
    assert differ == set(DASHBOARD_OPENS_ON)
    assert model.explain.redundancy == 0.0 and field_default(K.REDUNDANCY) == 0.05
    assert (field_default(K.CONFIDENCE), field_default(K.CORRECTION), field_default(K.QUANTILE_BINS)) == (
        model.statistics.confidence, model.statistics.correction, model.slicing.quantile_bins)


def test_every_field_of_the_sections_the_session_holds_is_a_setting_key():
    """A field added to a section is a session key by its name, with nothing else to write (but
    ``sort_by``, the slice table's sort in the dashboard)."""
    from dataclasses import fields

    from divergence.settings import _SECTIONS
    from ui.state import SESSION_SECTIONS

    names = {f.name for sec in SESSION_SECTIONS for f in fields(_SECTIONS[sec])}
    assert set(SETTING_FIELDS) == names - {"sort_by"}


@pytest.mark.parametrize("key", sorted(SETTING_FIELDS))
def test_a_settings_widget_takes_its_bounds_and_words_from_the_fields_kind(key):
    kind = setting_field(SETTING_FIELDS[key]).metadata["kind"]
    draw, kwargs = widget_for(key)
    if isinstance(kind, Flag):
        assert draw is st.checkbox and kwargs == {}
    elif isinstance(kind, OneOf):
        assert draw is st.selectbox and kwargs == {"options": list(kind.words)}
    elif isinstance(kind, Integer):
        assert draw is st.number_input and kwargs.get("min_value") == kind.low and kwargs.get("max_value") == kind.high
        assert kwargs["step"] == 1 and all(isinstance(v, int) for v in kwargs.values())
    elif isinstance(kind, Real):
        assert draw is st.number_input and kwargs.get("min_value") == kind.low and kwargs.get("max_value") == kind.high
        assert all(isinstance(v, float) for v in kwargs.values())  # Streamlit refuses mixed int and float bounds
    elif isinstance(kind, (Support, PerMetric)):
        assert draw is st.number_input and kwargs == {}
    elif isinstance(kind, Text):  # a column: the page offers the data's columns
        assert draw is st.selectbox and kwargs == {}
    elif isinstance(kind, (Columns, Names)):
        assert draw is st.multiselect and kwargs == {}
    else:
        assert draw is st.text_input


def test_the_session_holds_one_settings_and_keeps_a_refused_value_as_typed():
    at = fresh_app(120)
    held = at.session_state[K.SETTINGS]
    assert isinstance(held, Settings)
    # the built-in data's roles and the dashboard's defaults are fields of it, not keys of their own
    assert (held.roles.target, held.roles.prediction, held.roles.positive) == ("defaulted", "predicted_default", "yes")
    assert held.roles.metrics == ("fpr", "fnr") and held.explain.redundancy == DASHBOARD_OPENS_ON[K.REDUNDANCY]
    assert not [k for k in SETTING_FIELDS if k in at.session_state]

    at = go(at, "data")
    keyed(at.number_input, "w:quantile_bins").set_value(5).run()
    assert at.session_state[K.SETTINGS].slicing.quantile_bins == 5 and setting(at, K.QUANTILE_BINS) == 5

    at = go(at, "outcome")
    keyed(at.number_input, "w:bootstrap").set_value(10).run()  # the model takes 0 or 20 to 100,000
    assert at.session_state[K.SETTINGS].statistics.bootstrap == 0  # the last value the model took
    assert setting(at, K.BOOTSTRAP) == 10 and keyed(at.number_input, "w:bootstrap").value == 10  # kept as typed
    words = "bootstrap must be 0 (none) or 20 to 100,000 replicates; got 10."
    assert [e.value for e in at.error].count(words) == 1  # beside the box
    at.button(key="run").click().run()
    assert at.session_state[K.RUN_ERROR] == words  # and at Run, in the same words
    assert [e.value for e in at.error].count(words) == 2
    keyed(at.number_input, "w:bootstrap").set_value(20).run()
    assert at.session_state[K.SETTINGS].statistics.bootstrap == 20 and not at.session_state[K.DRAFTS]
    assert [e.value for e in at.error].count(words) == 1  # the Run's, until the next run


def test_a_run_sends_the_sessions_settings_as_they_are(monkeypatch):
    """Issue 46 point 1: a run sends the session's Settings, not a second one rebuilt from keywords:
    its statistics and explain sections are the very objects the session holds, the roles those of
    the branch chosen, and a plan's statistics the page shows no widget for (family, top_k, seed)
    reach the run."""
    from divergence import SlicePlan
    from divergence.report.plan import dump_plan
    from ui import worker

    sent = []
    real = worker.start

    def recorded(request, *args, **kwargs):
        sent.append(request)
        return real(request, *args, **kwargs)

    monkeypatch.setattr(worker, "start", recorded)
    at = finish_scan(go(fresh_app(120), "outcome"))  # the first visit's scan
    n = len(sent)
    keyed(at.selectbox, "w:confidence").set_value(0.99).run()  # a statistic: re-assessed at once, or at Run
    if len(sent) == n:
        at.button(key="run").click().run()
    finish_scan(at)
    held = at.session_state[K.SETTINGS]
    request = sent[-1]
    assert request.settings.statistics is held.statistics and request.settings.explain is held.explain
    assert request.settings.statistics.confidence == 0.99
    assert request.settings.roles.prediction == "predicted_default" and request.settings.roles.score is None
    sent_roles = request.settings.roles  # the branch's fields, as held (the ranking's gamma the page opens on: not sent)
    assert all(getattr(sent_roles, f) == getattr(held.roles, f) for f in ("target", "prediction", "positive", "metrics"))
    assert (held.roles.gamma, sent_roles.gamma) == ("dcg", None)
    # a plan's statistics the page shows no widget for reach the session and the run
    plan = SlicePlan.from_settings(Settings.from_sections({
        "scan": {"target": "defaulted", "prediction": "predicted_default", "positive": "yes",
                 "metrics": ["fpr"], "min_support": 0.05},
        "statistics": {"family": "scan", "top_k": 5, "seed": 3, "bootstrap": 20}}))
    at = go(at, "export")
    at.file_uploader(key="w:plan_upload").set_value(("plan.yaml", dump_plan(plan).encode(),
                                                     "application/x-yaml")).run()
    assert not at.exception
    at = finish_scan(go(at, "outcome"))
    at.button(key="run").click().run()
    stats = sent[-1].settings.statistics
    assert (stats.family, stats.top_k, stats.seed, stats.bootstrap) == ("scan", 5, 3, 20)
    assert stats is at.session_state[K.SETTINGS].statistics
    finish_scan(at)
    assert not at.exception and at.session_state[K.RUN_ERROR] is None


def test_the_holdout_seed_chosen_on_the_data_page_is_the_one_a_run_sends(monkeypatch):
    """The held-out rows' own seed (``--holdout-seed`` on the command line) has a widget beside the
    held-out share: kept across pages, sent in the run's Settings, and the rows held out are its draw."""
    from divergence.data.datasets import load_demo
    from divergence.prepare.replication_rows import holdout_mask
    from divergence.settings import Replication
    from ui import worker

    sent = []
    real = worker.start
    monkeypatch.setattr(worker, "start", lambda request, *a, **k: sent.append(request) or real(request, *a, **k))
    at = go(fresh_app(120), "data")
    keyed(at.radio, "w:replication").set_value("holdout").run()
    assert keyed(at.number_input, "w:holdout_seed").value == Replication(kind="holdout", share=0.3).seed == 0
    keyed(at.number_input, "w:holdout_seed").set_value(7).run()
    at = go(at, "outcome")
    at.button(key="run").click().run()
    finish_scan(at)
    assert not at.exception and at.session_state[K.RUN_ERROR] is None
    assert sent[-1].settings.replication == Replication(kind="holdout", share=0.3, seed=7)
    table = at.session_state["result"]["table"]
    n = len(load_demo())
    assert table.assessment.replication_rows == int(holdout_mask(n, 0.3, 7).sum()) != int(holdout_mask(n, 0.3, 0).sum())
    at = go(at, "data")
    assert keyed(at.number_input, "w:holdout_seed").value == 7  # kept in session state across pages
