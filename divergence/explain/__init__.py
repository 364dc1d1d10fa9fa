"""Explaining slices: Shapley contributions of a slice's items, global item divergence,
corrective items and redundancy (``shapley``); slices typed by hand measured like mined ones, and
the rows slices share (``adhoc``).

May import: data, prepare, stats, table, errors.
"""
