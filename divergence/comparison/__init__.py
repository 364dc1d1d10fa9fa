"""Comparing two models slice by slice (``compare``: ``divergence.compare``); what a person sees
of a comparison is in ``divergence.present.compare_views``.

May import: data, prepare, mining, stats, explain, table, settings, outcome_rules, errors, vocabulary, hooks, budget.
"""
