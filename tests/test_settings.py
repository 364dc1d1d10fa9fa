"""The settings model: validated once, with exact messages; plan sections derived from it."""
from __future__ import annotations

import pytest

from divergence.errors import DivergenceInputError
from divergence.settings import (
    Compare,
    Mining,
    Replication,
    Roles,
    Settings,
    Slicing,
    Statistics,
    scan_keys,
    section_keys,
)


def _msg(fn, **kw) -> str:
    with pytest.raises(DivergenceInputError) as exc:
        fn(**kw)
    return str(exc.value)


@pytest.mark.parametrize("kw, message", [
    (dict(min_support=0), "min_support must be a share of the rows in (0, 1] or a row count above 1; got 0."),
    (dict(min_support="a lot"), "min_support must be a number: a share of the rows in (0, 1] or a row count above 1; "
                                "got 'a lot'."),
    (dict(min_support=12.5), "min_support above 1 is a row count and must be a whole number; got 12.5."),
    (dict(max_length=0), "max_length must be a positive integer; got 0."),
    (dict(max_length=2.5), "max_length must be a positive integer; got 2.5."),
    (dict(confidence=1.0), "confidence must be a level from 0.5 to 0.999999999; got 1.0."),
    (dict(confidence=0), "confidence must be a level from 0.5 to 0.999999999; got 0."),
    (dict(confidence="high"), "confidence must be a level from 0.5 to 0.999999999; got 'high'."),
    (dict(correction="fdr"), "correction must be one of bh, bonferroni, holm; got 'fdr'."),
    (dict(family="everything"), "family must be one of scan, metric; got 'everything'."),
    (dict(bootstrap=-1), "bootstrap must be 0 (none) or 20 to 100,000 replicates; got -1."),
    (dict(bootstrap=5), "bootstrap must be 0 (none) or 20 to 100,000 replicates; got 5."),
    (dict(bootstrap="many"), "bootstrap must be a whole number of replicates; got 'many'."),
    (dict(delta=-0.1), "delta must be a positive number; got -0.1."),
    (dict(delta={"fpr": 0}), "delta for 'fpr' must be a positive number; got 0."),
    (dict(top_k=0), "top_k must be a positive integer; got 0."),
    (dict(holdout=1.0), "holdout must be a share in (0, 1); got 1.0."),
    (dict(threshold=float("inf")), "threshold must be a finite number; got inf."),
    (dict(quantile_bins=0), "quantile_bins must be a positive integer; got 0."),
    (dict(binning="log"), "binning must be one of quantile, uniform, tree; got 'log'."),
    (dict(bins={"age": "fortnight"}), "bins for 'age' must be a bin count, a list of edges or a period "
                                      "(month, quarter, year); got 'fortnight'."),
    (dict(attributes=["age", "age"]), "attributes names column 'age' twice."),
    (dict(attributes=[1, 2]), "attributes must be a list of column names; got [1, 2]."),
    (dict(target=3), "target must be a column name; got 3."),
    (dict(max_slices=0), "max_slices must be a positive integer; got 0."),
    (dict(time_limit=-5), "time_limit must be a positive number of seconds (or None); got -5."),
    (dict(exhaustive="yes"), "exhaustive must be true or false; got 'yes'."),
])
def test_each_bad_setting_has_one_exact_message(kw, message):
    assert _msg(Settings.from_keywords, **kw) == message


def test_an_unknown_keyword_is_named():
    message = _msg(Settings.from_keywords, replicate="prev.csv")
    assert message.startswith("Unknown setting 'replicate'; known settings: ")
    assert "min_support" in message and "holdout" in message


def test_values_are_normalised():
    s = Settings.from_keywords(target="y", prediction="p", metrics="FPR, fnr", attributes="region",
                               bins={"age": (30, 50), "visit": "Quarter", "income": 4.0}, min_support="0.02",
                               bootstrap=200.0, confidence="0.9")
    assert s.roles.metrics == ("fpr", "fnr")
    assert s.slicing.attributes == ("region",)  # one name is a list of one, not its characters
    assert s.slicing.bins == {"age": [30.0, 50.0], "visit": "quarter", "income": 4}
    assert s.mining.min_support == 0.02 and s.statistics.bootstrap == 200 and s.statistics.confidence == 0.9
    assert s.roles.task == "classification" and s.roles.columns() == ["y", "p"]


def test_tasks():
    assert Roles(rank_by="score").task == "ranking"
    assert Roles(outcome="grade").task == "outcome" and Roles(outcome="grade").outcome == ("grade",)
    assert Roles(target="y", prediction="p", metrics=["abs_error"]).task == "regression"
    assert Roles(target="y", prediction="p", regression=True).task == "regression"


