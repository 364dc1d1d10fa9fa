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

import importlib
import sys
import types
from typing import TYPE_CHECKING

__version__ = "0.9.0"

#: public name -> the module that defines it
_EXPORTS = {
    "scan": "scan",
    "mine": "scan",
    "MinedTable": "scan",
    "compare": "compare",
    "Comparison": "compare",
    "COMPARE_VERDICTS": "compare",
    "scan_duckdb": "duckdb_engine",
    "scan_spark": "spark_engine",
    "Settings": "settings",
    "SlicePlan": "plan",
    "save_plan": "plan",
    "load_plan": "plan",
    "assess": "assess",
    "support_for_min_size": "assess",
    "VERDICTS": "assess",
    "SliceTable": "table",
    "MetricInfo": "table",
    "Outcome": "outcomes",
    "build_outcomes": "outcomes",
    "discretize": "discretize",
    "Discretized": "discretize",
    "AttributeBins": "discretize",
    "DivergenceInputError": "errors",
    "DivergenceBudgetError": "errors",
    "DivergenceOutputError": "errors",
    "DivergenceTimeLimitWarning": "errors",
    "screen_attributes": "columns",
    "AttributeScreen": "columns",
    "guess_roles": "roles",
    "RoleGuess": "roles",
    "item_contributions": "shapley",
    "shapley_matrix": "shapley",
    "individual_divergence": "shapley",
    "global_divergence": "shapley",
    "corrective_items": "shapley",
    "redundant_itemsets": "shapley",
    "prune_redundant": "shapley",
    "measure_slice": "adhoc",
    "MeasuredSlice": "adhoc",
    "overlap": "adhoc",
}

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # what type checkers and editors see
    from .adhoc import MeasuredSlice, measure_slice, overlap
    from .assess import VERDICTS, assess, support_for_min_size
    from .columns import AttributeScreen, screen_attributes
    from .compare import COMPARE_VERDICTS, Comparison, compare
    from .discretize import AttributeBins, Discretized, discretize
    from .duckdb_engine import scan_duckdb
    from .errors import DivergenceBudgetError, DivergenceInputError, DivergenceOutputError, DivergenceTimeLimitWarning
    from .outcomes import Outcome, build_outcomes
    from .plan import SlicePlan, load_plan, save_plan
    from .settings import Settings
    from .roles import RoleGuess, guess_roles
    from .scan import MinedTable, mine, scan
    from .shapley import (corrective_items, global_divergence, individual_divergence, item_contributions,
                          prune_redundant, redundant_itemsets, shapley_matrix)
    from .spark_engine import scan_spark
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
