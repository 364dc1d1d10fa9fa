"""Tables as they come: reading files (``io``; by format: ``csv_format``, ``parquet_format``, the
bytes within limits in ``bounded_reading``; writing a file whole in ``atomic_write``), what kind of
values a column holds (``column_kinds``), which columns to slice by (``columns``: the default attributes, and
``column_rules``: columns measured against the model; ``rival_rules``: other models' scores and the
columns on their scale; ``outcome_alone``: an outcome's sibling outcomes and the columns it is read
from; ``screen_more``: those rules in the screen's order; ``screen_sample``: the columns they read, each
read once; ``personal``: personal identifiers), the first guess of the roles (``roles``), columns no
slice can be cut from (``nested``), the built-in dataset (``datasets``) and writing a table as CSV
(``csv_writer``).

May import: errors.
"""