def test_holdout_is_replication_by_holdout():
    s = Settings.from_keywords(holdout=0.3)
    assert s.replication == Replication(kind="holdout", share=0.3)
    assert s.sections()["replication"] == {"kind": "holdout", "share": 0.3, "seed": 0}


def test_the_holdout_has_its_own_seed():
    """The holdout's draw is the replication's seed, not the statistics' (issue 46 point 4): a
    statistic changed keeps the rows mined; the keywords' ``seed`` still draws it when no
    ``holdout_seed`` is given (as scan(holdout=..., seed=...) always did)."""
    s = Settings.from_keywords(holdout=0.3, holdout_seed=7, seed=2)
    assert (s.replication.seed, s.statistics.seed) == (7, 2)
    assert s.replace(seed=5).replication.seed == 7  # another statistics seed: the same held-out rows
    assert Settings.from_keywords(holdout=0.3, seed=4).replication.seed == 4
    assert Settings.from_keywords(holdout=0.3).replication.seed == 0
    back = Settings.from_sections(s.sections())
    assert back == s and back.sections()["replication"] == {"kind": "holdout", "share": 0.3, "seed": 7}
    assert _msg(Settings.from_keywords, holdout_seed=3) == (
        "holdout_seed draws the rows a holdout sets aside: give holdout too.")
    assert _msg(Replication, kind="holdout", share=0.3, seed=-1) == (
        "the holdout's seed must be a non-negative integer; got -1.")
    assert _msg(Replication, kind="split", column="year", seed=1) == (
        "Replication of kind 'split' takes no 'seed'; it takes column, confirm_values.")


def test_an_old_plan_draws_its_holdout_from_the_statistics_seed():
    """A plan written before the holdout's own seed reads as before: its statistics' seed draws."""
    old = {"scan": {"target": "y"}, "statistics": {"seed": 9}, "replication": {"kind": "holdout", "share": 0.2}}
    s = Settings.from_sections(old)
    assert (s.replication.seed, s.statistics.seed) == (9, 9)
    assert Settings.from_sections({"replication": {"kind": "holdout", "share": 0.2}}).replication.seed == 0


def test_a_second_files_rows_travel_in_the_replication():
    """The second file's rows are in the replication (never compared, hashed or written to a plan),
    with the words that name them."""
    import pandas as pd

    rows = pd.DataFrame({"a": [1, 2, 3]})
    rep = Replication(kind="file", name="b.csv", rows=rows)
    assert rep == Replication(kind="file", name="b.csv") and hash(rep) == hash(Replication(kind="file", name="b.csv"))
    assert rep.label == "second file b.csv (3 rows)" and Replication(kind="file", name="b.csv").label is None
    assert Settings(replication=rep).sections()["replication"] == {"kind": "file", "name": "b.csv"}
    assert _msg(Replication, kind="holdout", share=0.3, rows=rows).startswith(
        "Replication of kind 'holdout' takes no 'rows'")


@pytest.mark.parametrize("kw, message", [
    (dict(kind="bogus"), "Unknown replication kind 'bogus'; choose from none, split, file, holdout."),
    (dict(kind="file", share=0.3), "Replication of kind 'file' takes no 'share'; it takes name."),
    (dict(kind="holdout"), "Replication of kind 'holdout' needs 'share'."),
    (dict(kind="split"), "Replication of kind 'split' needs 'column'."),
])
def test_replication_messages(kw, message):
    assert _msg(Replication, **kw) == message


def test_compare_needs_a_reference():
    assert _msg(Compare, metrics=["error"]) == ("The compare section names no reference model "
                                                "(reference or reference_score).")
    assert Compare(reference="old").enabled and not Compare().enabled


def test_plan_sections_round_trip():
    s = Settings.from_keywords(target="class", prediction="predicted", positive=1, metrics=["fpr", "fnr"],
                               attributes=["age", "sex"], bins={"age": [30, 50]}, min_support=0.02,
                               max_length=3, exhaustive=True, bootstrap=200, family="metric",
                               delta={"fpr": 0.05}, holdout=0.25, reference="old_model")
    sections = s.sections()
    assert sections["scan"] == {"target": "class", "prediction": "predicted", "positive": 1,
                                "metrics": ["fpr", "fnr"], "attributes": ["age", "sex"],
                                "bins": {"age": [30.0, 50.0]}, "min_support": 0.02, "max_length": 3,
                                "exhaustive": True}
    assert sections["statistics"] == {"delta": {"fpr": 0.05}, "family": "metric", "bootstrap": 200,
                                      "confidence": 0.95, "correction": "bh", "seed": 0}
    assert sections["compare"] == {"reference": "old_model"}
    assert Settings.from_sections(sections) == s
    # other defaults are left out: a plan holds what was chosen, and the support and the
    # statistics' bar always (they keep their meaning if a default changes)
    assert Settings().sections() == {"scan": {"min_support": 0.02},
                                     "statistics": {"confidence": 0.95, "correction": "bh", "family": "metric",
                                                    "bootstrap": 0, "seed": 0}}


