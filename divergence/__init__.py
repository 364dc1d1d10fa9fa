"""divergence: find where a model behaves differently.

Mine every data subgroup (slice) above a support threshold, measure how far each
slice's outcome diverges from the whole dataset's, and attach the statistics that
make a worst-slice table trustworthy. No Streamlit here: usable from a notebook,
a script or the command line (``python -m divergence``).
"""
from .discretize import AttributeBins, Discretized, discretize
from .errors import DivergenceInputError
from .outcomes import Outcome
from .scan import build_outcomes, scan
from .table import MetricInfo, SliceTable

__all__ = [
    "scan",
    "SliceTable",
    "MetricInfo",
    "Outcome",
    "build_outcomes",
    "discretize",
    "Discretized",
    "AttributeBins",
    "DivergenceInputError",
]
