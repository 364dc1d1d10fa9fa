"""A fitted model as input: its outputs computed once, in batches, and scanned as columns.

``scan(df, target=..., model=estimator, features=[...])`` and ``compare(df, target=...,
model=candidate, reference=other_model)`` take any scikit-learn-style estimator or pipeline:

- ``predict`` for a classifier's labels (``prediction``) or a regressor's values;
- with ``threshold=``, a classifier's score (``score``): ``predict_proba``'s column of the positive
  class, else ``decision_function`` (oriented so that higher means the positive class);
- with ``query=`` (a ranking), ``predict``'s scores order each query's rows (``rank_by``).

The outputs become a column of a copy of the table (``model_prediction``, ``model_score``; for a
comparison's reference ``reference_prediction``, ``reference_score``) and the scan goes on as if
that column had been given. **Default attributes**: every column that is not a role, less the
model's features of a numeric type (it read them only as numbers; name them in ``attributes=`` to
slice by them); its categorical, text and boolean features stay. The table records which model
produced the outputs (``params["model"]``: class, a hash of ``get_params()``, the method, the
features) and a note says so. Nothing here loads a model from a file (a pickle runs code): the
command line and the dashboard take outputs as columns only.
"""
from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..budget import ProgressCallback, progress_report
from ..data.columns import MODEL_FEATURES
from ..errors import DivergenceInputError, shown

__all__ = ["ModelRun", "apply_models", "is_model", "BATCH_ROWS"]

#: rows given to the model at a time (memory stays bounded; progress is told after each batch)
BATCH_ROWS = 100_000
#: the keywords a model call adds to those of the settings
MODEL_KEYWORDS = ("model", "candidate", "features")


def is_model(value: object) -> bool:
    """True for an object with ``predict``, ``predict_proba`` or ``decision_function`` (not a column name)."""
    return not isinstance(value, (str, bytes)) and any(
        callable(_method(value, m)) for m in ("predict", "predict_proba", "decision_function"))


def _method(value: object, name: str):
    """``getattr(value, name, None)``, None when reading it raises (a test of what an object is)."""
    try:
        return getattr(value, name, None)
    except Exception:  # noqa: BLE001 - the object's own error: it has no usable method of that name
        return None


# ----------------------------------------------------------------------------- the boundary with the user's model:
# every attribute read and every call into it passes here, so whatever it raises or returns is one line

def _reason(exc: BaseException) -> str:
    """An exception of the user's model as ``Kind: 'its first line'`` (just ``Kind`` when its text is
    empty, or when reading the text raises too)."""
    kind = type(exc).__name__
    try:
        text = str(exc).strip()
    except Exception:  # noqa: BLE001 - an exception whose __str__ raises is named by its type
        text = ""
    return f"{kind}: {shown(text.splitlines()[0], 300)}" if text else kind


def _attribute(est, attr: str, who: str, name: str):
    """``getattr(est, attr, None)``; a model whose attribute raises is refused in one line."""
    try:
        return getattr(est, attr, None)
    except Exception as exc:  # noqa: BLE001 - the model's own error, named in one line
        raise DivergenceInputError(f"{who} ({name}) failed when its {attr} was read: {_reason(exc)}") from None


def _labels(values, attr: str, who: str, name: str) -> list:
    """A model's list-like attribute (``classes_``, ``feature_names_in_``) as a list, in one line when
    it is no list (a number, an object whose iteration raises)."""
    try:
        return list(values)
    except Exception as exc:  # noqa: BLE001 - the model's own error, named in one line
        raise DivergenceInputError(f"{who} ({name})'s {attr} is not a list ({type(values).__name__}): "
                                   f"{_reason(exc)}") from None


def _as_array(out, method: str, rows: int, who: str, name: str) -> np.ndarray:
    """One batch of a model's outputs as an array: None, a generator or a single value is refused in
    one line (one value per row is expected)."""
    if out is None or not hasattr(out, "__len__"):
        raise DivergenceInputError(f"{who} ({name})'s {method} returned {type(out).__name__}, not one value per row "
                                   f"(an array of {rows:,} values was expected).")
    try:
        values = np.asarray(out)
    except Exception as exc:  # noqa: BLE001 - the model's own object, named in one line
        raise DivergenceInputError(f"{who} ({name})'s {method} returned {type(out).__name__}, which is no array: "
                                   f"{_reason(exc)}") from None
    if values.ndim == 0:
        raise DivergenceInputError(f"{who} ({name})'s {method} returned {type(out).__name__}, not one value per row "
                                   f"(an array of {rows:,} values was expected).")
    return values


