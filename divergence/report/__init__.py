"""Standing reports: slice plans saved and read back (``plan``), and running a plan on an
evaluation file into one self-contained HTML page (``report``).

May import: data, prepare, mining, stats, explain, comparison, present, table, scan, settings,
budget, scores, errors, vocabulary.
"""
