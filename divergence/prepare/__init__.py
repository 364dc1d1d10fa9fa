"""From a table to what the miner counts: one outcome per row and metric (``outcomes``, and
ranking quality per query in ``queries``), attributes as items (``discretize``; outcome-aware
cut points in ``cutpoints``; cuts typed by hand in ``typed_cuts``), the tally layout
(``tallies``) and identical rows merged with their tallies summed (``compression``); a fitted
model's outputs computed as columns (``model_outputs``).

May import: data, kernels, settings, outcome_rules, errors, vocabulary, budget.
"""