@dataclass(frozen=True)
class ModelRun:
    """What applying the models did: the table with their outputs as columns, the keywords that
    name those columns, what to record, the notes."""

    data: pd.DataFrame
    keywords: dict
    records: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def without_data(self) -> ModelRun:
        """This run with an empty table in place of the rows (what :meth:`stamp` adds is kept): a scan
        lets its input go once the rows are prepared."""
        return ModelRun(pd.DataFrame(), self.keywords, self.records, self.notes)

    def stamp(self, table):
        """``table`` (a SliceTable or a Comparison) with the model records and notes added."""
        import dataclasses

        if not self.records:
            return table
        return dataclasses.replace(table, params={**table.params, **self.records},
                                   notes=tuple(self.notes) + tuple(table.notes))


def apply_models(data: pd.DataFrame, keywords: Mapping[str, Any], *, progress: ProgressCallback | None = None,
                 compare: bool = False) -> ModelRun:
    """Compute the outputs of the models among ``keywords`` (``model``, ``candidate``, and for a
    comparison a ``reference`` that is a model) and name them as columns; the keywords unchanged
    when there is none."""
    kw = dict(keywords)
    model = kw.pop("model", None)
    candidate = kw.pop("candidate", None)
    features = kw.pop("features", None)
    if model is not None and candidate is not None:
        raise DivergenceInputError("Give the model once: model= or candidate=, not both.")
    model = model if model is not None else candidate
    reference = kw.get("reference") if compare else None
    if model is None and not is_model(reference):
        if features is not None:
            raise DivergenceInputError("features= names the columns a model reads: give the model too (model=).")
        return ModelRun(data, kw)
    if not isinstance(data, pd.DataFrame):
        raise DivergenceInputError(f"Expected a pandas DataFrame; got {type(data).__name__}.")
    df = data.copy(deep=False)
    records: dict = {}
    notes: list[str] = []
    used_features: list[str] = []
    jobs = [("model", model)] + ([("reference", kw.pop("reference"))] if is_model(reference) else [])
    for role, est in jobs:
        if est is None:
            continue
        if role == "model":
            for given in ("prediction", "score", "rank_by"):
                if kw.get(given) is not None:
                    raise DivergenceInputError(f"Give the model or its outputs ({given}=), not both.")
        feats = _features(est, features, df)
        out = _outputs(est, df, feats, kw, role, progress)
        column = f"{'model' if role == 'model' else 'reference'}_{out.kind}"
        if column in data.columns:
            raise DivergenceInputError(f"Column '{column}' is in the data: rename it, the model's outputs take that name.")
        df[column] = out.values
        if role == "model":
            kw[{"prediction": "prediction", "score": "score", "rank": "rank_by"}[out.kind]] = column
            if out.positive is not None and kw.get("positive") is None:
                kw["positive"] = out.positive
        else:
            kw["reference" if out.kind == "prediction" else "reference_score"] = column
        records["model" if role == "model" else "reference_model"] = out.record
        notes.append(out.note)
        used_features += [f for f in feats if f not in used_features]
    df.attrs[MODEL_FEATURES] = tuple(used_features)  # the screen measures no feature against the outputs
    if kw.get("attributes") is None:
        numeric = [f for f in used_features if f in df.columns and _numeric_type(df[f])
                   and f not in _role_columns(kw)]
        if numeric:
            copies = _copies_of(df, numeric, _role_columns(kw))
            df = df.drop(columns=numeric + list(copies))
            notes.append(f"Not sliced by: the model's numeric feature{'s' if len(numeric) > 1 else ''} "
                         f"{_listed(numeric)} (it read {'them' if len(numeric) > 1 else 'it'} only as numbers; "
                         "name them in attributes= to slice by them)"
                         + "".join(f"; nor '{c}', {why}" for c, why in copies.items()) + ".")
    return ModelRun(df, kw, records, tuple(notes))


