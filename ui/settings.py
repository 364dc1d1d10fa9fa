"""The session's settings (``ui.state``: one ``divergence.Settings`` and the form's choices around
it) as the engine's calls take them: the keyword arguments of ``divergence.scan``, ``assess`` and
``compare`` for the branch the form chose (labels or a score, a rank or a score, per row or per
query), the attributes resolved on the data, the slice plan (both ways), a new table's guessed
roles, and the choices the settings widgets offer.

The one place where the session meets the engine's calls: a page or a run asks here for the
arguments of a call, and a plan or a role guess comes back into the session through here.
"""
from __future__ import annotations

import dataclasses
import json

import pandas as pd

from divergence import DivergenceInputError
from divergence.data.columns import AttributeScreen, role_columns
from divergence.data.roles import RoleGuess, distinct_values, guess_positive
from divergence.outcome_rules import CLASSIFICATION_METRICS, DEFAULT_METRICS
from divergence.prepare.replication_rows import split_rows
from divergence.prepare.score_threshold import score_threshold
from divergence.present.columns import parse_bin_spec
from divergence.report.plan import SlicePlan, dump_plan
from divergence.settings import MAX_WORK, TIME_LIMIT, Compare, Mining, Replication, Roles, Settings, Slicing, Statistics
from ui import cache, state
from ui.state import BUILT_IN, KC, K


def default_metrics(task: str) -> list[str]:
    """The metrics a task starts with, the engine's (none for ranking and a numeric outcome: they
    have one each)."""
    return list(DEFAULT_METRICS.get(task, ()))


# ----------------------------------------------------------------------------- column roles


def target_classes() -> list | None:
    """The classification target's classes when it has more than two (at most 50): its metrics are then
    measured over the classes (error, accuracy, one class against the rest) and need no positive label."""
    df, column = state.get(K.FRAME), state.get(K.TARGET)
    if state.get(K.TASK) != "classification" or df is None or column not in df.columns:
        return None
    values = distinct_values(df[column])
    return values if values is not None and len(values) > 2 else None


def classification_metric_options() -> list[str]:
    """The metrics the Outcome page offers: a binary classifier's, or for a target of more than two
    classes error, accuracy and each class's recall, precision, FPR and FNR."""
    from divergence.prepare.outcomes import class_metric_names

    classes = target_classes()
    return list(CLASSIFICATION_METRICS) if classes is None else class_metric_names(classes)


def fit_metrics_to_target() -> None:
    """Keep the chosen classification metrics the target allows (a target of more than two classes
    takes error, accuracy and one class against the rest; a binary one the others): those it does not
    are dropped, and when none is left the target's first (error, or the task's defaults)."""
    if state.get(K.TASK) != "classification":
        return
    options = classification_metric_options()
    chosen = list(state.get(K.METRICS) or [])
    kept = [m for m in chosen if m in options]
    if kept != chosen or not kept:
        state.update(**{K.METRICS: kept or (["error"] if target_classes() else default_metrics("classification"))})


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
            if get(K.THRESHOLD) is None and not score_in_unit(state.get(K.FRAME), get(K.SCORE)):
                out.append("the threshold")
        elif get(K.PREDICTION) is None:
            out.append("the prediction column")
        if task == "classification" and get(K.POSITIVE) in (None, "") and target_classes() is None:
            out.append("the positive label")
    elif task == "ranking":
        if get(K.RANK if get(K.RANK_KIND) == "rank" else K.RANK_BY) is None:
            out.append("the rank column" if get(K.RANK_KIND) == "rank" else "the score to rank by")
        if get(K.RANK_LEVEL) == "query":
            out += [w for w, k in (("the query column", K.QUERY), ("the relevance column", K.RELEVANCE))
                    if get(k) is None]
    elif not get(K.OUTCOME):
        out.append("the outcome column(s)")
    return out


