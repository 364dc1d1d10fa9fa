"""The numbers above the slice table and the finding cards: the whole dataset's value, the count of
each verdict, the distinct findings in words with their evidence, the same in the dashboard, the
report, the CLI summary and a notebook. Reads the table's columns; computes no statistic.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..table import MetricStatistics, SliceTable
from .formats import (
    FINDING_VERDICTS,
    family_sentence,
    format_count,
    format_divergence,
    format_divergence_interval,
    format_estimate,
    format_interval,
    format_number,
    format_p,
    format_percent,
    format_value,
    is_undefined,
    metric_label,
    verdict_label,
)

__all__ = ["headline", "headline_tiles", "Tile", "verdict_evidence", "findings", "findings_header", "Finding",
           "FINDING_CARDS", "ABOUT_ZERO"]

def headline(table: SliceTable, metric: str | None = None) -> dict:
    """The numbers above the slice table: whole-dataset value (and interval), slices
    tested, significant after correction, and the count of each verdict.

    Keys: ``metric``, ``label``, ``binary``, ``overall``, ``overall_low``, ``overall_high``
    (NaN without statistics), ``n_slices``, ``n_tested``, ``n_significant`` (None without
    statistics), ``verdicts`` ({verdict: count}), ``min_size`` (the assessment's entry or None),
    ``family`` ("scan": q-values corrected over every metric's slices, "metric": this metric's),
    ``n_family`` (the tests the q-values were corrected over), ``family_sentence`` (the family in
    words, :func:`divergence.present.formats.family_sentence`) and the counts of distinct findings
    (:func:`_finding_counts`: ``n_findings``, ``n_explained``, ``n_unexplained``, per verdict, and
    with replication ``n_replicated``, ``n_not_replicated``).
    """
    info = table.metric(metric)
    m, stats = info.name, table.statistics(metric)
    a = getattr(table, "assessment", None)
    low = high = float("nan")
    if hasattr(table, "overall_interval"):
        low, high = table.overall_interval(m)
    tested = a.n_tested.get(m) if a is not None else None
    if tested is None:
        assert stats.p is not None  # a mined table has its p-values (MetricStatistics)
        tested = int(pd.notna(stats.p[1:]).sum())
    significant = None
    sig = None
    if stats.q is not None:
        alpha = 1.0 - (a.confidence if a is not None else 0.95)
        sig = stats.q[1:] <= alpha
        adj_low, adj_high = stats.other.get("divergence_adj_low"), stats.other.get("divergence_adj_high")
        if adj_low is not None and adj_high is not None:  # a finding's corrected interval excludes 0 too
            sig &= (adj_low[1:] > 0) | (adj_high[1:] < 0)
        significant = int(sig.sum())
    verdicts: dict[str, int] = {}
    if stats.verdict is not None:
        verdicts = _counts(stats.verdict[1:])
    out = dict(metric=m, label=metric_label(m), binary=info.binary, description=info.description,
               overall=table.overall(m), overall_low=float(low), overall_high=float(high),
               n_slices=len(table) - 1, n_tested=int(tested), n_significant=significant,
               verdicts=verdicts, min_size=a.min_size.get(m) if a is not None else None,
               family=a.family if a is not None else None,
               n_family=int(a.family_size.get(m, tested)) if a is not None else int(tested),
               family_sentence=family_sentence(a, m) if a is not None and a.n_tested else "")
    out.update(_finding_counts(stats, sig))
    return out


def _finding_counts(stats: MetricStatistics, sig: np.ndarray | None) -> dict:
    """The headline's counts of distinct findings: ``n_findings``, ``n_explained`` (significant
    slices a finding accounts for), ``n_unexplained`` (significant, neither a finding nor
    explained), ``findings_by_verdict``, ``significant_by_verdict`` and, with replication,
    ``n_replicated`` / ``n_not_replicated`` among the significant slices and the findings."""
    out: dict = {"n_findings": None, "n_explained": None, "n_unexplained": None, "findings_by_verdict": {},
                 "significant_by_verdict": {}, "n_replicated": None, "n_not_replicated": None,
                 "findings_replicated": None, "n_not_significant": None}
    if sig is None:
        return out
    n = len(stats.itemsets) - 1
    verdict = stats.verdict[1:].astype(str) if stats.verdict is not None else np.full(n, "")
    out["significant_by_verdict"] = _counts(verdict[sig])
    assert stats.p is not None  # q-values (sig) come from p-values
    tested = pd.notna(stats.p[1:])
    out["n_not_significant"] = int((tested & ~sig).sum())
    out["not_significant_by_verdict"] = _counts(verdict[tested & ~sig])
    finding = None
    if stats.finding is not None and stats.explained_by is not None:
        finding = stats.finding[1:].astype(bool)
        explained = stats.explained_by[1:].astype(str) != ""
        out["n_findings"] = int(finding.sum())
        out["n_explained"] = int((explained & sig).sum())
        out["n_unexplained"] = int((sig & ~finding & ~explained).sum())
        out["findings_by_verdict"] = _counts(verdict[finding])
    replicated = stats.other.get("replicated")
    if replicated is not None:
        rep = replicated[1:].astype(bool)
        out["n_replicated"] = int((sig & rep).sum())
        out["n_not_replicated"] = int((sig & ~rep).sum())
        if finding is not None:
            out["findings_replicated"] = int((finding & rep).sum())
    return out


def _counts(values: np.ndarray) -> dict[str, int]:
    """{value: count} of the values but the empty and missing ones, the most frequent first (ties: the first
    seen first), as ``pd.Series(values).value_counts()`` orders them; text is counted without a Series (a
    Series of 10^4 verdicts converts them to Arrow strings first: most of the command line's headline)."""
    items = np.asarray(values).tolist()
    if not set(map(type, items)) <= {str}:
        return {str(k): int(v) for k, v in pd.Series(values).value_counts().items() if k}
    return {k: v for k, v in sorted(Counter(items).items(), key=lambda kv: -kv[1]) if k}


@dataclass(frozen=True)
class Tile:
    """One number of the headline: its label, the number as text, a caption under it and the
    text shown on hover."""

    label: str
    value: str
    caption: str = ""
    help: str = ""


def headline_tiles(table: SliceTable, metric: str | None = None, h: dict | None = None) -> list[Tile]:
    """The headline as tiles, the same in the dashboard, the report and the command line: the whole
    dataset's value, slices tested (significant plus not significant), significant after correction,
    the distinct findings and the significant slices they cover, the findings per verdict, with
    replication the significant slices that did not replicate, and the slices not significant (noise
    plus too small to tell). The counts add up: tested = significant + not significant; significant
    = covered by the findings + neither; significant = replicated + not replicated. ``h``: the
    :func:`headline` of this table and metric when the caller has it already (computed otherwise)."""
    from ..vocabulary import CORRECTION_NAMES
    from .formats import GLOSSARY, VERDICT_TEXT

    h = headline(table, metric) if h is None else h
    a = table.assessment
    b = h["binary"]
    tiles = [Tile(f"{h['label']}, whole dataset", format_value(h["overall"], b),
                  format_interval(h["overall_low"], h["overall_high"], b),
                  f"{h['description']} over every row, with its interval")]
    if h["n_significant"] is None:
        tiles.append(Tile("Slices tested", format_count(h["n_tested"]), "", "Slices with a p-value."))
        return tiles
    alpha = 1.0 - (a.confidence if a is not None else 0.95)
    correction = CORRECTION_NAMES.get(a.correction if a is not None else "bh", "")
    sig, not_sig = h["n_significant"], h["n_not_significant"]
    tiles.append(Tile("Slices tested", format_count(h["n_tested"]),
                      f"{format_count(sig)} significant + {format_count(not_sig)} not",
                      f"Slices with a p-value. q-values: {h['family_sentence']}." if h["family_sentence"]
                      else "Slices with a p-value."))
    # the tests the correction was over, per metric (every metric's with the joint family)
    over = f"over {format_count(h['n_family'])} tests" + (" of every metric" if h["family"] == "scan" and len(table.metric_names) > 1 else
                                                            f" of {h['metric']}")
    tiles.append(Tile("Significant", format_count(sig), f"after correction {over}, q ≤ {alpha:.2g}",
                      f"{GLOSSARY['q']} Here: {correction}, q ≤ {alpha:.2g}, and the corrected interval excludes 0."))
    if h["n_findings"] is not None:
        covered = h["n_findings"] + h["n_explained"]
        cap = f"cover {format_count(covered)} of the {format_count(sig)} significant"
        tip = ("A distinct finding is a significant slice that no stronger finding explains: with the findings' rows "
               "accounted for, it still diverges. A slice explained by a finding is grouped under it (a refinement "
               "no different from it, a wider slice holding its rows, a slice that only looks low or high because "
               "it lifts or lowers the whole dataset).")
        if h["n_unexplained"]:
            tip += (f" {format_count(h['n_unexplained'])} significant slices are neither: they still diverge with the "
                    "findings' rows accounted for, but not by enough to count as a different cohort after the "
                    "correction for the follow-up tests.")
        tiles.append(Tile("Distinct findings", format_count(h["n_findings"]), cap, tip))
        pairs = ([("Defects", "defect"), ("Hard cohorts", "hard cohort")] if table.metric(metric).baseline
                 else [("Above", "above"), ("Below", "below")])
        for label, verdict in pairs:
            n_f = h["findings_by_verdict"].get(verdict, 0)
            n_s = h["significant_by_verdict"].get(verdict, 0)
            tiles.append(Tile(label, format_count(n_f), f"finding{'s' if n_f != 1 else ''} · {format_count(n_s)} "
                              f"significant slice{'s' if n_s != 1 else ''}",
                              f"{VERDICT_TEXT[verdict]} Distinct findings with this verdict, and the significant "
                              "slices with it (the findings and the slices they explain)."))
    if h["n_not_replicated"] is not None:
        tiles.append(Tile("Not replicated", format_count(h["n_not_replicated"]),
                          f"of {format_count(sig)} significant; {format_count(h['n_replicated'])} replicated",
                          VERDICT_TEXT["not replicated"]
                          + f" Replication on {(a.replication if a else None) or 'other rows'}."))
    ns = h.get("not_significant_by_verdict") or {}
    small = ns.get("too small", 0)
    tiles.append(Tile("Not significant", format_count(not_sig),
                      f"{format_count(ns.get('noise', 0))} noise + {format_count(small)} too small to tell",
                      " ".join(t for t in ((h["min_size"].text, h["min_size"].power_text) if h["min_size"] else ())
                               if t)
                      or "Not significant after correction."))
    return tiles


#: the natural scale of each error metric's lift, in words (see divergence.stats.defect_tests._natural_scale)
_LIFT_SCALE = {"squared_error": "baseline − error", "abs_error": "baseline² − error²",
               "error": "−log(1 − 2·error), over the best model-free reference",
               "brier": "−log(1 − 4·Brier), over the best model-free reference",
               "log_loss": "baseline − log loss, the baseline the slice's base rate"}


def verdict_evidence(stats: MetricStatistics, index: int, confidence: float = 0.95) -> str | None:
    """The three tests behind an error metric's verdict on slice ``index``, in words with their numbers
    (Markdown): is the target harder here than across the values of the slice's attributes, is the
    model's lift short of theirs, does a reference fitted to these rows beat the model. None for
    a metric without a baseline. ``confidence``: the result's, whose complement is the bar for q."""
    m, info, other = stats.name, stats.info, stats.other
    if "harder" not in other:
        return None
    b = info.binary
    alpha = 1.0 - float(confidence)

    def sure(q, yes, no):
        return f"**{yes}** (q = {format_p(q)})" if not is_undefined(q) and float(q) <= alpha else \
            f"{no} (q = {format_p(q)})"

    binary_target = info.baseline in ("majority", "base_rate")
    base = stats.at("columns_reference", index) if binary_target else stats.at("baseline", index)
    what = ("the best reference without the model (its constant, or a constant per item of another attribute)"
            if binary_target else "the best constant guess from its own rows")
    harder, short, lift = stats.at("harder", index), stats.at("lift_shortfall", index), stats.at("lift", index)
    elsewhere = base - harder if not (is_undefined(base) or is_undefined(harder)) else float("nan")
    lift_there = lift + short if not (is_undefined(lift) or is_undefined(short)) else float("nan")
    parts = [
        f"**Is the target harder here?** {what.capitalize()} errs {format_value(base, b)} here against "
        f"{format_value(elsewhere, b)} across the values of the slice's attributes (each with its own): "
        f"{format_divergence(harder, b)} {format_interval(stats.at('harder_low', index), stats.at('harder_high', index), b)}, "
        + sure(stats.at("harder_q", index), "reliably harder", "not reliably harder") + ".",
        f"**Does the model gain less here?** Its lift over that baseline ({_LIFT_SCALE.get(m, 'on its scale')}): "
        f"{format_number(lift)} here against {format_number(lift_there)} across them, a shortfall of "
        f"{format_number(short)} [{format_number(stats.at('lift_shortfall_low', index))}, "
        f"{format_number(stats.at('lift_shortfall_high', index))}], "
        + sure(stats.at("lift_shortfall_q", index), "reliably short", "not reliably short") + ".",
    ]
    if "reference" in other and not is_undefined(stats.at("reference", index)):
        parts.append(f"**Can these rows do better?** The best reference fitted to them errs "
                     f"{format_value(stats.at('reference', index), b)} against the model's {format_value(stats.value[index], b)}: "
                     + sure(stats.at("worse_q", index), "it beats the model, by more than on the whole dataset",
                            "not reliably better than the model, beyond the whole dataset") + ".")
    else:
        parts.append("**Can these rows do better?** Not known: the references need the rows (this result keeps "
                     "tallies only), so no defect is claimed.")
    return " ".join(parts)


@dataclass(frozen=True)
class Finding:
    """One finding in plain words: who (the slice, its rows), what (the metric against the
    whole dataset), how sure (q over the slices tested, replication) and what to do."""

    index: int
    itemset: str
    verdict: str
    color: str
    who: str
    what: str
    sure: str
    todo: str
    #: the significant slices it accounts for (itself included); 1 for a slice not a distinct finding
    covers: int = 1
    #: whether it is a distinct finding (no stronger finding explains it)
    distinct: bool = False
    #: whether it has n_min measured rows (below: the verdict is marked indicative)
    meets: bool = True
    #: the finding holding every row it is measured on ('' for none): it is distinct for how it differs
    #: from the rest of that one, which ``what`` says first
    within: str = ""
    #: the number of the card showing that finding (0: not among the cards)
    within_card: int = 0

    @property
    def inside(self) -> str:
        """Where the card sits, for a finding inside another ('' otherwise): shown above its words."""
        if not self.within:
            return ""
        return (f"Inside finding {self.within_card} (“{self.within}”)" if self.within_card
                else f"Inside the finding “{self.within}”")

    @property
    def badge(self) -> str:
        """The verdict as the table shows it: 'above · indicative' below the minimum size."""
        return verdict_label(self.verdict, None, None, self.meets)


#: findings summarised as cards, in the app and in the report
FINDING_CARDS = 3
#: the verdicts summarised as findings
_FINDING_ORDER = tuple(v for v in FINDING_VERDICTS if v != "better")  # better needs no action


def findings(table: SliceTable, metric: str | None = None, *, top: int = FINDING_CARDS,
             exclude: np.ndarray | None = None, max_shared: float = 0.5) -> tuple[list[Finding], int]:
    """The findings to show first, as cards, and how many findings there are in all.

    The cards are the distinct findings (``M_finding``: no stronger finding explains them; see
    :mod:`divergence.stats.findings`) in the default order, each with the count of significant slices it
    accounts for; ``better`` needs no action and gets no card. A result without distinct findings
    (assessed before they existed) falls back to the slices whose verdict is a defect, a hard
    cohort, above or below, by the strength of their evidence, skipping one that refines a card
    already taken, that one refines, or that shares more than ``max_shared`` of its rows with one.
    ``exclude``: slices to leave out of that fallback (e.g. redundant ones).
    """
    from .formats import ACTIONS, family_sentence, verdict_color

    info = table.metric(metric)
    m, binary = info.name, info.binary
    stats = table.statistics(m)
    if stats.verdict is None:
        return [], 0
    assert stats.count is not None  # an assessed table has its counts
    other = stats.other
    verdict = stats.verdict.astype(str)
    distinct = stats.finding is not None
    itemsets = stats.itemsets
    covers = {}
    if stats.finding is not None:
        flag = stats.finding.astype(bool)
        # a finding whose own honest estimate (replicated, else shrunk) is about zero says nothing to act
        # on: significant, but the estimate a meeting reads is 0 (issue 30): no card
        flag = flag & ~_about_zero(stats)
        order = np.array([i for i in table.default_order(m) if flag[i] and verdict[i] not in ("better", "noise")],
                         dtype=np.int64)
        candidates = order
        counts = pd.Series(stats.explained_by).value_counts()
        covers = {int(i): 1 + int(counts.get(itemsets[i], 0)) for i in order}
    else:
        keep = np.isin(verdict, _FINDING_ORDER)
        keep[0] = False
        if exclude is not None:
            keep &= ~np.asarray(exclude, dtype=bool)
        candidates = np.nonzero(keep)[0]
        rank = np.array([_FINDING_ORDER.index(v) for v in verdict[candidates]])
        size = np.abs(np.asarray(stats.divergence)[candidates])
        evidence = np.nan_to_num(np.asarray(stats.q if stats.q is not None else stats.p, dtype=float)[candidates],
                                 nan=1.0)
        order = candidates[np.lexsort((rank, -size, evidence))]
    a = table.assessment
    # the q-values' family: this metric's slices (the default) or every metric's
    family = family_sentence(a, m)
    overall = table.overall(m)
    label = metric_label(m)
    unit = "queries" if (table.params or {}).get("query") else "rows"  # a query-level slice is a set of queries
    support, count = table.columns["support"], table.columns["count"]

    taken: list[int] = []
    rows_of: dict[int, np.ndarray] = {}
    cards: list[Finding] = []
    for i in order:
        if len(cards) >= top:
            break
        codes = table.codes[i]
        if not distinct and any(np.all((table.codes[j] < 0) | (table.codes[j] == codes))
                                or np.all((codes < 0) | (codes == table.codes[j])) for j in taken):
            continue  # a refinement of a finding already shown, or a wider slice holding it
        if not distinct and table.kept_rows is not None:
            mine = rows_of.setdefault(i, table.rows_of(i))
            if any((mine & rows_of[j]).sum() > max_shared * max(mine.sum(), 1) for j in taken):
                continue
        taken.append(i)
        div = stats.divergence[i]
        who = f"{format_count(count[i])} {unit} ({format_percent(support[i])} of all)"
        if stats.count[i] != count[i]:
            who += f"; {label} measured on {format_count(stats.count[i])}"
        holder = str(stats.at("within", i) or "") if distinct else ""
        ci_low = None if stats.ci_low is None else stats.ci_low[i]
        ci_high = None if stats.ci_high is None else stats.ci_high[i]
        value = f"{label} {format_value(stats.value[i], binary)} {format_interval(ci_low, ci_high, binary)}"
        if holder and not is_undefined(stats.at("within_difference", i)):
            # distinct for how it differs from the rest of the finding holding it: that first, then the whole dataset
            diff, dv = float(stats.at("within_difference", i)), float(div)
            what = (f"{value}, {'higher' if diff > 0 else 'lower'} than the rest of “{holder}” "
                    f"({label} {format_value(stats.at('within_rest', i), binary)} on its other rows; difference "
                    f"{format_divergence(diff, binary)}, interval "
                    f"{format_divergence_interval(stats.at('within_ci_low', i), stats.at('within_ci_high', i), binary)}), "
                    f"{'though' if (diff > 0) != (dv > 0) else 'and'} {'above' if dv > 0 else 'below'} "
                    f"{format_value(overall, binary)} for the whole dataset ({format_divergence(dv, binary)}")
        else:
            what = (f"{value} against {format_value(overall, binary)} for the whole dataset "
                    f"({format_divergence(div, binary)}")
        rep = stats.at("replicated_divergence", i)
        shrunk = None if stats.divergence_shrunk is None else stats.divergence_shrunk[i]
        if not is_undefined(rep):
            what += f"; {format_divergence(rep, binary)} on the replication rows"
        elif shrunk is not None and not is_undefined(shrunk):
            # shrinkage pulls a slice's step beyond the slices holding it towards 0: towards them, which
            # can read farther from the whole dataset than the raw value when they diverge more
            farther = abs(float(shrunk)) > abs(float(div))
            what += (f"; {format_divergence(shrunk, binary)} "
                     + ("after shrinking towards the wider slices holding it, which diverge more" if farther
                        else "shrunk for the winner's curse"))
        what += ")"
        what += _model_effect(stats, i, label, binary) if distinct else ""
        baseline = other.get("baseline")
        if baseline is not None and not is_undefined(baseline[i]):
            what += (f"; the best constant guess from its own rows errs {format_value(baseline[i], binary)} "
                     f"(whole dataset {format_value(baseline[0], binary)})")
        sure = f"q = {format_p(None if stats.q is None else stats.q[i])} ({family})"
        if "replicated" in other:
            sure += (f"; {'replicated' if bool(stats.at('replicated', i)) else 'not replicated'} on "
                     f"{(a.replication if a else None) or 'the replication rows'}: "
                     f"{format_value(stats.at('replicated_value', i), binary)} "
                     f"{format_interval(stats.at('replicated_ci_low', i), stats.at('replicated_ci_high', i), binary)}")
        else:
            sure += "; not checked on other rows (no replication data)"
        if distinct and covers.get(int(i), 1) > 1:
            who += (f"; accounts for {format_count(covers[int(i)] - 1)} other significant slice"
                    f"{'s' if covers[int(i)] > 2 else ''} (refinements, wider slices holding its rows, slices it "
                    "lifts or lowers)")
        alias = str(stats.at("alias", i) or "") if distinct else ""
        if alias:
            names = [x for x in alias.split(" | ") if x]
            shares = [_shared(table, stats, i, x) for x in names]
            told = ", ".join(f"“{x}”" + (f" (sharing {format_percent(sh)} of their rows)" if sh is not None else "")
                             for x, sh in zip(names, shares))
            sure += (f"; the data do not tell it from {told}: with "
                     + ("that slice" if len(names) == 1 else "any of them")
                     + " in its place the model fits within 1.92 of its log-likelihood, and this one fits best")
        meets = bool(stats.meets_min_size[i]) if stats.meets_min_size is not None else True
        if not meets:
            sure += (f"; indicative: {format_count(stats.count[i])} measured rows, below the minimum size "
                     f"n_min = {format_count(stats.n_min)} (its interval is wider than δ)")
        todo = ACTIONS.get(str(stats.verdict[i]), "")
        if holder and not is_undefined(stats.at("within_difference", i)):
            # what to do follows what makes it distinct: how it differs from the rest of the finding holding it
            diff, low, high = (float(stats.at(f"within_{k}", i)) for k in ("difference", "ci_low", "ci_high"))
            sure_side = (low > 0) or (high < 0)
            todo = (f"Review these rows as part of “{holder}”: the metric is {'reliably ' if sure_side else ''}"
                    f"{'higher' if diff > 0 else 'lower'} here than on the rest of it"
                    + (f", though {'higher' if float(div) > 0 else 'lower'} than overall"
                       if (diff > 0) != (float(div) > 0) else "") + ".")
        cards.append(Finding(index=int(i), itemset=str(itemsets[i]), verdict=str(stats.verdict[i]),
                             color=verdict_color(stats.verdict[i]), who=who, what=what, sure=sure,
                             todo=todo, covers=covers.get(int(i), 1),
                             distinct=distinct, meets=meets, within=holder))
    return _under_their_holders(cards), int(candidates.size)


def _model_effect(stats: MetricStatistics, i: int, label: str, binary: bool) -> str:
    """A finding's effect in the findings' model (given the other findings) with its interval, and,
    where its direction differs from the divergence's, one sentence saying why."""
    effect = stats.at("effect", i)
    if is_undefined(effect):
        return ""
    effect, div = float(effect), float(stats.divergence[i])
    interval = format_estimate(effect, stats.at("effect_ci_low", i), stats.at("effect_ci_high", i), binary)
    text = f"; given the other findings, {interval} (its effect in the findings' model)"
    if effect == 0 or div == 0 or (effect > 0) == (div > 0):
        return text
    # the verdict follows the effect: an error metric's verdict says worse or better, another's higher or lower
    verdict = str(stats.verdict[i]) if stats.verdict is not None else ""
    error = verdict in ("better", "defect", "hard cohort", "undetermined")
    way = ("worse" if effect > 0 else "better") if error else ("higher" if effect > 0 else "lower")
    flag = np.asarray(stats.finding, dtype=bool) if stats.finding is not None else np.zeros(0, dtype=bool)
    others = [str(stats.itemsets[j]) for j in np.nonzero(flag)[0].tolist()
              if j != i and not is_undefined(stats.at("effect", j)) and (float(stats.at("effect", j)) > 0) == (effect > 0)]
    whose = (f", whose {label} the finding{'s' if len(others) > 1 else ''} "
             + ", ".join(f"“{x}”" for x in others) + f" {'raise' if effect > 0 else 'lower'}{'' if len(others) > 1 else 's'}"
             if others else "")
    return (text + f". It is {way} than the rows like it given the other findings, though "
            f"{'above' if div > 0 else 'below'} the whole dataset{whose}")


def _shared(table: SliceTable, stats: MetricStatistics, i: int, other: str) -> float | None:
    """The share of the metric's rows of slice i or the slice named ``other`` that are in both
    (None when the slices holding both were not mined)."""
    j = table.lookup(other)
    a, b = table.codes[i], table.codes[j]
    if np.any((a >= 0) & (b >= 0) & (a != b)):
        return 0.0
    both = int(np.asarray(table.index_of(np.where(a >= 0, a, b)[None, :]))[0])
    if both < 0 or stats.count is None:
        return None
    n_i, n_j, n_both = (float(stats.count[x]) for x in (i, j, both))
    return n_both / (n_i + n_j - n_both) if n_i + n_j - n_both > 0 else None


def _under_their_holders(cards: list[Finding]) -> list[Finding]:
    """The cards with each one inside another card placed right after it, numbered by its holder's card."""
    import dataclasses

    by_itemset = {c.itemset: c for c in cards}
    top = [c for c in cards if c.within not in by_itemset]
    out: list[Finding] = []

    def place(card: Finding) -> None:
        out.append(card)
        for inner in cards:
            if inner.within == card.itemset and inner not in out:
                place(inner)

    for card in top:
        place(card)
    number = {c.itemset: n for n, c in enumerate(out, 1)}
    return [dataclasses.replace(c, within_card=number.get(c.within, 0)) if c.within else c for c in out]


#: a finding's honest estimate within this share of δ of zero is "about zero": no card
ABOUT_ZERO = 0.1


def _about_zero(stats: MetricStatistics) -> np.ndarray:
    """Per slice: its honest estimate (the replicated divergence where measured, else the shrunk one)
    lies within :data:`ABOUT_ZERO` · δ of 0 (False where there is none, or no δ)."""
    n = len(stats.itemsets)
    if not stats.delta or stats.divergence_shrunk is None:
        return np.zeros(n, dtype=bool)
    honest = np.asarray(stats.divergence_shrunk, dtype=float)
    rep = stats.other.get("replicated_divergence")
    if rep is not None:
        rep = np.asarray(rep, dtype=float)
        honest = np.where(np.isfinite(rep), rep, honest)
    return np.isfinite(honest) & (np.abs(honest) < ABOUT_ZERO * float(stats.delta))


def findings_header(cards: Sequence[Finding], total: int) -> str:
    """The sentence above the finding cards (markdown), the same in the app and the report: how
    many distinct findings there are, that each is a different cohort (only when the cards are
    distinct findings: none explains another), and how many significant slices they account for."""
    if not cards:
        return ""
    if not cards[0].distinct:
        return (f"**Findings** · the {len(cards)} with the strongest evidence"
                + (f" ({format_count(total)} slices are findings in all; the others refine or overlap these: "
                   "Intervals page)" if total > len(cards) else ""))
    shown = (f"the first {len(cards)} of {format_count(total)}" if total > len(cards)
             else ("both" if len(cards) == 2 else f"all {len(cards)}" if len(cards) > 1 else "the one"))
    covered = sum(c.covers for c in cards)
    many = len(cards) > 1
    inside = [c for c in cards if c.within]
    others = ("refinements no different from them, wider slices holding their rows, or slices they lift or lower"
              if many else "refinements no different from it, wider slices holding its rows, or slices it lifts or "
                           "lowers")
    if inside:  # not "each a different cohort": some lie inside another finding, distinct from the rest of it
        relation = (f"; {format_count(len(inside))} of {'them' if many else 'it'} lie{'s' if len(inside) == 1 else ''} "
                    f"inside another finding and {'differs' if len(inside) == 1 else 'differ'} from the rest of it")
    else:
        relation = ", each a different cohort: none is explained by another" if many else ""
    lead = "**One distinct finding**" if total == 1 and len(cards) == 1 else f"**Distinct findings** · {shown}"
    return (lead + relation
            + f"; {'they account' if many else 'it accounts'} for {format_count(covered)} significant "
              f"slice{'s' if covered != 1 else ''}, {'themselves' if many else 'itself'} included"
            + (f" (the others are {others})." if covered > len(cards) else "."))
