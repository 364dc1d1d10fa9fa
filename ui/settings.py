"""The settings in session state, translated to and from the engine: the keyword arguments of
``divergence.scan``, ``assess`` and ``compare``, the slice plan (both ways), a new table's
guessed roles, and the choices the settings widgets offer.

The one place where session-state keys meet engine keywords: a page or a run asks here for the
arguments of a call, and a plan or a role guess comes back into state through here.
"""
from __future__ import annotations

import dataclasses
import json

import pandas as pd
import streamlit as st

from divergence import DivergenceInputError
from divergence.columns import AttributeScreen
from divergence.mining import MAX_SLICES, TIME_LIMIT
from divergence.plan import SlicePlan, dump_plan
from divergence.roles import RoleGuess, guess_positive
from divergence.scan import role_columns
from divergence.views import parse_bin_spec, split_rows
from ui import cache, state
from ui.state import BUILT_IN, KC, ROLE_DEFAULTS, K

TASKS = {"classification": "Classification", "regression": "Regression", "ranking": "Ranking",
         "outcome": "A numeric outcome"}
CORRECTIONS = {"bh": "Benjamini–Hochberg (q-values)", "bonferroni": "Bonferroni", "holm": "Holm"}
CORRECTION_SHORT = {"bh": "BH-adjusted", "bonferroni": "Bonferroni-adjusted", "holm": "Holm-adjusted"}
#: what a model's output is (classification): predicted labels, or a score cut at a threshold
OUTPUT_KINDS = {"labels": "Predicted labels", "score": "A score and a threshold"}
REPLICATION_KINDS = {"none": "None", "split": "A split or period column", "file": "A second file",
                     "holdout": "A held-out share of the rows"}
#: metrics offered per task
CLASSIFICATION_METRICS = ("fpr", "fnr", "error", "accuracy", "tpr", "tnr", "precision", "fdr", "npv",
                          "for", "positive_rate", "base_rate", "brier")
REGRESSION_METRICS = ("abs_error", "squared_error", "signed_error")


def default_metrics(task: str) -> list[str]:
    """The metrics a task starts with (none for ranking and a numeric outcome: they have one each)."""
    return {"classification": ["fpr", "fnr"], "regression": ["abs_error"]}.get(task, [])


# ----------------------------------------------------------------------------- column roles


def apply_role_guess(guess: RoleGuess) -> None:
    """Set the column roles from a guess; a role the guess left empty stays empty (the Data page asks)."""
    labels = guess.prediction is not None or (guess.score is None and "score" not in guess.candidates)
    state.update(**{
        K.TASK: guess.task, K.TARGET: guess.target, K.PREDICTION: guess.prediction, K.SCORE: guess.score,
        K.PRED_KIND: "labels" if labels else "score", K.THRESHOLD: guess.threshold, K.POSITIVE: guess.positive,
        K.OUTCOME: [guess.outcome] if guess.outcome else [],
        K.METRICS: default_metrics(guess.task),
        K.ROLE_NOTES: guess.notes(),
        K.ROLE_GUESS: {K.TASK: guess.task, K.TARGET: guess.target, K.PREDICTION: guess.prediction, K.SCORE: guess.score},
    })


def role_notes() -> list[str]:
    """How the roles were guessed, while that still describes the page: a role is missing, or the
    roles are the ones guessed (once the user has chosen others, the guess is history)."""
    guessed = state.get(K.ROLE_GUESS) or {}
    if missing_roles() or all(state.get(k) == v for k, v in guessed.items()):
        return list(state.get(K.ROLE_NOTES) or [])
    return []