def _copies_of(df: pd.DataFrame, features: list[str], roles: set[str]) -> dict[str, str]:
    """Numeric columns that copy a numeric feature left out (a repeated header, ``priors_count.1``), each
    with its reason: left out with it, so that the feature does not return through its copy."""
    from ..data.column_rules import near_copies

    others = [c for c in df.columns if c not in features and c not in roles and _numeric_type(df[c])]
    if not others:
        return {}
    found = near_copies(df, features + others)
    return {c: f"{f.reason.replace('attribute', 'feature', 1)}" for c, f in found.items()
            if c in others and f.of in features}


@dataclass(frozen=True)
class _Output:
    values: np.ndarray
    kind: str  # "prediction", "score" or "rank"
    record: dict
    note: str
    positive: object = None


def _features(est, features, df: pd.DataFrame) -> list[str]:
    if features is None:
        name = type(est).__name__
        names = _attribute(est, "feature_names_in_", "The model", name)
        if names is None:
            raise DivergenceInputError(f"Give features=[...]: the model ({name}) does not record the "
                                       "columns it was fitted on.")
        features = [str(n) for n in _labels(names, "feature_names_in_", "The model", name)]
    elif isinstance(features, str):
        features = [features]
    features = list(features)
    if not features:
        raise DivergenceInputError("features= is empty: name the columns the model reads.")
    missing = [f for f in features if f not in df.columns]
    if missing:
        raise DivergenceInputError(f"Feature column {shown(missing[0])} is not in the data.")
    return features


