"""The command line: ``divergence scan DATA ...`` or ``python -m divergence scan DATA ...``
(``cli``), its summary for a person in a terminal (``summary``), its first signal handler, set before
the imports (``starting``), the check that no output replaces an input or another output
(``outputs``), the escaping of what it prints (``terminal``), and the process's garbage collector while
the libraries load and its end without teardown (``process``).

May import: data, prepare, mining, stats, explain, comparison, engines, present, report, table,
scan, settings, budget, scores, errors, vocabulary, kernels.
"""
