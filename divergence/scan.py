"""scan(): a model's outputs -> prepare (:mod:`divergence.prepare.prepared`) -> mine -> statistics -> SliceTable."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from .budget import ProgressCallback
from .kernels.processes import asking
from .mining.mined import mine_prepared
from .prepare.model_outputs import apply_models
from .prepare.outcomes import Outcome
from .prepare.prepared import prepare
from .prepare.replication_rows import needs_its_table
from .prepare.score_threshold import settle_threshold, with_note
from .settings import Settings
from .stats.tabulate import measure, tell
from .table import SliceTable

__all__ = ["scan", "scan_taking", "mine", "MinedTable"]


def scan(
    data: pd.DataFrame,
    settings: Settings | None = None,
    *,
    outcomes: Sequence[Outcome] | None = None,
    replicate: pd.DataFrame | None = None,
    engine: str = "fast",
    exploratory: bool = True,
    progress: ProgressCallback | None = None,
    workers: int | None = None,
    **keywords: Any,
) -> SliceTable:
    """Every slice with support >= ``min_support``, with its outcome, divergence, t and p.

    The analysis is described by a :class:`~divergence.settings.Settings` (``settings``), by
    its fields as keywords, or both (the keywords then change those fields); it is validated
    once, there, and an unknown keyword is refused by name.

    Keywords (the fields of ``Settings``' roles, slicing, mining and statistics)
    ----------------------------------------------------------------------------
    target, prediction, score, threshold, positive : a binary classifier (``positive``
        names the positive label; predictions as labels, or a score and a threshold: without
        one, 0.5 for a score within [0, 1] and a note says so, any other score refused) or,
        with ``regression=True`` or regression metrics, a regressor.
    metrics : metric names, e.g. ``["fpr", "fnr"]`` or ``["abs_error"]``.
    outcome : a numeric column (or several) used as the outcome as it is.
    rank, rank_by, ascending, gamma : a ranking, from a rank column (1 = best) or from
        a score (higher is better unless ``ascending``), valued by ``gamma``
        (``topk:K``, ``power:A`` or ``dcg``); the metric is called ``gamma``.
    attributes : the columns to slice by; default every column not used above, less row
        numbers, identifiers, person names, dates, free text, constant and all-missing columns
        and columns that leak the target, prediction or score (see
        :func:`divergence.data.columns.screen_attributes`; the result's notes say which and why).
    bins, quantile_bins, binning : how numeric attributes are binned (see
        :func:`divergence.prepare.discretize.discretize`).
    min_support : the smallest share of rows a slice may hold, in (0, 1] (default 0.02,
        ``divergence.settings.DEFAULT_MIN_SUPPORT``).
    max_length : the most items in an itemset (default: no limit).
    exhaustive : False (default): each distinct set of rows is one slice, described by its
        shortest itemset (ties: the first in column order); an item with the same rows as
        another, or on every row of its parent, adds nothing. True: every itemset above the
        support, as DivExplorer lists them (an item duplicating another doubles the table).
    max_slices, max_work, time_limit : the budget: 500,000 slices (fewer when their
        statistics would pass 2 GiB) and 1e10 units of mining work by default, both counted,
        so the same data and settings give the same table on any machine and at any load;
        ``time_limit`` (600 seconds of the attribute screen and the mining) is a safety net whose cut depends on the
        machine: the notes say so, ``table.lattice.cut_by`` is "time" and a
        :class:`~divergence.errors.DivergenceTimeLimitWarning` is raised. Past the budget the
        table is complete up to the longest length that fits and its notes say so
        (``table.lattice.complete_length``); when not even single items fit,
        :class:`~divergence.errors.DivergenceBudgetError`.
    delta, confidence, correction, family, bootstrap, seed, top_k, sort_by :
        the worst-slice statistics, see :func:`divergence.assess`.
    holdout : a share of the rows (seeded by ``seed``) held out of mining and used to
        replicate every slice: estimates free of the winner's curse.

    Other parameters
    ----------------
    data : the table, one row per example.
    outcomes : ready-made :class:`Outcome` objects (added to those of the roles).
    replicate : a second table with the same columns, on which every slice is measured again.
    engine : ``"fast"`` (the default miner) or ``"mlxtend"`` (FP-growth, slow, reference).
    exploratory : False for a scan from a pre-registered slice plan.
    progress : called with a dict ``{"stage", "slices", "length", "fraction"}`` at each
        stage ("discretizing", "mining", "statistics", "done") and every quarter second of
        mining (``slices`` mined so far, ``length`` the longest being completed or None,
        ``fraction`` an estimate of the mining done or None).
    workers : how many processes the scan may run at once, itself included (default: one, or what
        :func:`divergence.set_workers` or ``DIVERGENCE_WORKERS`` say). With 2, a large request mines
        its shorter lengths in a second process beside it, and a first run without the compiled
        kernels compiles the statistics' kernels beside it: the same table, sooner
        (:mod:`divergence.kernels.processes`). The dashboard and the command line ask for every core.
    """
    return scan_taking([data], settings, outcomes=outcomes, replicate=replicate, engine=engine,
                       exploratory=exploratory, progress=progress, workers=workers, **keywords)


def scan_taking(box: list[pd.DataFrame], settings: Settings | None = None, *, workers: int | None = None,
                **keywords: Any) -> SliceTable:
    """:func:`scan` of the one frame in ``box``, which it takes out of the list: once the rows are
    prepared the scan holds the frame no longer, so a caller keeping no other reference (the command
    line) does not carry its input through the statistics (Adult: 8 MiB less at the peak)."""
    with asking(workers):
        return _scan(box, settings, **keywords)


def _scan(box: list[pd.DataFrame], settings: Settings | None, *, outcomes: Sequence[Outcome] | None = None,
          replicate: pd.DataFrame | None = None, engine: str = "fast", exploratory: bool = True,
          progress: ProgressCallback | None = None, **keywords: Any) -> SliceTable:
    models = apply_models(box.pop(), keywords, progress=progress)  # model=estimator: its outputs as columns
    if models.records and replicate is not None:  # the replication rows get the same model's outputs
        replicate = apply_models(replicate, keywords).data
    data, keywords = models.data, models.keywords
    st, threshold_note = settle_threshold(data, Settings.resolve(settings, keywords))
    needs_its_table(st.replication, replicate)  # mine() alone may be given the second table later (assess)
    table = with_note(mine(data, st, outcomes=outcomes, replicate=replicate, engine=engine, progress=progress),
                      threshold_note)
    models = models.without_data()  # the rows are prepared and mined: the statistics never read the frame
    del data
    from .stats.assess import assess

    tell(progress, "statistics", len(table) - 1)
    out = assess(table, st.statistics, exploratory=exploratory, progress=progress)
    tell(progress, "done", len(out) - 1)
    return models.stamp(out)


#: a slice table as :func:`mine` returns it: every slice with its support, count and each metric's
#: outcome, divergence, t and p, not yet assessed (``assessment`` None); :func:`divergence.assess`
#: adds the worst-slice statistics
MinedTable = SliceTable


def mine(
    data: pd.DataFrame,
    settings: Settings | None = None,
    *,
    outcomes: Sequence[Outcome] | None = None,
    replicate: pd.DataFrame | None = None,
    engine: str = "fast",
    progress: ProgressCallback | None = None,
    workers: int | None = None,
    **keywords: Any,
) -> MinedTable:
    """The mining phase of :func:`scan`: every slice with support >= ``min_support`` with its
    outcome, divergence, t and p, without the worst-slice statistics; ``assess(mine(...))`` is
    ``scan(...)``, so a table mined once can be assessed at any statistics.

    Settings and keywords as in :func:`scan`. Of the statistics only ``seed`` is read here: it
    draws the rows a ``holdout`` sets aside and those ``binning="tree"`` chooses cut points on.
    The held-out rows, or ``replicate`` (one row per query for a query-level scan), are kept in
    the table (``replicate``) for :func:`divergence.assess` to measure every slice again on.
    ``progress`` is told "discretizing" and "mining" (see :func:`scan`), ``workers`` as in :func:`scan`.
    """
    with asking(workers):
        return _mine(data, settings, outcomes=outcomes, replicate=replicate, engine=engine, progress=progress,
                     **keywords)


def _mine(data: pd.DataFrame, settings: Settings | None, *, outcomes: Sequence[Outcome] | None,
          replicate: pd.DataFrame | None, engine: str, progress: ProgressCallback | None,
          **keywords: Any) -> MinedTable:
    models = apply_models(data, keywords, progress=progress)
    if models.records:  # mine(model=...) itself: the outputs computed here, recorded on the table
        return models.stamp(_mine(models.data, settings, outcomes=outcomes, replicate=replicate, engine=engine,
                                  progress=progress, **models.keywords))
    st, threshold_note = settle_threshold(data, Settings.resolve(settings, keywords))
    prepared = prepare(data, st, outcomes=outcomes, replicate=replicate, engine=engine, progress=progress)
    return with_note(measure(mine_prepared(prepared, st.mining, engine=engine, progress=progress)), threshold_note)


