"""A fitted model as input (issue 31 point 1): scan(model=...) gives the table scan(prediction=...) gives on
the model's own outputs, for labels, a score with a threshold and a regressor; compare() takes two
models; each bad estimator is one message naming what is wrong."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import data_file

from divergence import DivergenceInputError, compare, scan

sklearn = pytest.importorskip("sklearn", reason="scikit-learn (requirements-dev.txt) fits the models")
from sklearn.compose import make_column_transformer  # noqa: E402
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OrdinalEncoder  # noqa: E402


@pytest.fixture(scope="module")
def adult():
    df = pd.read_csv(data_file("adult_discretized.csv")).drop(columns=["predicted"])
    features = [c for c in df.columns if c != "class"]
    model = make_pipeline(make_column_transformer((OrdinalEncoder(), features)),
                          HistGradientBoostingClassifier(max_iter=30, random_state=0, categorical_features="from_dtype"))
    model.fit(df[features], df["class"])
    return df, features, model


def _same(a, b, metrics):
    assert a.frame["itemset"].tolist() == b.frame["itemset"].tolist()
    for m in metrics:
        for col in (m, f"{m}_divergence", f"{m}_q", f"{m}_verdict", f"{m}_finding", f"{m}_order"):
            x, y = a.frame[col].to_numpy(), b.frame[col].to_numpy()
            assert (pd.isna(x) == pd.isna(y)).all() and (x[~pd.isna(x)] == y[~pd.isna(y)]).all(), col


def test_labels_from_the_model_give_the_table_of_its_predictions(adult):
    df, features, model = adult
    kw = dict(target="class", positive=1, metrics=["fpr", "fnr"], min_support=0.05)
    by_model = scan(df, model=model, features=features, **kw)
    given = scan(df.assign(pred=model.predict(df[features])), prediction="pred", **kw)
    _same(by_model, given, ["fpr", "fnr"])
    rec = by_model.params["model"]
    assert rec["class"].endswith("Pipeline") and rec["method"] == "predict" and rec["features"] == features
    assert len(rec["params"]) == 12 and any("Outputs from Pipeline" in n for n in by_model.notes)
    # a pipeline's feature_names_in_ is the default features
    _same(scan(df, model=model, **kw), given, ["fpr", "fnr"])


def test_a_score_with_a_threshold(adult):
    df, features, model = adult
    kw = dict(target="class", positive=1, metrics=["fpr"], min_support=0.05, threshold=0.4)
    by_model = scan(df, model=model, features=features, **kw)
    given = scan(df.assign(s=model.predict_proba(df[features])[:, 1]), score="s", **kw)
    _same(by_model, given, ["fpr"])
    assert by_model.params["model"]["method"] == "predict_proba"


def test_a_regressor_and_its_numeric_features_left_out_of_the_attributes():
    df = pd.read_csv(data_file("law_data.csv"))
    numeric = [c for c in ("LSAT", "UGPA") if c in df.columns]
    target = "ZFYA" if "ZFYA" in df.columns else df.select_dtypes("number").columns[-1]
    model = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(df[numeric], df[target])
    kw = dict(target=target, metrics=["abs_error"], min_support=0.05)
    by_model = scan(df, model=model, **kw)
    rest = [c for c in df.columns if c not in numeric + [target]]
    given = scan(df[rest + [target]].assign(p=model.predict(df[numeric])), prediction="p", **kw)
    _same(by_model, given, ["abs_error"])
    assert not set(numeric) & set(by_model.attributes)
    assert any("numeric features" in n and "'LSAT'" in n for n in by_model.notes)
    # named as attributes, they are sliced by
    named = scan(df, model=model, attributes=["LSAT"], **kw)
    assert named.attributes == ("LSAT",) or list(named.attributes) == ["LSAT"]


def test_compare_takes_two_models(adult):
    df, features, model = adult
    other = make_pipeline(make_column_transformer((OrdinalEncoder(), features)), LogisticRegression(max_iter=200))
    other.fit(df[features], df["class"])
    kw = dict(target="class", positive=1, metrics=["error"], min_support=0.05)
    by_models = compare(df, reference=other, candidate=model, features=features, **kw)
    given = compare(df.assign(a=other.predict(df[features]), b=model.predict(df[features])),
                    prediction="b", reference="a", **kw)
    assert by_models.frame["itemset"].tolist() == given.frame["itemset"].tolist()
    assert np.allclose(by_models.frame["error_change"], given.frame["error_change"], equal_nan=True)
    assert by_models.params["model"]["class"].endswith("Pipeline")
    assert by_models.params["reference_model"]["params"] != by_models.params["model"]["params"]


class _NoPredict:
    def fit(self, X, y):
        return self


class _Const:
    def __init__(self, out):
        self.out = out

    def predict(self, X):
        return self.out(len(X))


@pytest.mark.parametrize("model, message", [
    (_NoPredict(), "has no predict method"),
    (_Const(lambda n: np.zeros((n, 2))), "gave shape"),
    (_Const(lambda n: np.zeros(n - 1)), "gave shape"),
    (_Const(lambda n: np.where(np.arange(n) == 3, np.nan, 0.0)), "missing or infinite values (the first at row 3)"),
    (LogisticRegression(), "is not fitted"),
])
def test_bad_estimators_are_one_message(model, message):
    df = pd.DataFrame({"a": list("xyz") * 20, "x": np.arange(60.0), "y": [0, 1] * 30})
    with pytest.raises(DivergenceInputError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        scan(df, target="y", positive=1, model=model, features=["x"], metrics=["fpr"])
    assert "\n" not in str(e.value)


def test_the_positive_label_must_be_a_class_and_features_must_exist():
    df = pd.DataFrame({"a": list("xyz") * 20, "x": np.arange(60.0), "y": [0, 1] * 30})
    model = LogisticRegression().fit(df[["x"]], df["y"])
    with pytest.raises(DivergenceInputError, match=r"classes are \[0, 1\]: the positive label 'yes' is not among them"):
        scan(df, target="y", positive="yes", model=model, features=["x"], metrics=["fpr"])
    with pytest.raises(DivergenceInputError, match="Feature column 'nope' is not in the data"):
        scan(df, target="y", positive=1, model=model, features=["nope"], metrics=["fpr"])
    with pytest.raises(DivergenceInputError, match="not both"):
        scan(df.assign(p=0), target="y", positive=1, model=model, prediction="p", metrics=["fpr"])
    with pytest.raises(DivergenceInputError, match="does not record the columns"):
        scan(df, target="y", positive=1, model=_Const(lambda n: np.zeros(n)), metrics=["fpr"])
    three = LogisticRegression().fit(df[["x"]], np.arange(60) % 3)
    with pytest.raises(DivergenceInputError, match="3 classes: a score and a threshold need two"):
        scan(df, target="y", positive=1, model=three, features=["x"], threshold=0.5, metrics=["fpr"])


def test_a_rankers_scores_order_the_rows():
    from divergence.data.datasets import load_demo

    df = load_demo().drop(columns=["predicted_spend"])
    features = ["age", "income", "default_score"]
    ranker = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(df[features], df["spend"])
    kw = dict(gamma="dcg", attributes=["sex", "region", "education"], min_support=0.05)
    by_model = scan(df, model=ranker, features=features, **kw)
    given = scan(df.assign(r=ranker.predict(df[features])), rank_by="r", **kw)
    _same(by_model, given, ["gamma"])
    assert by_model.params["model"]["method"] == "predict"