def test_plan_sections_refuse_what_they_do_not_hold():
    # replicate (data, not a setting), engine (how to run, not what), confidence in the wrong section
    for section, key in [("scan", "replicate"), ("scan", "engine"), ("scan", "confidence"),
                         ("statistics", "min_support"), ("compare", "target")]:
        message = _msg(Settings.from_sections, sections={section: {key: 1}})
        assert message.startswith(f"Unknown key {key!r} in the plan's {section} section; known keys: ")
    assert _msg(Settings.from_sections, sections={"scan": ["target"]}) == (
        "Section 'scan' of the plan must be a mapping; got ['target'].")


def test_the_plan_schema_is_the_model():
    assert scan_keys() == section_keys("roles") + section_keys("slicing") + section_keys("mining")
    assert "family" in section_keys("statistics") and "exhaustive" in section_keys("mining")
    for cls in (Roles, Slicing, Mining, Statistics, Replication, Compare):
        assert cls() == cls()  # every section has defaults and compares by value
    # settings hash by value (the dashboard's caches key on them): equal settings alike, a change apart
    one = Settings.from_keywords(bins={"a": 3}, delta={"fpr": 0.1})
    assert one == Settings.from_keywords(bins={"a": 3}, delta={"fpr": 0.1})
    assert hash(one) == hash(Settings.from_keywords(bins={"a": 3}, delta={"fpr": 0.1}))
    assert hash(one) != hash(Settings.from_keywords(bins={"a": 4}, delta={"fpr": 0.1}))
    assert hash(one) != hash(Settings.from_keywords(bins={"a": 3}, delta={"fpr": 0.2}))


def test_one_default_support_for_the_api_the_command_line_and_the_dashboard():
    import inspect

    from divergence.cli.cli import build_parser
    from divergence.mining.mined import mine_table
    from divergence.settings import DEFAULT_MIN_SUPPORT, Settings

    assert DEFAULT_MIN_SUPPORT == 0.02
    assert Settings.from_keywords(target="y", prediction="p").mining.min_support == DEFAULT_MIN_SUPPORT
    assert inspect.signature(mine_table).parameters["min_support"].default == DEFAULT_MIN_SUPPORT
    parser = build_parser()
    args = parser.parse_args(["scan", "data.csv", "--target", "y", "--prediction", "p"])
    assert args.min_support == DEFAULT_MIN_SUPPORT
    assert "(default 0.02, as in the dashboard)" in " ".join(parser._subparsers._group_actions[0]
                                                             .choices["scan"].format_help().split())
    from ui.state import K, field_default

    assert field_default(K.MIN_SUPPORT) == DEFAULT_MIN_SUPPORT  # the dashboard opens on the field's default


# ----------------------------------------------------------------------------- one source: the fields' kinds
def _kinds():
    from dataclasses import fields as dc_fields

    from divergence.settings import _SECTIONS

    for cls in _SECTIONS.values():
        for f in dc_fields(cls):
            if f.metadata.get("kind") is not None:
                yield cls, f


def test_every_field_declares_its_kind_and_every_message_is_derived_from_it():
    """A value of the wrong type gets '<name> must be <what the kind takes>'; nothing is said by hand."""
    from divergence.settings import Columns, Flag, Integer, Names, OneOf, Real, Support, Text

    seen = 0
    for cls, f in _kinds():
        kind, name = f.metadata["kind"], f.metadata.get("label") or f.name
        if type(kind).__name__ in ("Kind", "Gamma"):
            continue
        bad = object() if not isinstance(kind, (Names,)) else 7
        with pytest.raises(DivergenceInputError) as exc:
            kind.check(bad, name)
        expected = f"{name} must be {kind.takes_type or kind.takes}; got "
        assert str(exc.value).startswith(expected), (cls.__name__, f.name, str(exc.value))
        seen += 1
    assert seen >= 30
    assert Real(0, 1).takes == "in (0, 1)" and Real(0, 1).takes_type == "a number in (0, 1)"
    assert Integer(1).takes == "a positive integer" and Integer(0).takes == "a non-negative integer"
    assert OneOf(("a", "b")).takes == "one of a, b" and Flag().takes == "true or false"
    assert Text().check(None, "x") is None and Columns().check("a,b", "x") == ("a,b",)  # a name may hold a comma
    assert Support().check("109/6172", "min_support") == pytest.approx(109 / 6172)


