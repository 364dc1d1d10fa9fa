"""The command line: ``divergence scan DATA ...`` or ``python -m divergence scan DATA ...``
(``cli``).

May import: data, prepare, mining, stats, explain, comparison, engines, present, report, table,
scan, settings, budget, scores, errors, vocabulary.
"""
