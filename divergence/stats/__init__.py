"""The statistics of the mined slices: per-itemset tests (``stats``; Fisher's exact test in
``fisher``), the worst-slice assessment with intervals, corrections and verdicts (``assess``),
shrinkage (``shrinkage``), distinct findings and the default order (``findings``), replication
on another table (``replication``), the per-row tally columns of the outcomes (``row_weights``),
paired tests of two models on the same rows (``paired``), and the slice table from item codes
and tallies, every engine's last step (``tabulate``: mine, order, measure each slice).

May import: data, prepare, mining, kernels, table, settings, outcome_rules, scores, budget, errors,
vocabulary.
"""
