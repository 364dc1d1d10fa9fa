"""From a table to what the miner counts, in one preparation (``prepared``: the in-memory one;
the SQL engines' gives the same result): which rows are mined and which confirm (``replication_rows``), one outcome per row and metric (``outcomes``, and
ranking quality per query in ``queries``), attributes as items (``discretize``; outcome-aware
cut points in ``cutpoints``; cuts typed by hand in ``typed_cuts``), the tally layout
and what each metric's columns mean (``tallies``), the per-row tally columns of the outcomes
(``row_weights``) and identical rows merged with their tallies summed (``compression``, and
``grouping`` by one key per row, sorted as the miner takes them); the
measured rows an in-memory scan keeps beside its tallies (``kept_rows``); a fitted model's outputs
computed as columns (``model_outputs``); a score's threshold when none is given (``score_threshold``);
memory a step freed given back before the next (``freed_memory``).

May import: data, kernels, settings, outcome_rules, errors, vocabulary, budget.
"""
