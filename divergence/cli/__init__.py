"""The command line: ``divergence scan DATA ...`` or ``python -m divergence scan DATA ...``
(``cli``), and its first signal handler, set before the imports (``starting``).

May import: data, prepare, mining, stats, explain, comparison, engines, present, report, table,
scan, settings, budget, scores, errors, vocabulary.
"""
