"""The comparison as a standing pre-release check: a plan's compare section, the report's
comparison section, `report --fail-on-worse`."""
from __future__ import annotations

import pytest

from divergence import DivergenceInputError
from divergence.cli.cli import main
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_COMPARE_TRUTH, load_demo_models
from divergence.report.page import build_report
from divergence.report.plan import SlicePlan, load_plan, plan_hash, save_plan
from divergence.report.run import run_comparison, run_plan


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    path = tmp_path_factory.mktemp("rep") / "models.csv"
    load_demo_models(4000).to_csv(path, index=False)
    return path


def _plan(**compare) -> SlicePlan:
    return SlicePlan(scan=dict(target="defaulted", prediction="predicted_default", positive="yes",
                               metrics=["fpr", "fnr", "precision"], attributes=DEMO_ATTRIBUTES, min_support=0.03),
                     statistics=dict(confidence=0.95, correction="bh", delta=0.1), compare=compare)


def test_plan_compare_section_round_trip(tmp_path):
    plan = _plan(reference="previous_default")
    path = save_plan(plan, tmp_path / "p.yaml")
    back = load_plan(path)
    assert back.compare == {"reference": "previous_default"} and back == plan
    assert plan_hash(back) != plan_hash(_plan())  # the comparison is part of what was planned
    assert "compare" not in _plan().to_dict()  # plans without a comparison are unchanged
    with pytest.raises(DivergenceInputError, match="Unknown key 'ref' in the plan's compare section"):
        _plan(ref="x")
    with pytest.raises(DivergenceInputError, match="names no reference model"):
        _plan(reference_threshold=0.4)


def test_report_carries_the_comparison(data):
    import pandas as pd

    df = pd.read_csv(data)
    plan = _plan(reference="previous_default")
    c = run_comparison(plan, df)
    assert c.metric_names == ["fpr", "fnr"]  # the scan's metrics a comparison can measure (not precision)
    assert c.row(DEMO_COMPARE_TRUTH["worse_fpr"])["fpr_verdict"] == "worse"
    html = build_report(run_plan(plan, df), plan=plan, comparison=c)
    assert "Comparison with the reference model" in html and "Pre-release check: the model is worse" in html
    assert DEMO_COMPARE_TRUTH["worse_fpr"] in html
    # the report colours a comparison's verdicts as the app does (one palette, in formats)
    from divergence.present.formats import COMPARE_VERDICT_COLORS, ink_on

    worse = COMPARE_VERDICT_COLORS["worse"]
    # below the minimum size it says so in the one word the slice table uses (issue 30 point 8)
    word = "worse" if c.row(DEMO_COMPARE_TRUTH["worse_fpr"])["fpr_meets_min_size"] else "worse · indicative"
    assert f'style="background:{worse};color:{ink_on(worse)}">{word}</span>' in html
    assert run_comparison(_plan(), df) is None


def test_report_fail_on_worse(data, tmp_path, capsys):
    plan_path = tmp_path / "plan.yaml"
    save_plan(_plan(reference="previous_default"), plan_path)
    out = tmp_path / "report.html"
    assert main(["report", str(plan_path), str(data), "--output", str(out), "--fail-on-worse"]) == 1
    # the report is written before the status says the check failed
    assert "Comparison with the reference model" in out.read_text()
    assert "fpr: " in capsys.readouterr().err
    bare = tmp_path / "bare.yaml"
    save_plan(_plan(), bare)
    assert main(["report", str(bare), str(data), "--output", str(tmp_path / "x.html"), "--fail-on-worse"]) == 2
    assert "needs a comparison" in capsys.readouterr().err
    missing = tmp_path / "missing.yaml"
    save_plan(_plan(reference="nope"), missing)
    assert main(["report", str(missing), str(data), "--output", str(tmp_path / "y.html")]) == 2
    assert "The plan's reference column 'nope' is not in the data." in capsys.readouterr().err
    assert not (tmp_path / "y.html").exists()


def test_compare_save_plan_and_plan_reference(data, tmp_path):
    saved = tmp_path / "saved.yaml"
    assert main(["compare", str(data), "--target", "defaulted", "--prediction", "predicted_default", "--reference",
                 "previous_default", "--positive", "yes", "--metric", "fpr", "--attributes", "region,education",
                 "--min-support", "0.05", "--output", str(tmp_path / "c.csv"), "--save-plan", str(saved)]) == 0
    plan = load_plan(saved)
    assert plan.compare == {"reference": "previous_default"} and plan.scan["metrics"] == ["fpr"]
    assert plan.scan["attributes"] == ["region", "education"]
    written = tmp_path / "written.yaml"
    assert main(["plan", "--target", "defaulted", "--prediction", "predicted_default", "--positive", "yes",
                 "--reference-score", "previous_score", "--reference-threshold", "0.6", "--output", str(written)]) == 0
    assert load_plan(written).compare == {"reference_score": "previous_score", "reference_threshold": 0.6}


def test_the_comparison_names_a_distinct_finding_first_and_marks_indicative(data):
    """What a meeting reads on the Compare page: the slice named first ('Worse than the reference') is
    a distinct finding whenever a worse one is (not a slice worse only because it holds a finding's
    rows), and the table says 'worse · indicative' below the minimum size as the slice table does."""
    import pandas as pd

    from divergence.present.compare_views import compare_display_frame, worst_slice

    df = pd.read_csv(data)
    c = run_comparison(_plan(reference="previous_default"), df)
    for m in c.metric_names:
        f = c.frame
        worse = f[f[f"{m}_verdict"] == "worse"]
        first = worst_slice(c, m)
        if worse[f"{m}_finding"].astype(bool).any():
            assert bool(first[f"{m}_finding"].iloc[0]), m
        shown = compare_display_frame(c, worse, m)
        expected = ["worse" if ok else "worse · indicative" for ok in worse[f"{m}_meets_min_size"]]
        assert shown["Verdict"].tolist() == expected
    assert any("indicative" in v for m in c.metric_names
               for v in compare_display_frame(c, c.frame, m)["Verdict"])  # the case is exercised
