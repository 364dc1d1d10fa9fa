"""Mining every itemset above the support: the miner (``mining``), its compiled, resumable
kernel (``mining_kernel``) and the driver calling it by quotas of work (``mining_driver``), the
canonical order of itemsets (``canonical``), the walks over the mined lattice with per-row data
(``lattice``) and mlxtend's FP-growth as the reference miner (``mlxtend_reference``).

May import: prepare, kernels, settings, budget, errors, vocabulary.
"""