def _outputs(est, df: pd.DataFrame, features: list[str], kw: dict, role: str, progress) -> _Output:
    name = type(est).__name__
    who = "The model" if role == "model" else "The reference model"
    ranking = any(kw.get(k) is not None for k in ("query", "relevance", "gamma"))  # a ranking: scores order rows
    scored = kw.get("threshold") is not None or (role == "reference" and kw.get("reference_threshold") is not None)
    classes = _attribute(est, "classes_", who, name)
    if classes is not None:
        classes = _labels(classes, "classes_", who, name)
    positive = kw.get("positive")
    chosen_positive = None
    if ranking:
        method, kind = "predict", "rank"
    elif scored:
        if classes is not None and len(classes) != 2:
            raise DivergenceInputError(f"{who} ({name}) has {len(classes)} classes: a score and a threshold need two.")
        found = ("predict_proba" if callable(_attribute(est, "predict_proba", who, name))
                 else "decision_function" if callable(_attribute(est, "decision_function", who, name)) else None)
        if found is None:
            raise DivergenceInputError(f"{who} ({name}) has neither predict_proba nor decision_function: "
                                       "give it without threshold= to scan its predicted labels.")
        method, kind = found, "score"
    else:
        if not callable(_attribute(est, "predict", who, name)):
            raise DivergenceInputError(f"{who} ({name}) has no predict method: give a fitted scikit-learn-style "
                                       "estimator, or its outputs as a column (prediction=).")
        method, kind = "predict", "prediction"
    if classes is not None and not ranking:
        labels = list(classes)
        if positive is None:
            if len(labels) == 2:
                chosen_positive = labels[1]  # scikit-learn's positive class
        elif not any(_same_label(positive, c) for c in labels):
            raise DivergenceInputError(f"{who}'s classes are {shown([_plain(c) for c in labels])}: the positive label "
                                       f"{shown(positive)} "
                                       "is not among them.")
    values = _batched(est, method, df[features], who, name, progress)
    if method == "predict_proba":
        if values.ndim != 2 or values.shape[1] != (len(classes) if classes is not None else 2):
            raise DivergenceInputError(f"{who}'s predict_proba gave shape {values.shape} for {len(df):,} rows: one "
                                       "column per class expected.")
        pos = positive if positive is not None else chosen_positive
        at = next((i for i, c in enumerate(classes) if _same_label(pos, c)), 1) if classes is not None else 1
        values = values[:, at]
    else:
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        if values.ndim != 1 or len(values) != len(df):
            raise DivergenceInputError(f"{who}'s {method} gave shape {values.shape} for {len(df):,} rows: one value "
                                       "per row expected.")
        if method == "decision_function" and classes is not None:
            pos = positive if positive is not None else chosen_positive
            if _same_label(pos, classes[0]):
                values = -values  # the decision function points at classes_[1]
    bad = np.array(pd.isna(pd.Series(values)), dtype=bool)
    if values.dtype.kind == "f":
        bad |= ~np.isfinite(values)
    if bad.any():
        first = int(np.argmax(bad))
        raise DivergenceInputError(f"{who}'s {method} gave {int(bad.sum()):,} missing or infinite values (the first "
                                   f"at row {first:,}): a scan needs a value for every row.")
    record = {"class": f"{type(est).__module__}.{name}", "params": _params_hash(est), "method": method,
              "features": list(features), "rows": int(len(df))}
    batches = -(-len(df) // BATCH_ROWS)
    note = (f"{'Outputs' if role == 'model' else 'Reference outputs'} from {name} (parameters {record['params']}): "
            f"{method} on {len(df):,} rows in {batches} batch{'es' if batches != 1 else ''}, from "
            f"{len(features)} feature{'s' if len(features) != 1 else ''}"
            + (f"; the positive class is {shown(_plain(chosen_positive))}, scikit-learn's second" if chosen_positive is not None
               and positive is None and not ranking else "") + ".")
    return _Output(values, kind, record, note, _plain(chosen_positive) if not ranking else None)


def _batched(est, method: str, X: pd.DataFrame, who: str, name: str, progress) -> np.ndarray:
    fn = _attribute(est, method, who, name)
    parts = []
    n = len(X)
    for start in range(0, n, BATCH_ROWS):
        try:
            out = fn(X.iloc[start:start + BATCH_ROWS])
        except DivergenceInputError:
            raise
        except Exception as exc:  # noqa: BLE001 - the estimator's own error, named in one line
            if type(exc).__name__ == "NotFittedError":
                raise DivergenceInputError(f"{who} ({name}) is not fitted: fit it before scanning.") from None
            raise DivergenceInputError(f"{who} ({name}) failed in {method}: {_reason(exc)}") from None
        parts.append(_as_array(out, method, min(BATCH_ROWS, n - start), who, name))
        if progress is not None:
            progress(progress_report("predicting", None, None, min(start + BATCH_ROWS, n) / n))
    values = np.concatenate(parts, axis=0) if parts else np.empty(0)
    if values.dtype == object:
        try:
            values = values.astype(float) if all(isinstance(v, (int, float, np.number)) for v in values[:100]) else values
        except (TypeError, ValueError):
            pass
    return values


def _params_hash(est) -> str:
    """A short hash of the estimator's parameters (``get_params()``, nested ones included)."""
    try:
        params = est.get_params(deep=True)
        text = repr(sorted((str(k), repr(v)) for k, v in params.items()))
    except Exception:  # noqa: BLE001 - not scikit-learn (or parameters that cannot be read): its class only
        text = "[]"  # as for no parameters
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _plain(value):
    """A numpy scalar as the Python value it holds (a message reads 0, not np.int64(0))."""
    return value.item() if isinstance(value, np.generic) else value


def _same_label(a, b) -> bool:
    if a is None:
        return False
    try:
        return bool(a == b) or str(a) == str(b)
    except Exception:  # noqa: BLE001
        return str(a) == str(b)


def _numeric_type(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)


def _role_columns(kw: dict) -> set[str]:
    out = set()
    for k in ("target", "prediction", "score", "rank", "rank_by", "relevance", "query", "reference",
              "reference_score", "outcome"):
        v = kw.get(k)
        if isinstance(v, str):
            out.add(v)
        elif isinstance(v, (list, tuple)):
            out.update(str(x) for x in v)
    return out


def _listed(names: list[str], limit: int = 5) -> str:
    quoted = [f"'{n}'" for n in names]
    if len(quoted) <= limit + 1:
        return ", ".join(quoted)
    return f"{', '.join(quoted[:limit])} and {len(quoted) - limit} more"