def score_in_unit(df: pd.DataFrame | None, column: str | None) -> bool:
    """Whether the engine cuts the score at 0.5 without a threshold (every value within [0, 1])."""
    if df is None or column is None or column not in df.columns:
        return False
    try:
        score_threshold(df, column, None)
    except DivergenceInputError:
        return False
    return True


def and_list(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c' (the roles still to choose, in a sentence)."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def positive_guess(df: pd.DataFrame, column: str | None) -> object:
    """The engine's guess of a target column's positive label (None without a column)."""
    if column is None or column not in df.columns:
        return None
    return guess_positive(df[column])


def role_fields() -> tuple[str, ...]:
    """The fields of the session's roles that the form's branch measures with (the task; labels or a
    score; a rank or a score; per row or per query), in the order the engine's calls list them."""
    get = state.get
    task = get(K.TASK)
    if task == "classification":
        return ("target", "positive", "metrics") + (("score", "threshold") if get(K.PRED_KIND) == "score"
                                                    else ("prediction",))
    if task == "regression":
        return ("target", "prediction", "regression", "metrics")
    if task == "ranking":
        rank = ("rank",) if get(K.RANK_KIND) == "rank" else ("rank_by", "ascending")
        if get(K.RANK_LEVEL) == "query":  # quality per query: NDCG@k, MRR, precision@k
            return ("query", "relevance", "metrics") + rank
        return rank + ("gamma",)
    return ("outcome",)


def run_roles() -> Roles:
    """The roles a run measures with: the session's, of the branch the form chose (a target of more
    than two classes has no positive label; a regression says so; a per-query ranking measures its
    query metrics)."""
    roles = state.session_settings().roles
    task = state.get(K.TASK)
    values = {f: getattr(roles, f) for f in role_fields()}
    if task == "classification" and target_classes():
        values["positive"] = None
    elif task == "regression":
        values["regression"] = True
    elif task == "ranking" and state.get(K.RANK_LEVEL) == "query":
        values["metrics"] = list(state.get(K.QUERY_METRICS) or [])
    return Roles(**values)


def role_keywords() -> dict:
    """The run's roles as the keywords of ``divergence.build_outcomes`` (those of the form's branch)."""
    roles = run_roles()
    return {f: getattr(roles, f) for f in role_fields()}


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
    cols = role_columns(**{k: v for k, v in role_keywords().items() if k in
                           ("target", "prediction", "score", "outcome", "rank", "rank_by", "query", "relevance")})
    if state.get(K.REPLICATION) == "split" and state.get(K.SPLIT_COLUMN):
        cols.append(state.get(K.SPLIT_COLUMN))
    cols += [c for c in reference_columns() if c not in cols]  # a reference model (Compare models)
    return cols


def attribute_screen(df: pd.DataFrame) -> AttributeScreen:
    """The engine's default attributes for the roles chosen, and the columns left out with why
    (leakage is checked against the target, the prediction and the score)."""
    roles = role_keywords()
    outcome = list(roles.get("outcome") or [])
    # as the engine screens (Roles.screen_keywords): an outcome alone is screened as a target, a score to
    # rank by as a score, and a score without a threshold at the one the scan will use
    r = dict(used=used_columns(), target=roles.get("target") if roles.get("target") is not None
             else (outcome[0] if len(outcome) == 1 else None), prediction=roles.get("prediction"),
             score=roles.get("score") if roles.get("score") is not None else (roles.get("rank_by") or roles.get("rank")))
    if roles.get("score") is not None:
        threshold = roles.get("threshold")
        if threshold is None and score_in_unit(df, roles["score"]):
            threshold = score_threshold(df, roles["score"], None)[0]
        if threshold is not None:
            r["threshold"] = threshold
    return cache.screen(state.get(K.DATA_KEY), json.dumps(r, sort_keys=True, default=str), df)


def other_models(df: pd.DataFrame) -> dict[str, str]:
    """Columns the attribute screen found holding another model's output (column -> ``labels``,
    ``score`` or ``prediction``), for the comparison's reference."""
    if df is None or state.get(K.TASK) not in ("classification", "regression"):
        return {}
    try:
        return dict(attribute_screen(df).models)
    except DivergenceInputError:
        return {}


def offered_reference(df: pd.DataFrame) -> dict | None:
    """The comparison's reference settings from another model's output in the table, or None: its
    labels (classification), its score with the model's threshold, or its predictions (regression)."""
    models = other_models(df)
    if state.get(K.TASK) == "regression":
        preds = [c for c, kind in models.items() if kind == "prediction"]
        return {KC.REFERENCE: preds[0]} if preds else None
    labels = [c for c, kind in models.items() if kind == "labels"]
    if labels:
        return {KC.REF_KIND: "labels", KC.REFERENCE: labels[0]}
    scores = [c for c, kind in models.items() if kind == "score"]
    if scores:
        threshold = state.get(K.THRESHOLD)
        return {KC.REF_KIND: "score", KC.REF_SCORE: scores[0],
                KC.REF_THRESHOLD: float(threshold) if threshold is not None else 0.5}
    return None


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


def on_add_back(picked: list[str], left_out: list[str]) -> None:
    """Callback of the 'add back' choice: left-out columns the user slices by after all."""
    picked = list(picked)
    chosen = state.get(K.ATTRIBUTES)
    if chosen is None:
        state.update(**{K.ADDED: picked})
    else:
        state.update(**{K.ATTRIBUTES: [a for a in chosen if a not in left_out] + picked})


def on_period(period: str, column: str) -> None:
    """Callback of a date attribute's period: month, quarter, year, or the engine's choice."""
    bins = dict(state.get(K.BINS) or {})
    if period == "auto":
        bins.pop(column, None)
    else:
        bins[column] = period
    state.update(**{K.BINS: bins})


def on_bin_text(text: str, column: str) -> None:
    """Callback of a column's bin text: keep the text; store the spec, or the error."""
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


# ----------------------------------------------------------------------------- the run's settings
# A run sends the session's Settings (``state.session_settings()``): statistics and explain as they
# are, and of the roles, slicing, mining, replication and compare sections what the form's choices
# say (the branch of the roles, the attributes resolved on the data, the support as a share or
# rows, the replication and comparison chosen). No keyword dictionary and no second validation
# of the plan's sections: a field added to a section reaches the run with nothing else to change.


def support_setting() -> float | int:
    """The minimum support as the scan takes it: the share, or (typed as rows) the row count; one
    row is the share 1/rows (a count is above 1)."""
    share = state.session_settings().mining.min_support
    if state.get(K.SUPPORT_MODE) == "rows":
        rows = int(state.get(K.SUPPORT_ROWS) or 1)
        return rows if rows > 1 else share
    return share


def run_slicing() -> Slicing:
    """The session's slicing with the attributes resolved on the data (the engine's default plus
    the columns added back, or those chosen; for a per-query ranking only those constant within a
    query; a local path's default screened by the engine on every row) and the bins of those."""
    slicing = state.session_settings().slicing
    df = state.get(K.FRAME)
    attrs: list[str] | None = attribute_choice(df)[0]
    bins = {c: v for c, v in slicing.bins.items() if c in attrs}
    query = state.session_settings().roles.query
    if state.get(K.TASK) == "ranking" and state.get(K.RANK_LEVEL) == "query" and query and df is not None \
            and query in df.columns:  # a query-level slice is a set of queries
        from divergence.prepare.queries import varying_within

        attrs = [a for a in attrs if a not in set(varying_within(df, query, attrs))]
    if state.is_large() and state.get(K.ATTRIBUTES) is None and not state.get(K.ADDED):
        attrs = None
    return dataclasses.replace(slicing, attributes=None if attrs is None else tuple(attrs), bins=bins)


def run_mining() -> Mining:
    """The session's mining, at the support in the unit the form chose."""
    return dataclasses.replace(state.session_settings().mining, min_support=support_setting())  # validated again


def run_replication() -> Replication:
    """Where the slices are confirmed, as the Data page chose: a split column's values, the second
    file (its rows travel in the replication), a held-out share with its seed, or nowhere."""
    get = state.get
    kind = get(K.REPLICATION)
    if kind == "split":
        return Replication(kind="split", column=get(K.SPLIT_COLUMN), confirm_values=list(get(K.SPLIT_VALUES)))
    if kind == "file":
        return Replication(kind="file", name=get(K.REPLICATE_NAME), rows=get(K.REPLICATE_FRAME))
    if kind == "holdout":
        return Replication(kind="holdout", share=get(K.HOLDOUT), seed=get(K.HOLDOUT_SEED))
    return Replication()


def split_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The split settings applied to the data in use: (the rows mined, the rows that confirm);
    raises DivergenceInputError for a split the data does not have."""
    return split_rows(state.get(K.FRAME), state.get(K.SPLIT_COLUMN), list(state.get(K.SPLIT_VALUES)))


def _check_drafts(keys: tuple[str, ...] | None = None) -> None:
    """Refuse a run while a value the settings model refused stands (in its own words); ``keys``:
    the settings the run reads (default every one but the roles of a branch not chosen)."""
    if keys is None:
        branch = set(role_fields())
        keys = tuple(k for k, f in state.SETTING_FIELDS.items() if f in branch or state.section_of(f) != "roles")
    for key, (_, message) in state.refused().items():
        if key in keys:
            raise DivergenceInputError(message)


def run_settings() -> Settings:
    """The Settings a run sends: the session's, as the form's choices read it (see above);
    DivergenceInputError names the setting at fault (a value the model refused as typed too)."""
    _check_drafts()
    session = state.session_settings()
    return Settings(roles=run_roles(), slicing=run_slicing(), mining=run_mining(), statistics=session.statistics,
                    replication=run_replication(), explain=session.explain, compare=run_compare())


def current_plan(run: Settings | None = None) -> SlicePlan:
    """The run's settings (default :func:`run_settings`) as a slice plan (what the Export page
    saves and a later visit loads)."""
    data = {"source": BUILT_IN} if state.get(K.DATA_NAME) == BUILT_IN else {"file": state.get(K.DATA_NAME)}
    data["rows"] = state.n_rows()
    return SlicePlan.from_settings(run_settings() if run is None else run, data=data, kind=state.get(K.PLAN_KIND))


def apply_plan(plan: SlicePlan) -> None:
    """Set every setting from a plan's settings (on the data loaded now; columns it lacks are
    reported). The built-in data's previous models, for a plan comparing with them, come from
    ``ui.data.on_compare_toggle``."""
    cfg = plan.settings
    r, mi, rep, cmp = cfg.roles, cfg.mining, cfg.replication, cfg.compare
    model = Settings()
    upd: dict = state.role_defaults()
    # every field the session holds, from the plan: the mining, statistics and explain sections as they
    # are, a role or slicing field where the plan sets it (else the value the dashboard opens on)
    for key, name in state.SETTING_FIELDS.items():
        sec = state.section_of(name)
        value = getattr(getattr(cfg, sec), name)
        if sec not in ("roles", "slicing") or value != getattr(getattr(model, sec), name):
            upd[key] = value
    task = r.task
    if task == "ranking":
        upd.update({K.TASK: "ranking", K.RANK_KIND: "rank" if r.rank else "score",
                    K.RANK_LEVEL: "query" if r.query else "row", K.METRICS: state.field_default(K.METRICS)})
        if r.query:
            upd[K.QUERY_METRICS] = list(r.metrics) or ["ndcg@10", "mrr"]
    elif task == "outcome":
        upd.update({K.TASK: "outcome", K.METRICS: state.field_default(K.METRICS)})
    else:
        upd.update({K.TASK: task, K.PRED_KIND: "score" if r.score and not r.prediction else "labels",
                    K.METRICS: list(r.metrics)})
    # the support in the unit the plan gives it (a row count: the share box keeps its value); the
    # widgets show a number for the budget (no limit: the default's)
    upd.update({**({K.SUPPORT_MODE: "rows", K.SUPPORT_ROWS: int(mi.min_support),
                    K.MIN_SUPPORT: state.get(K.MIN_SUPPORT)} if mi.min_support > 1 else {K.SUPPORT_MODE: "share"}),
                K.TIME_LIMIT: mi.time_limit or TIME_LIMIT, K.MAX_WORK: mi.max_work or MAX_WORK,
                K.BIN_TEXTS: {}, K.BIN_ERRORS: {}, K.PLAN_KIND: plan.kind})
    upd[K.REPLICATION] = rep.kind
    if rep.kind == "split":
        upd.update({K.SPLIT_COLUMN: rep.column, K.SPLIT_VALUES: list(rep.confirm_values or [])})
    elif rep.kind == "holdout":
        upd.update({K.HOLDOUT: rep.share, K.HOLDOUT_SEED: rep.seed})
    if cmp.enabled:  # a comparison with a reference model
        upd.update({KC.ON: True, KC.REF_KIND: "score" if cmp.reference_score else "labels",
                    KC.REFERENCE: cmp.reference, KC.REF_SCORE: cmp.reference_score,
                    KC.REF_THRESHOLD: cmp.reference_threshold if cmp.reference_threshold is not None else 0.5})
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
    from divergence.comparison.compare import COMPARE_CLASSIFICATION_METRICS, COMPARE_REGRESSION_METRICS

    regression = state.get(K.TASK) == "regression"
    allowed = COMPARE_REGRESSION_METRICS if regression else COMPARE_CLASSIFICATION_METRICS
    if not regression and state.get(KC.REF_KIND) == "score" and state.get(K.PRED_KIND) == "score":
        pass  # Brier is comparable with two scores
    else:
        allowed = tuple(m for m in allowed if m != "brier")
    chosen = [m for m in (state.get(K.METRICS) or []) if m in allowed]
    return chosen or (["abs_error"] if regression else ["error", "fpr", "fnr"])


def run_compare() -> Compare:
    """The compare section as the Data page chose it (none when no comparison is set up)."""
    if not comparing():
        return Compare()
    if _reference_is_score():
        threshold = state.get(KC.REF_THRESHOLD)
        return Compare(reference_score=state.get(KC.REF_SCORE),
                       reference_threshold=None if threshold is None else float(threshold))
    return Compare(reference=state.get(KC.REFERENCE))


def compare_settings() -> Settings:
    """The comparison's settings, validated: the run's roles and slices, the compare section
    (the reference, the metrics a comparison measures) and the statistics a comparison uses
    (so a change to another statistic does not make the comparison stale)."""
    compare = run_compare()
    if not compare.enabled:
        raise DivergenceInputError("Choose the reference model's column (Data page, Compare models).")
    branch = set(role_fields())
    _check_drafts(tuple(k for k, f in state.SETTING_FIELDS.items() if f in branch or f in ("delta", "confidence", "correction")
                        or state.section_of(f) in ("slicing", "mining")))
    stats = state.session_settings().statistics
    return Settings(roles=run_roles(), slicing=run_slicing(), mining=run_mining(),
                    compare=dataclasses.replace(compare, metrics=tuple(compare_metrics())),
                    statistics=Statistics(delta=stats.delta, confidence=stats.confidence, correction=stats.correction))


def compare_key(compare: Settings | None = None) -> str:
    """The comparison's settings (default :func:`compare_settings`) as a key: the JSON of their
    sections (what the cache keys ``divergence.compare`` on)."""
    return json.dumps((compare_settings() if compare is None else compare).sections(), sort_keys=True, default=str)
