"""Mining every itemset above the support: the miner (``mining``), its compiled, resumable
kernel (``mining_kernel``) and the driver calling it by quotas of work (``mining_driver``), a large
request's shorter lengths mined beside it on another core (``shorter``), the
canonical order of itemsets (``canonical``), the mined slice table from item codes and tallies
(``mined``: every engine's mining step), the walks over the mined lattice with per-row data
(``lattice``: tallies, bitsets, bootstrap sums; what the walks compute for a statistic is that
statistic's, in ``stats``) and mlxtend's FP-growth as the reference miner (``mlxtend_reference``).
No statistics here: no test, interval, verdict or reference model.

May import: prepare, kernels, table, settings, budget, errors, vocabulary.
"""
