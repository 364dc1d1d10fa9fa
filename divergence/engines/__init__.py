"""The heavy step where the data lives: the SQL text (``sql``), the shared back end handing the
compressed table to the in-memory miner (``engine_scan``; its steps before the GROUP BY in
``engine_plan``, the outcomes as SQL and the profile, and ``engine_bins``, the attribute screen and
the bins), DuckDB (``duckdb_engine``:
``scan_duckdb``) and Spark (``spark_engine``: ``scan_spark``).

May import: data, prepare, mining, stats, table, settings, outcome_rules, budget, errors, vocabulary.
"""
