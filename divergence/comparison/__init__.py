"""Comparing two models slice by slice (``compare``: ``divergence.compare``): both models' per-row
outcomes and their tally columns, every input checked (``model_inputs``), and the statistics of the
change, typed, with its minimum size, verdicts and distinct findings (``change_statistics``); what a
person sees of a comparison is in ``divergence.present.compare_views``.

May import: data, prepare, mining, stats, explain, table, settings, outcome_rules, errors, vocabulary, hooks, budget.
"""