def test_a_lone_value_is_checked_by_the_same_kind_as_the_settings():
    from divergence.settings import check

    assert check("binning", "tree") == "tree" and check("quantile_bins", 4.0) == 4
    with pytest.raises(DivergenceInputError, match="^binning must be one of quantile, uniform, tree; got 'log'.$"):
        check("binning", "log")
    with pytest.raises(DivergenceInputError, match="^Unknown setting 'bining'"):
        check("bining", "tree")


def test_the_command_line_options_are_the_settings_fields():
    """Every option of `scan` that sets a setting has the field's default, kind and help text."""
    import argparse

    from divergence.cli.cli import build_parser
    from divergence.settings import flat_keys, setting_field

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    actions = {a.dest: a for a in sub.choices["scan"]._actions}
    offered = [k for k in flat_keys() if k in actions]
    assert set(offered) >= {"target", "metrics", "min_support", "max_work", "confidence", "correction", "bins",
                            "findings_work", "scores", "holdout"}
    for key in offered:
        if key in ("holdout", "holdout_seed"):  # the replication's, offered by hand beside --replicate
            continue
        f, action = setting_field(key), actions[key]
        assert action.help == f.metadata["help"], key
        if f.metadata["kind"].cli().get("action") != "store_true":
            assert action.default == f.default or (action.default is None and callable(f.default_factory)), key
        choices = getattr(f.metadata["kind"], "words", None)
        if isinstance(choices, tuple):
            assert tuple(action.choices) == choices, key
    args = parser.parse_args(["scan", "x.csv", "--metric", "fpr", "--bins", "age=30,50", "--bins", "d=quarter",
                              "--max-work", "0", "--time-limit", "0"])
    from divergence.cli.cli import settings_from_args

    s = settings_from_args(args)
    assert s.roles.metrics == ("fpr",) and s.slicing.bins == {"age": [30.0, 50.0], "d": "quarter"}
    assert s.mining.max_work is None and s.mining.time_limit is None


def test_every_setting_at_and_just_past_its_bounds():
    """Issue 32 point 6: every numeric setting takes its bounds where they are closed, refuses them where
    open and just past them, and refuses inf, NaN and a number too large to convert, each with the one
    message its kind derives (never an OverflowError or Python's 4,300-digit limit)."""
    import math

    from divergence.settings import Integer, Real

    def refused(kind, value, name):
        with pytest.raises(DivergenceInputError, match=f"^{name} must be "):
            kind.check(value, name)

    checked = 0
    for cls, f in _kinds():
        kind, name = f.metadata["kind"], f.metadata.get("label") or f.name
        if isinstance(kind, Real):
            for bound, is_open, step in ((kind.low, kind.low_open, -1), (kind.high, kind.high_open, 1)):
                if bound is None:
                    continue
                if is_open:
                    refused(kind, bound, name)
                elif bound not in kind.none_at:
                    assert kind.check(bound, name) == bound
                refused(kind, bound + step * max(abs(bound), 1) * 1e-9, name)
            for bad in (math.inf, -math.inf, math.nan, 10 ** 5000):
                if bad not in kind.none_at:
                    refused(kind, bad, name)
            checked += 1
        elif isinstance(kind, Integer):
            if kind.low is not None:
                assert kind.check(kind.low, name) == kind.low or kind.gap
                refused(kind, kind.low - 1, name)
            if kind.high is not None:
                assert kind.check(kind.high, name) == kind.high
                refused(kind, kind.high + 1, name)
            for bad in (math.inf, math.nan, 10 ** 5000, 2.5):
                refused(kind, bad, name)
            checked += 1
    assert checked >= 10
    # the levels people use, and what nobody means
    from divergence.settings import check

    assert check("confidence", 0.5) == 0.5 and check("confidence", 0.999999999) == 0.999999999
    for bad in (0.4999, 0.9999999999999999, 1e-300, 1.0):
        with pytest.raises(DivergenceInputError, match="^confidence must be a level from 0.5 to 0.999999999"):
            check("confidence", bad)
