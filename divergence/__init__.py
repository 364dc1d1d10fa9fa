"""divergence: find where a model behaves differently.

Mine every data subgroup (slice) above a support threshold, measure how far each
slice's outcome diverges from the whole dataset's, and attach the statistics that
make a worst-slice table trustworthy. No Streamlit here: usable from a notebook,
a script or the command line (``divergence`` or ``python -m divergence``).

Two phases make a scan: ``mine(data, settings) -> MinedTable`` (the slices, their outcomes and
divergences) and ``assess(mined, statistics) -> SliceTable`` (the worst-slice statistics);
``scan(data, settings)`` is ``assess(mine(data, settings), settings.statistics)``.

The public names below are imported when first used (PEP 562), so ``import divergence``
and the command line's ``--help`` stay fast; the modules behind them are private.
"""
from __future__ import annotations

import sys

if sys.argv[:1] == ["-m"] or sys.argv[:1] and sys.argv[0].endswith("divergence"):
    # `python -m divergence` or the `divergence` script: a signal while starting is one line from here on (F26)
    from .cli.starting import catch_while_starting, one_blas_thread, run_as_command

    if run_as_command():
        catch_while_starting()
        one_blas_thread()

import importlib  # noqa: E402
import types  # noqa: E402
from typing import TYPE_CHECKING  # noqa: E402

__version__ = "0.9.0"

#: public name -> the module that defines it
_EXPORTS = {
    "scan": "scan",
    "mine": "scan",
    "MinedTable": "scan",
    "compare": "comparison.compare",
    "Comparison": "comparison.compare",
    "COMPARE_VERDICTS": "comparison.compare",
    "scan_duckdb": "engines.duckdb_engine",
    "mine_duckdb": "engines.duckdb_engine",
    "scan_spark": "engines.spark_engine",
    "Settings": "settings",
    "set_workers": "kernels.processes",
    "SlicePlan": "report.plan",
    "save_plan": "report.plan",
    "load_plan": "report.plan",
    "assess": "stats.assess",
    "support_for_min_size": "stats.assess",
    "VERDICTS": "stats.assess",
    "SliceTable": "table",
    "MetricInfo": "table",
    "Outcome": "prepare.outcomes",
    "build_outcomes": "prepare.outcomes",
    "discretize": "prepare.discretize",
    "Discretized": "prepare.discretize",
    "AttributeBins": "prepare.discretize",
    "DivergenceInputError": "errors",
    "DivergenceBudgetError": "errors",
    "DivergenceOutputError": "errors",
    "DivergenceTimeLimitWarning": "errors",
    "screen_attributes": "data.columns",
    "AttributeScreen": "data.columns",
    "guess_roles": "data.roles",
    "RoleGuess": "data.roles",
    "item_contributions": "explain.shapley",
    "shapley_matrix": "explain.shapley",
    "individual_divergence": "explain.shapley",
    "global_divergence": "explain.shapley",
    "corrective_items": "explain.shapley",
    "redundant_itemsets": "explain.shapley",
    "prune_redundant": "explain.shapley",
    "measure_slice": "explain.adhoc",
    "MeasuredSlice": "explain.adhoc",
    "overlap": "explain.adhoc",
    "never_compile_here": "kernels.compiled",
}

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # what type checkers and editors see
    from .comparison.compare import COMPARE_VERDICTS, Comparison, compare
    from .data.columns import AttributeScreen, screen_attributes
    from .data.roles import RoleGuess, guess_roles
    from .engines.duckdb_engine import mine_duckdb, scan_duckdb
    from .engines.spark_engine import scan_spark
    from .errors import DivergenceBudgetError, DivergenceInputError, DivergenceOutputError, DivergenceTimeLimitWarning
    from .explain.adhoc import MeasuredSlice, measure_slice, overlap
    from .explain.shapley import (
        corrective_items,
        global_divergence,
        individual_divergence,
        item_contributions,
        prune_redundant,
        redundant_itemsets,
        shapley_matrix,
    )
    from .kernels.compiled import never_compile_here
    from .kernels.processes import set_workers
    from .prepare.discretize import AttributeBins, Discretized, discretize
    from .prepare.outcomes import Outcome, build_outcomes
    from .report.plan import SlicePlan, load_plan, save_plan
    from .scan import MinedTable, mine, scan
    from .settings import Settings
    from .stats.assess import VERDICTS, assess, support_for_min_size
    from .table import MetricInfo, SliceTable


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'divergence' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """The package module: ``divergence.scan`` (and ``compare``, ``assess``, ``discretize``) is the
    function of that name, as it always was, even after its module is imported (which would
    otherwise bind the module to the package's attribute)."""

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, types.ModuleType) and _EXPORTS.get(name) == name:
            return  # the module stays in sys.modules; the package's name is the function
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def _notebook(name: str):
    """A function of :mod:`divergence.present.notebook`, imported when first called."""
    def call(*args, **kwargs):
        from .present import notebook

        return getattr(notebook, name)(*args, **kwargs)

    call.__name__ = name
    return call


from . import hooks as _hooks  # noqa: E402 - after the package module is in place


def _evaluate(*args, **kwargs):
    """``SliceTable.evaluate``, imported when first called."""
    from .stats.evaluate import evaluate

    return evaluate(*args, **kwargs)


_hooks.VIEWS["evaluate"] = _evaluate
_hooks.VIEWS.update({name: _notebook(name) for name in ("table_html", "table_text", "comparison_html",
                                                        "statistics_html", "TablePlots", "ComparisonPlots")})
