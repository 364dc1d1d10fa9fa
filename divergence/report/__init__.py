"""Standing reports: slice plans saved and read back (``plan``), running a plan on an evaluation
file (``run``: does the plan fit the data, the scan, the comparison with the reference model) and
the self-contained HTML page of the result (``page``).

May import: data, prepare, mining, stats, explain, comparison, present, table, scan, settings,
budget, scores, errors, vocabulary.
"""
