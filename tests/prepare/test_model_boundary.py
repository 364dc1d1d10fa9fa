"""Issue 47 N5-N7: a fitted model that misbehaves is refused at the boundary (every attribute read and
every call into it) with one DivergenceInputError naming the model and what went wrong, never a
traceback: an exception whose ``__str__`` raises, ``predict`` returning None, a generator or one
number, ``classes_`` or ``feature_names_in_`` that raise or are no list. In the dashboard and the
command line such an error is their one line; here it must be a DivergenceInputError."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from divergence import DivergenceInputError, compare, scan

N = 300


@pytest.fixture(scope="module")
def df():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"x": rng.choice(["a", "b", "c"], N), "z": rng.choice(["p", "q"], N),
                         "y": rng.integers(0, 2, N)})


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no text either")


class Model:
    """A well-behaved classifier unless told otherwise."""

    def __init__(self, **bad):
        self.bad = bad

    def __getattr__(self, attr):
        if attr in ("classes_", "feature_names_in_") and attr in self.bad:
            raise self.bad[attr]
        raise AttributeError(attr)

    def predict(self, X):
        if "predict" in self.bad:
            return self.bad["predict"](X)
        return (X["x"] == "a").astype(int).to_numpy()

    def predict_proba(self, X):
        p = (X["x"] == "a").astype(float).to_numpy() * 0.8 + 0.1
        return np.column_stack([1 - p, p])


def _raise_unprintable(X):
    raise Unprintable()


@pytest.mark.parametrize("model, threshold, message", [
    (Model(predict=_raise_unprintable), None, r"^The model \(Model\) failed in predict: Unprintable$"),
    (Model(predict=lambda X: None), None, r"^The model \(Model\)'s predict returned NoneType, not one value per row"),
    (Model(predict=lambda X: (v for v in range(len(X)))), None,
     r"^The model \(Model\)'s predict returned generator, not one value per row"),
    (Model(predict=lambda X: 1), None, r"^The model \(Model\)'s predict returned int, not one value per row"),
    (Model(classes_=Unprintable()), None, r"^The model \(Model\) failed when its classes_ was read: Unprintable$"),
    (Model(classes_=ValueError("no classes\nsecond line")), 0.5,
     r"^The model \(Model\) failed when its classes_ was read: ValueError: 'no classes'$"),
])
def test_a_misbehaving_model_is_one_message(df, model, threshold, message):
    with pytest.raises(DivergenceInputError, match=message) as caught:
        scan(df, target="y", model=model, features=["x", "z"], positive=1, threshold=threshold)
    assert "\n" not in str(caught.value)


def test_feature_names_that_raise_are_one_message(df):
    with pytest.raises(DivergenceInputError, match=r"^The model \(Model\) failed when its feature_names_in_ was "
                                                   r"read: KeyError: \"'boom'\"$"):
        scan(df, target="y", model=Model(feature_names_in_=KeyError("boom")), positive=1)


class Odd(Model):
    """``classes_`` and ``feature_names_in_`` that are no list."""

    classes_ = 7
    feature_names_in_ = 3.5


def test_labels_that_are_no_list_are_one_message(df):
    with pytest.raises(DivergenceInputError, match=r"^The model \(Odd\)'s feature_names_in_ is not a list \(float\)"):
        scan(df, target="y", model=Odd(), positive=1)
    with pytest.raises(DivergenceInputError, match=r"^The model \(Odd\)'s classes_ is not a list \(int\)"):
        scan(df, target="y", model=Odd(), features=["x"], positive=1)


def test_a_reference_model_is_held_to_the_same_boundary(df):
    with pytest.raises(DivergenceInputError, match=r"^The reference model \(Model\)'s predict returned NoneType"):
        compare(df, target="y", model=Model(), reference=Model(predict=lambda X: None), features=["x", "z"],
                positive=1)


def test_a_well_behaved_model_still_scans(df):
    table = scan(df, target="y", model=Model(), features=["x", "z"], positive=1)
    assert table.params["model"]["method"] == "predict" and len(table) > 1
