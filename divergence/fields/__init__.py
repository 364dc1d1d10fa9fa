"""The settings model's fields: the kinds of value a setting takes, with the messages of a value
refused and how the command line reads it (``kinds``), and the sections of the settings, each a
frozen dataclass of fields declaring their default, kind and help (``sections``: roles, slicing,
mining, statistics, replication, explain, compare). :class:`divergence.settings.Settings` holds one
of each section, and ``divergence.settings`` offers every public name of both modules.

May import: budget, outcome_rules, scores, errors, vocabulary.
"""
