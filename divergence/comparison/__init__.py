"""Comparing two models slice by slice (``compare``: ``divergence.compare``) and what a person
sees of a comparison: headline, sorted slices, table and figures (``compare_views``).

May import: data, prepare, stats, explain, present, table, scan, settings, outcome_rules, errors,
vocabulary.
"""