def missing_roles() -> list[str]:
    """The roles still to choose for the task (a new file's guess may leave some empty)."""
    get = state.get
    task, out = get(K.TASK), []
    if task in ("classification", "regression"):
        if get(K.TARGET) is None:
            out.append("the target")
        if task == "classification" and get(K.PRED_KIND) == "score":
            if get(K.SCORE) is None:
                out.append("the score column")
            if get(K.THRESHOLD) is None:
                out.append("the threshold")
        elif get(K.PREDICTION) is None:
            out.append("the prediction column")
        if task == "classification" and get(K.POSITIVE) in (None, ""):
            out.append("the positive label")
    elif task == "ranking":
        if get(K.RANK if get(K.RANK_KIND) == "rank" else K.RANK_BY) is None:
            out.append("the rank column" if get(K.RANK_KIND) == "rank" else "the score to rank by")
    elif not get(K.OUTCOME):
        out.append("the outcome column(s)")
    return out


def and_list(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c' (the roles still to choose, in a sentence)."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def positive_guess(df: pd.DataFrame, column: str | None) -> object:
    """The engine's guess of a target column's positive label (None without a column)."""
    if column is None or column not in df.columns:
        return None
    return guess_positive(df[column])


def role_kwargs() -> dict:
    """The column-role keyword arguments of ``divergence.scan`` from the settings."""
    get = state.get
    task = get(K.TASK)
    if task == "classification":
        kw: dict = dict(target=get(K.TARGET), positive=get(K.POSITIVE), metrics=list(get(K.METRICS)))
        if get(K.PRED_KIND) == "score":
            threshold = get(K.THRESHOLD)
            kw.update(score=get(K.SCORE), threshold=None if threshold is None else float(threshold))
        else:
            kw.update(prediction=get(K.PREDICTION))
        return kw
    if task == "regression":
        return dict(target=get(K.TARGET), prediction=get(K.PREDICTION), regression=True,
                    metrics=list(get(K.METRICS)))
    if task == "ranking":
        if get(K.RANK_KIND) == "rank":
            return dict(rank=get(K.RANK), gamma=get(K.GAMMA))
        return dict(rank_by=get(K.RANK_BY), ascending=bool(get(K.ASCENDING)), gamma=get(K.GAMMA))
    return dict(outcome=list(get(K.OUTCOME)))


def gamma_parts(gamma: str | None) -> tuple[str, float | None]:
    """The ranking's ``gamma`` keyword as the Outcome page's two widgets: 'topk:10' -> ('topk', 10.0);
    'dcg' -> ('dcg', None)."""
    kind, _, param = (gamma or "dcg").partition(":")
    try:
        return (kind if kind in ("dcg", "topk", "power") else "dcg"), (float(param) if param else None)
    except ValueError:
        return kind, None


# ----------------------------------------------------------------------------- attributes and bins


def used_columns() -> list[str]:
    """Columns taken by a role (never attributes), the split column included."""
    cols = role_columns(**{k: v for k, v in role_kwargs().items() if k in
                           ("target", "prediction", "score", "outcome", "rank", "rank_by")})
    if state.get(K.REPLICATION) == "split" and state.get(K.SPLIT_COLUMN):
        cols.append(state.get(K.SPLIT_COLUMN))
    cols += [c for c in reference_columns() if c not in cols]  # a reference model (Compare models)
    return cols


def attribute_screen(df: pd.DataFrame) -> AttributeScreen:
    """The engine's default attributes for the roles chosen, and the columns left out with why
    (leakage is checked against the target, the prediction and the score)."""
    roles = role_kwargs()
    r = dict(used=used_columns(), target=roles.get("target"), prediction=roles.get("prediction"),
             score=roles.get("score"))
    if roles.get("score") is not None and roles.get("threshold") is not None:
        r["threshold"] = roles["threshold"]
    return cache.screen(state.get(K.DATA_KEY), json.dumps(r, sort_keys=True, default=str), df)


def attribute_choice(df: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The attributes to slice by (explicit, or the engine's default plus the columns added back)
    and the engine's notes on what the default left out."""
    used = used_columns()
    chosen = state.get(K.ATTRIBUTES)
    if chosen is None:
        screen = attribute_screen(df)
        added = set(state.get(K.ADDED) or ()) & set(screen.left_out)
        return [c for c in df.columns if c in screen.attributes or c in added], list(screen.notes)
    return [a for a in chosen if a in df.columns and a not in used], []


def on_add_back(left_out: list[str]) -> None:
    """Callback of the 'add back' choice: left-out columns the user slices by after all."""
    picked = list(st.session_state["w:add_back"])
    chosen = state.get(K.ATTRIBUTES)
    if chosen is None:
        state.update(**{K.ADDED: picked})
    else:
        state.update(**{K.ATTRIBUTES: [a for a in chosen if a not in left_out] + picked})


def on_period(column: str) -> None:
    """Callback of a date attribute's period: month, quarter, year, or the engine's choice."""
    period = st.session_state[f"w:period:{column}"]
    bins = dict(state.get(K.BINS) or {})
    if period == "auto":
        bins.pop(column, None)
    else:
        bins[column] = period
    state.update(**{K.BINS: bins})


def on_bin_text(column: str) -> None:
    """Callback of a column's bin text: keep the text; store the spec, or the error."""
    text = st.session_state[f"w:bins:{column}"]
    texts = dict(state.get(K.BIN_TEXTS) or {})
    errors = dict(state.get(K.BIN_ERRORS) or {})
    bins = dict(state.get(K.BINS) or {})
    texts[column] = text
    try:
        spec = parse_bin_spec(text, column)
    except DivergenceInputError as exc:
        errors[column] = str(exc)
    else:
        errors.pop(column, None)
        if spec is None:
            bins.pop(column, None)
        else:
            bins[column] = spec
    state.update(**{K.BIN_TEXTS: texts, K.BIN_ERRORS: errors, K.BINS: bins})


def bin_text(column: str) -> str:
    """What a column's bin box shows: the text typed, else the stored spec."""
    texts = state.get(K.BIN_TEXTS) or {}
    if column in texts:
        return texts[column]
    spec = (state.get(K.BINS) or {}).get(column)
    if spec is None:
        return ""
    return str(spec) if isinstance(spec, int) else ", ".join(f"{e:g}" for e in spec)


# ----------------------------------------------------------------------------- the engine's keyword arguments


def scan_kwargs() -> dict:
    """Every keyword argument of ``divergence.scan`` from the settings."""
    get = state.get
    df = get(K.FRAME)
    attrs, _ = attribute_choice(df)
    bins = {c: v for c, v in (get(K.BINS) or {}).items() if c in attrs}
    max_length = int(get(K.MAX_LENGTH) or 0)
    if state.is_large() and get(K.ATTRIBUTES) is None and not get(K.ADDED):
        # a local path's default attributes are screened on every row by the engine, not on the preview
        attrs = None
    kw = dict(role_kwargs(), attributes=attrs, bins=bins, quantile_bins=int(get(K.QUANTILE_BINS)),
              binning=get(K.BINNING), min_support=float(get(K.MIN_SUPPORT)), max_length=max_length or None)
    if get(K.EXHAUSTIVE):  # only when asked: the default leaves the plan as it was
        kw["exhaustive"] = True
    if int(get(K.MAX_SLICES)) != MAX_SLICES:  # the budget, when it is not the engine's
        kw["max_slices"] = int(get(K.MAX_SLICES))
    if float(get(K.TIME_LIMIT)) != TIME_LIMIT:
        kw["time_limit"] = float(get(K.TIME_LIMIT))
    return kw


def statistics_kwargs() -> dict:
    """The statistics settings of the plan (keyword arguments of ``divergence.assess``)."""
    get = state.get
    kw = dict(confidence=float(get(K.CONFIDENCE)), correction=get(K.CORRECTION),
              bootstrap=int(get(K.BOOTSTRAP)), seed=0)
    if get(K.DELTA) is not None:
        kw["delta"] = float(get(K.DELTA))
    return kw


def replication_settings() -> dict:
    """The plan's replication section from the settings (empty: none)."""
    kind = state.get(K.REPLICATION)
    if kind == "split":
        return dict(kind="split", column=state.get(K.SPLIT_COLUMN), confirm_values=list(state.get(K.SPLIT_VALUES)))
    if kind == "file":
        return dict(kind="file", name=state.get(K.REPLICATE_NAME))
    if kind == "holdout":
        return dict(kind="holdout", share=float(state.get(K.HOLDOUT)))
    return {}


def split_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The split settings applied to the data in use: (the rows mined, the rows that confirm);
    raises DivergenceInputError for a split the data does not have."""
    return split_rows(state.get(K.FRAME), state.get(K.SPLIT_COLUMN), list(state.get(K.SPLIT_VALUES)))


# ----------------------------------------------------------------------------- the slice plan


def current_plan() -> SlicePlan:
    """The settings as a slice plan (what the Export page saves and a later visit loads)."""
    data = {"source": BUILT_IN} if state.get(K.DATA_NAME) == BUILT_IN else {"file": state.get(K.DATA_NAME)}
    data["rows"] = state.n_rows()
    explain = {"redundancy": float(state.get(K.REDUNDANCY))} if state.get(K.REDUNDANCY) else {}
    return SlicePlan(scan=scan_kwargs(), statistics=statistics_kwargs(), explain=explain,
                     replication=replication_settings(), data=data, kind=state.get(K.PLAN_KIND),
                     compare=compare_section_settings())


def apply_plan(plan: SlicePlan) -> None:
    """Set every setting from a plan (on the data loaded now; columns it lacks are reported).
    The built-in data's previous models, for a plan comparing with them, come from
    ``ui.data.on_compare_toggle``."""
    s = dict(plan.scan)
    upd: dict = dict(ROLE_DEFAULTS)
    if s.get("rank") is not None or s.get("rank_by") is not None:
        upd.update({K.TASK: "ranking", K.RANK_KIND: "rank" if s.get("rank") else "score",
                    K.RANK: s.get("rank"), K.RANK_BY: s.get("rank_by"),
                    K.ASCENDING: bool(s.get("ascending", False)), K.GAMMA: s.get("gamma") or "dcg"})
    elif s.get("outcome") is not None:
        out = s["outcome"]
        upd.update({K.TASK: "outcome", K.OUTCOME: [out] if isinstance(out, str) else list(out)})
    else:
        metrics = s.get("metrics") or []
        metrics = [metrics] if isinstance(metrics, str) else list(metrics)
        regression = bool(s.get("regression")) or (metrics and all(m in REGRESSION_METRICS for m in metrics))
        upd.update({K.TASK: "regression" if regression else "classification", K.TARGET: s.get("target"),
                    K.PREDICTION: s.get("prediction"), K.SCORE: s.get("score"),
                    K.PRED_KIND: "score" if s.get("score") and not s.get("prediction") else "labels",
                    K.THRESHOLD: float(s.get("threshold", 0.5)), K.POSITIVE: s.get("positive"),
                    K.METRICS: metrics})
    upd.update({K.ATTRIBUTES: s.get("attributes"), K.BINS: dict(s.get("bins") or {}), K.BIN_TEXTS: {},
                K.BIN_ERRORS: {},
                K.QUANTILE_BINS: int(s.get("quantile_bins", 3)), K.BINNING: s.get("binning", "quantile"),
                K.MIN_SUPPORT: float(s.get("min_support", 0.05)), K.MAX_LENGTH: int(s.get("max_length") or 0),
                K.EXHAUSTIVE: bool(s.get("exhaustive", False)), K.MAX_SLICES: int(s.get("max_slices") or MAX_SLICES),
                K.TIME_LIMIT: float(s.get("time_limit") or TIME_LIMIT)})
    st_ = plan.statistics
    upd.update({K.DELTA: st_.get("delta"), K.CONFIDENCE: float(st_.get("confidence", 0.95)),
                K.CORRECTION: st_.get("correction", "bh"), K.BOOTSTRAP: int(st_.get("bootstrap", 0)),
                K.REDUNDANCY: float(plan.explain.get("redundancy", 0.0)), K.PLAN_KIND: plan.kind})
    rep = plan.replication or {}
    kind = rep.get("kind", "none")
    upd[K.REPLICATION] = kind
    if kind == "split":
        upd.update({K.SPLIT_COLUMN: rep.get("column"), K.SPLIT_VALUES: list(rep.get("confirm_values") or [])})
    elif kind == "holdout":
        upd[K.HOLDOUT] = float(rep.get("share", 0.3))
    cmp = dict(getattr(plan, "compare", None) or {})  # a comparison with a reference model
    if cmp:
        upd.update({KC.ON: True, KC.REF_KIND: "score" if cmp.get("reference_score") else "labels",
                    KC.REFERENCE: cmp.get("reference"), KC.REF_SCORE: cmp.get("reference_score"),
                    KC.REF_THRESHOLD: float(cmp.get("reference_threshold", 0.5))})
    state.update(**upd)


def plan_key(plan: SlicePlan) -> str:
    """A plan's scan as a key (JSON): the comparison (Compare page) does not change the scan, it
    has its own result and key."""
    return dump_plan(dataclasses.replace(plan, compare={}), format="json")


def is_stale() -> bool:
    """Whether the settings changed since the stored result was computed."""
    res = state.result()
    if res is None:
        return True
    try:
        return res["plan"] != plan_key(current_plan()) or res["data_key"] != state.get(K.DATA_KEY)
    except DivergenceInputError:
        return True


# ----------------------------------------------------------------------------- comparing two models
# (divergence.compare: the model in the roles above against a reference model on the same rows)


def comparing() -> bool:
    """Whether a comparison is set up (classification or regression on rows in memory)."""
    return bool(state.get(KC.ON)) and state.get(K.TASK) in ("classification", "regression") and not state.is_large()


def _reference_is_score() -> bool:
    return state.get(K.TASK) == "classification" and state.get(KC.REF_KIND) == "score"


def reference_columns() -> list[str]:
    """The reference model's columns (never attributes)."""
    if not comparing():
        return []
    column = state.get(KC.REF_SCORE) if _reference_is_score() else state.get(KC.REFERENCE)
    return [column] if column else []


def compare_metrics() -> list[str]:
    """The Outcome page's metrics that a comparison measures, else the comparison's defaults."""
    from divergence.compare import COMPARE_CLASSIFICATION_METRICS, COMPARE_REGRESSION_METRICS

    regression = state.get(K.TASK) == "regression"
    allowed = COMPARE_REGRESSION_METRICS if regression else COMPARE_CLASSIFICATION_METRICS
    if not regression and state.get(KC.REF_KIND) == "score" and state.get(K.PRED_KIND) == "score":
        pass  # Brier is comparable with two scores
    else:
        allowed = tuple(m for m in allowed if m != "brier")
    chosen = [m for m in (state.get(K.METRICS) or []) if m in allowed]
    return chosen or (["abs_error"] if regression else ["error", "fpr", "fnr"])


def compare_section_settings() -> dict:
    """The plan's compare section from the settings (empty when no comparison is set up)."""
    if not comparing():
        return {}
    if _reference_is_score():
        return {"reference_score": state.get(KC.REF_SCORE), "reference_threshold": float(state.get(KC.REF_THRESHOLD))}
    return {"reference": state.get(KC.REFERENCE)}


def compare_kwargs() -> dict:
    """Every keyword argument of ``divergence.compare`` from the settings."""
    section = compare_section_settings()
    if not section or not (section.get("reference") or section.get("reference_score")):
        raise DivergenceInputError("Choose the reference model's column (Data page, Compare models).")
    kw = {k: v for k, v in scan_kwargs().items() if k != "metrics"}
    kw.update(section, metrics=compare_metrics())
    stats = statistics_kwargs()
    kw.update({k: stats[k] for k in ("delta", "confidence", "correction") if k in stats})
    return kw


def compare_key() -> str:
    """The comparison's settings as a key (JSON of ``compare_kwargs``)."""
    return json.dumps(compare_kwargs(), sort_keys=True, default=str)
