"""The words a setting may take, and every word's name for people, in one place: the settings
model validates against the words, the engines dispatch on them, the command line offers them as
choices, and the dashboard, the report and the cards show their labels. No imports, so the
command line's parser reads them before the engine (and pandas) loads."""
from __future__ import annotations

__all__ = ["DEFAULT_MIN_SUPPORT", "TASKS", "CORRECTIONS", "FAMILIES", "REPLICATION_KINDS", "BINNINGS", "PERIODS",
           "ENGINES", "SCAN_ENGINES", "QUANTILE_MODES", "REPORT_SORTS", "PEER_SORTS", "VERDICTS",
           "FINDING_VERDICTS", "SIGNIFICANT_VERDICTS", "COMPARE_VERDICTS", "TASK_LABELS", "CORRECTION_NAMES",
           "CORRECTION_CHOICES", "CORRECTION_SHORT", "REPLICATION_LABELS", "BINNING_LABELS", "OUTPUT_KINDS", "METRIC_LABELS"]

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
#: the verdicts that stand on a significant slice (marked 'indicative' below the minimum size),
#: a comparison's included
SIGNIFICANT_VERDICTS = ("not replicated", "defect", "hard cohort", "undetermined", "better", "above", "below",
                        "worse")
#: a model comparison's verdicts
COMPARE_VERDICTS = ("worse", "better", "no change", "too small", "noise")

# ------------------------------------------------------------------ labels: each word's name for people
#: the tasks, as the dashboard offers them
TASK_LABELS = {"classification": "Classification", "regression": "Regression", "ranking": "Ranking",
               "outcome": "A numeric outcome"}
#: the corrections for the number of slices tested, by name (sentences, cards, the report)
CORRECTION_NAMES = {"bh": "Benjamini–Hochberg", "bonferroni": "Bonferroni", "holm": "Holm"}
#: the corrections as a choice (Benjamini–Hochberg controls the false discoveries: q-values)
CORRECTION_CHOICES = {k: v + (" (q-values)" if k == "bh" else "") for k, v in CORRECTION_NAMES.items()}
#: what a corrected p-value is called in a column's help
CORRECTION_SHORT = {"bh": "BH-adjusted", "bonferroni": "Bonferroni-adjusted", "holm": "Holm-adjusted"}
#: where slices are re-measured, as the dashboard offers it
REPLICATION_LABELS = {"none": "None", "split": "A split or period column", "file": "A second file",
                      "holdout": "A held-out share of the rows"}
#: how numeric columns are cut, as the dashboard offers it
BINNING_LABELS = {"quantile": "Quantiles (equal rows)", "uniform": "Equal width",
                  "tree": "Where the outcome changes (tree)"}
#: what a model's output is (classification): predicted labels, or a score cut at a threshold
OUTPUT_KINDS = {"labels": "Predicted labels", "score": "A score and a threshold"}
#: each classification and regression metric's name in words
METRIC_LABELS = {
    "fpr": "false-positive rate", "fnr": "false-negative rate", "tpr": "true-positive rate",
    "tnr": "true-negative rate", "error": "error rate", "accuracy": "accuracy",
    "precision": "precision", "fdr": "false-discovery rate", "npv": "negative predictive value",
    "for": "false-omission rate", "positive_rate": "positive prediction rate",
    "base_rate": "share of positives", "brier": "Brier score", "log_loss": "log loss",
    "calibration": "mean of score − label",
    "abs_error": "absolute error", "squared_error": "squared error", "signed_error": "signed error",
}
