"""divergence: find where a model behaves differently.

Mine every data subgroup (slice) above a support threshold, measure how far each
slice's outcome diverges from the whole dataset's, and attach the statistics that
make a worst-slice table trustworthy. No Streamlit here: usable from a notebook,
a script or the command line (``python -m divergence``).
"""
__version__ = "0.9.0"

from .adhoc import MeasuredSlice, measure_slice, overlap
from .assess import VERDICTS, assess, support_for_min_size
from .columns import AttributeScreen, screen_attributes
from .compare import COMPARE_VERDICTS, Comparison, compare
from .discretize import AttributeBins, Discretized, discretize
from .duckdb_engine import scan_duckdb
from .errors import DivergenceBudgetError, DivergenceInputError
from .outcomes import Outcome
from .plan import SlicePlan, load_plan, save_plan
from .roles import RoleGuess, guess_roles
from .scan import build_outcomes, scan
from .spark_engine import scan_spark
from .shapley import (
    corrective_items,
    global_divergence,
    individual_divergence,
    item_contributions,
    prune_redundant,
    redundant_itemsets,
    shapley_matrix,
)
from .table import MetricInfo, SliceTable

__all__ = [
    "scan",
    "compare",
    "Comparison",
    "COMPARE_VERDICTS",
    "scan_duckdb",
    "scan_spark",
    "SlicePlan",
    "save_plan",
    "load_plan",
    "assess",
    "support_for_min_size",
    "VERDICTS",
    "SliceTable",
    "MetricInfo",
    "Outcome",
    "build_outcomes",
    "discretize",
    "Discretized",
    "AttributeBins",
    "DivergenceInputError",
    "DivergenceBudgetError",
    "screen_attributes",
    "AttributeScreen",
    "guess_roles",
    "RoleGuess",
    "item_contributions",
    "shapley_matrix",
    "individual_divergence",
    "global_divergence",
    "corrective_items",
    "redundant_itemsets",
    "prune_redundant",
    "measure_slice",
    "MeasuredSlice",
    "overlap",
]
