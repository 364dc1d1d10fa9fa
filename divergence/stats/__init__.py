"""The statistics of the mined slices: per-itemset tests (``stats``; Fisher's exact test in
``fisher``), the worst-slice assessment with intervals, corrections and verdicts (``assess``, by its steps: each
slice's test and the family (``slice_tests``), the minimum size (``min_size``), the error metrics'
defect tests (``defect_tests``; their reference models walked over the lattice in ``verdict_walk``;
the 0/1 error's predictions-moved test in ``verdict_predictions``),
the replication's columns (``replication_columns``), bootstrap intervals (``bootstrap_intervals``),
the distinct findings' columns (``findings_columns``)), shrinkage
(``shrinkage``; its compiled pass over the lattice's slices and subsets in ``shrinkage_kernel``), distinct findings and the default order (``findings``; the fitted model whose
terms they are in ``findings_model``, its compiled sums in ``findings_kernel``, its search in ``findings_search``),
replication on another table (``replication``), paired tests of two models on the same rows
(``paired``), each mined slice measured (``tabulate``), and any metric on chosen slices' own rows with
a bootstrap interval (``evaluate``: ``SliceTable.evaluate``). Nothing here calls the miner: the
statistics read a mined table and walk its lattice (``mining.lattice``).

May import: data, prepare, mining, kernels, table, settings, outcome_rules, scores, budget, errors,
vocabulary.
"""
