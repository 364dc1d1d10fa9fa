"""The words a setting may take, in one place: the settings model validates against them, the
engines dispatch on them and the command line offers them as choices. No imports, so the
command line's parser reads them before the engine (and pandas) loads."""
from __future__ import annotations

__all__ = ["DEFAULT_MIN_SUPPORT", "TASKS", "CORRECTIONS", "FAMILIES", "REPLICATION_KINDS", "BINNINGS", "PERIODS",
           "ENGINES", "SCAN_ENGINES", "QUANTILE_MODES", "REPORT_SORTS", "PEER_SORTS", "VERDICTS",
           "FINDING_VERDICTS", "SIGNIFICANT_VERDICTS", "COMPARE_VERDICTS"]

TASKS = ("classification", "regression", "ranking", "outcome")
#: multiple-testing corrections (Benjamini-Hochberg, Bonferroni, Holm)
CORRECTIONS = ("bh", "bonferroni", "holm")
#: the tests corrected together: every slice of every metric, or each metric's slices
FAMILIES = ("scan", "metric")
REPLICATION_KINDS = ("none", "split", "file", "holdout")
#: how numeric attributes are binned
BINNINGS = ("quantile", "uniform", "tree")
#: the periods a date column can be binned by (``bins={col: "quarter"}``)
PERIODS = ("month", "quarter", "year")
#: the miners that work on rows in memory
ENGINES = ("fast", "mlxtend")
#: where a scan can run: in memory, or binned and compressed where the data lives
SCAN_ENGINES = ENGINES + ("duckdb", "spark")
#: quantile edges in DuckDB and Spark
QUANTILE_MODES = ("auto", "exact", "approx")
#: what the report's slice tables can be sorted by (a metric's column suffix), and their names
REPORT_SORTS = {"order": "the default order (distinct findings first)", "lift_shortfall": "lift shortfall",
                "divergence": "divergence",
                "divergence_shrunk": "shrunk divergence", "divergence_bound": "divergence bound nearest zero",
                "sliceline": "SliceLine score (alpha 0.95)", "wracc": "WRAcc (support x divergence)",
                "lift": "lift (slice / whole dataset)"}
#: the peers' scores among them (divergence.scores): computed when a report is sorted by one
PEER_SORTS = ("sliceline", "wracc", "lift")

#: the one default minimum support, of the settings model (so of the Python API and plans), the command
#: line and the dashboard: slices of 2% of the rows (docs/mining.md, "Default support": why 0.02; measured in docs/performance.md)
DEFAULT_MIN_SUPPORT = 0.02

# ------------------------------------------------------------------ verdicts (one list each)
#: a scan's verdicts, in the order they are checked (the app's filters, the report's legend and
#: formats' colours and sentences follow it)
VERDICTS = ("too small", "noise", "not replicated", "defect", "hard cohort", "undetermined", "better", "above",
            "below")
#: the verdicts that make a slice a finding (its error or value reliably differs), in the order
#: the finding cards take them
FINDING_VERDICTS = ("defect", "hard cohort", "undetermined", "above", "below", "better")
#: the verdicts that stand on a significant slice (flagged 'imprecise' below the minimum size),
#: a comparison's included
SIGNIFICANT_VERDICTS = ("not replicated", "defect", "hard cohort", "undetermined", "better", "above", "below",
                        "worse")
#: a model comparison's verdicts
COMPARE_VERDICTS = ("worse", "better", "no change", "too small", "noise")
