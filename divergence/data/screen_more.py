"""The attribute screen's last rules, for every way in (issue 44), and the note saying which screen ran.

After the rules of :mod:`divergence.data.column_rules`: a rival model's score (for a fitted model, whose
features are known: a score column's inputs are not, and an input it leans on looks like a rival) and the
scores on the scale of another model's score (:mod:`divergence.data.rival_rules`), for an outcome alone the columns read after it and its sibling
outcomes (:mod:`divergence.data.outcome_alone`), then every column that follows one left out (a copy, a
function of it). A fitted model's outputs are computed first (:mod:`divergence.prepare.model_outputs`) and
screened here as a score or a prediction column is.
"""
from __future__ import annotations

import pandas as pd

from .column_rules import Found
from .outcome_alone import outcome_rules
from .rival_rules import followers, on_their_scale, rival_scores
from .screen_sample import Sample

__all__ = ["later_rules", "which_screen", "FOLLOWED"]

#: the kinds of column whose copies and functions are left out with them
FOLLOWED = ("leakage", "another model", "after the outcome")


def later_rules(df: pd.DataFrame, candidates: list[str], left: dict[str, str], *, models: dict[str, str],
                target=None, prediction=None, score=None, threshold=None, fitted: bool = False,
                deadline: float | None = None, sample: Sample | None = None) -> dict[str, Found]:
    """The candidates the last rules leave out (see the module); ``left``: the columns already left out by
    a measured rule and their kinds; ``models``: those of them that are another model's output ("score",
    "labels", "prediction"); ``fitted``: the output is a fitted model's, whose features are known (and not
    among the candidates), so a rival model's score can be told from an input the model leans on. ``sample``:
    the table's columns read once for every rule of the screen (:class:`~.column_rules.Sample`)."""
    out: dict[str, Found] = {}
    rest = list(candidates)

    def take(found: dict[str, Found]) -> None:
        out.update(found)
        rest[:] = [c for c in rest if c not in found]

    if (prediction is not None or score is not None) and fitted:
        take(rival_scores(df, rest, target=target, prediction=prediction, score=score, threshold=threshold,
                          deadline=deadline))
    scores = [c for c, o in models.items() if o == "score"] + [c for c, f in out.items() if f.output == "score"]
    if scores:
        take(on_their_scale(df, rest, scores, sample))
    if target is not None and prediction is None and score is None:
        take(outcome_rules(df, rest, target, deadline=deadline, sample=sample))
    sources = {c: k for c, k in {**left, **{c: f.kind for c, f in out.items()}}.items() if k in FOLLOWED}
    take(followers(df, rest, sources, deadline=deadline, full=None if sample is None else sample.full))
    return out


def which_screen(df: pd.DataFrame, *, target=None, prediction=None, score=None, threshold=None) -> str:
    """One sentence: which screen ran and why (the same words in the notes of every surface)."""
    if prediction is not None or score is not None:
        if prediction is not None:
            model = f"the prediction '{prediction}'"
        elif threshold is not None:
            model = f"the score '{score}' (cut at {threshold:g})"
        else:
            model = f"the score '{score}'"
        against = f"{model} and the target '{target}'" if target is not None else model
        return (f"Attribute screen measured against {against}: left out are copies and functions of them, another "
                "model's outputs, columns read after the outcome, and copies of any column left out.")
    if target is not None:
        return (f"Attribute screen of the outcome '{target}' alone (no model to measure columns against): left out "
                "are copies and functions of it, a column it is read from far better than from any other "
                "attribute, sibling outcomes (outcomes of the same rows), and copies of any column left out.")
    return ("Attribute screen without a single outcome column to measure columns against: left out are only "
            "columns no analyst slices by (identifiers, names, dates, free text, constants) and near copies.")
