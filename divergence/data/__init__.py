"""Tables as they come: reading files (``io``), what kind of values a column holds
(``column_kinds``), which columns to slice by (``columns``: the default attributes, and
``column_rules``: columns measured against the model; ``personal``: personal identifiers), the first
guess of the roles (``roles``), columns no slice can be cut from (``nested``) and the built-in dataset
(``datasets``).

May import: errors.
"""
