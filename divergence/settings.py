"""One settings model for an analysis: roles, slicing, mining, statistics, replication.

Every way in (``scan()``'s keywords, the SQL engines, the command line, a plan file, the
dashboard) builds a :class:`Settings`; it is validated once, here. Each field declares the kind
of value it takes (:class:`Real`, :class:`Integer`, :class:`OneOf` a vocabulary word, :class:`Text`
a column name, :class:`Columns`, :class:`Flag`, :class:`BinSpecs`, ...), and everything else is
derived from the fields: every message ("<name> must be <what the kind takes>"), the plan's
sections (an unknown key is refused by name) and the command line's options (flag, default, help,
how the text is read: :func:`divergence.cli.cli.add_settings`). Dataclasses rather than pydantic:
no new dependency, frozen values that hash and compare.

Checks that need the data (does a column exist, is the target binary) stay where the data
is read (``outcomes``, ``discretize``); these are the checks that need none.

The model is in three modules: the kinds of value (:mod:`divergence.fields.kinds`), the sections
(:mod:`divergence.fields.sections`) and, here, :class:`Settings`, which holds one of each, with the
plan's sections and the flat keywords read and written. Every public name of the three is importable
from here.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from .budget import MAX_SLICES, MAX_WORK, TIME_LIMIT
from .errors import DivergenceInputError
from .fields.kinds import (
    MSG_NOT_MAPPING,
    MSG_UNKNOWN_KEY,
    MSG_UNKNOWN_SETTING,
    SUPPORT_TOLERANCE,
    BinSpecs,
    Columns,
    Flag,
    Gamma,
    Integer,
    Kind,
    Names,
    OneOf,
    PerMetric,
    Real,
    Support,
    Text,
    input_error,
    min_count_for,
    support_text,
)
from .fields.sections import REPLICATION_FIELDS, Compare, Explain, Mining, Replication, Roles, Slicing, Statistics
from .vocabulary import DEFAULT_MIN_SUPPORT

MSG_HOLDOUT_SEED = "holdout_seed draws the rows a holdout sets aside: give holdout too."

__all__ = [
    "Roles", "Slicing", "Mining", "Statistics", "Replication", "Explain", "Compare", "Settings",
    "check", "check_min_support", "min_count_for", "support_text", "SUPPORT_TOLERANCE", "setting_field", "flat_keys", "DEFAULT_MIN_SUPPORT", "section", "scan_keys",
    "section_keys", "Kind", "Real", "Integer", "OneOf", "Flag", "Text", "Columns", "Names", "Support", "PerMetric",
    "BinSpecs", "Gamma", "MAX_SLICES", "MAX_WORK", "TIME_LIMIT",
]


def check(name: str, value: Any) -> Any:
    """One setting (a flat keyword: ``min_support``, ``binning``) checked and normalised by its
    field's kind: what code below the settings model checks a lone value with."""
    f = setting_field(name)
    return f.metadata["kind"].check(value, f.metadata.get("label") or name)


def check_min_support(value: Any) -> float | int:
    """min_support as a share of the rows (a float in (0, 1]) or, above 1, a row count (an int);
    ``"109/6172"`` reads as the share 109/6172. Anything else is a clear error."""
    return check("min_support", value)


_SECTIONS = {"roles": Roles, "slicing": Slicing, "mining": Mining, "statistics": Statistics,
             "replication": Replication, "explain": Explain, "compare": Compare}
#: the plan's ``scan`` section holds these three sections' fields, flat
SCAN_SECTIONS = ("roles", "slicing", "mining")


def section(cls: type, base: Any = None, keywords: Mapping[str, Any] | None = None) -> Any:
    """One section (e.g. :class:`Statistics`) from ``base`` (or its defaults) with ``keywords``
    changed, validated; an unknown keyword is refused by name."""
    keywords = dict(keywords or {})
    known = [f.name for f in fields(cls)]
    for key in keywords:
        if key not in known:
            raise input_error(MSG_UNKNOWN_SETTING, key=key, known=", ".join(sorted(known)))
    if base is None:
        return cls(**keywords)
    if not isinstance(base, cls):
        raise DivergenceInputError(f"Expected {cls.__name__} settings; got {type(base).__name__}.")
    checked: Any = base  # a section: a dataclass
    return dataclasses.replace(checked, **keywords) if keywords else base


def section_keys(name: str) -> tuple[str, ...]:
    """The keys a section accepts (its fields, in order)."""
    return tuple(f.name for f in fields(_SECTIONS[name]))


def scan_keys() -> tuple[str, ...]:
    """The keys of a plan's ``scan`` section: roles, slicing and mining settings."""
    return tuple(k for s in SCAN_SECTIONS for k in section_keys(s))


def _owners() -> dict[str, str]:
    """Flat keyword -> the section that holds it (replication is ``holdout``; a comparison's own
    metrics are the roles')."""
    owner = {k: name for name in _SECTIONS if name not in ("replication", "compare") for k in section_keys(name)}
    owner.update({k: "compare" for k in ("reference", "reference_score", "reference_threshold")})
    return owner


def flat_keys() -> tuple[str, ...]:
    """Every flat keyword of :meth:`Settings.from_keywords` (``scan()``'s, the command line's)."""
    return tuple(_owners()) + ("holdout", "holdout_seed")


def setting_field(name: str) -> Any:
    """The field behind a flat keyword (its default, kind and help: what the command line offers)."""
    owner = _owners().get(name)
    if owner is None:
        raise input_error(MSG_UNKNOWN_SETTING, key=name, known=", ".join(sorted(flat_keys())))
    return next(f for f in fields(_SECTIONS[owner]) if f.name == name)


def _defaults(cls) -> dict:
    out = {}
    for f in fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            out[f.name] = f.default_factory()  # type: ignore[misc]
    return out


@dataclass(frozen=True)
class Settings:
    """Every setting of an analysis, validated (see the module docstring)."""

    roles: Roles = field(default_factory=Roles)
    slicing: Slicing = field(default_factory=Slicing)
    mining: Mining = field(default_factory=Mining)
    statistics: Statistics = field(default_factory=Statistics)
    replication: Replication = field(default_factory=Replication)
    explain: Explain = field(default_factory=Explain)
    compare: Compare = field(default_factory=Compare)

    @classmethod
    def from_keywords(cls, **kw: Any) -> Settings:
        """Settings from flat keywords (``scan()``'s); ``holdout=share`` is replication by holdout,
        drawn from ``holdout_seed`` (without it, from ``seed``, as the keywords always did). An
        unknown keyword is refused by name."""
        kw = dict(kw)
        holdout, holdout_seed = kw.pop("holdout", None), kw.pop("holdout_seed", None)
        parts: dict[str, dict] = {name: {} for name in _SECTIONS}
        owner = _owners()
        for key, value in kw.items():
            if key not in owner:
                raise input_error(MSG_UNKNOWN_SETTING, key=key, known=", ".join(sorted(flat_keys())))
            parts[owner[key]][key] = value
        if holdout is not None:
            seed = holdout_seed if holdout_seed is not None else kw.get("seed")
            parts["replication"] = {"kind": "holdout", "share": holdout, "seed": seed}
        elif holdout_seed is not None:
            raise input_error(MSG_HOLDOUT_SEED)
        return cls(**{name: _SECTIONS[name](**values) for name, values in parts.items()})

    @classmethod
    def from_sections(cls, sections: Mapping[str, Any]) -> Settings:
        """Settings from a plan's sections (``scan``, ``statistics``, ``explain``, ``replication``);
        each section's unknown keys are refused by name."""
        scan = _section(sections, "scan", scan_keys())
        parts: dict[str, dict] = {name: {} for name in _SECTIONS}
        for name in SCAN_SECTIONS:
            parts[name] = {k: v for k, v in scan.items() if k in section_keys(name)}
        parts["statistics"] = _section(sections, "statistics", section_keys("statistics"))
        parts["explain"] = _section(sections, "explain", section_keys("explain"))
        rep = sections.get("replication") or {}
        kind = rep.get("kind", "none") if isinstance(rep, Mapping) else "none"
        rep_keys = ("kind",) + REPLICATION_FIELDS[kind] if kind in REPLICATION_FIELDS else section_keys("replication")
        parts["replication"] = _section(sections, "replication", rep_keys)
        if kind == "holdout" and "seed" not in parts["replication"]:  # a plan written before the holdout's own seed
            parts["replication"]["seed"] = parts["statistics"].get("seed")
        parts["compare"] = _section(sections, "compare", section_keys("compare"))
        return cls(**{name: _SECTIONS[name](**values) for name, values in parts.items()})

    @classmethod
    def resolve(cls, settings: Settings | None, keywords: Mapping[str, Any]) -> Settings:
        """The settings of a call that takes a ``Settings``, its fields as keywords, or both (the
        keywords change those fields): how ``scan``, ``scan_duckdb`` and ``compare`` read theirs."""
        if settings is None:
            return cls.from_keywords(**keywords)
        if not isinstance(settings, Settings):
            raise DivergenceInputError(f"settings must be a divergence Settings; got {type(settings).__name__}.")
        return settings.replace(**keywords) if keywords else settings

    def keywords(self, *sections: str) -> dict:
        """Flat keywords of the given sections (default roles, slicing, mining, statistics)."""
        out: dict = {}
        for name in sections or ("roles", "slicing", "mining", "statistics"):
            part = getattr(self, name)
            for f in fields(part):
                out[f.name] = getattr(part, f.name)
        return out

    def scan_section(self) -> dict:
        """The plan's ``scan`` section: settings that differ from the defaults, as plain data."""
        out: dict = {}
        for name in SCAN_SECTIONS:
            out.update(_changed(getattr(self, name)))
        return out

    def sections(self) -> dict:
        """The plan's sections (each empty one left out), as plain data."""
        out = {"scan": self.scan_section(), "statistics": _changed(self.statistics),
               "explain": _changed(self.explain), "replication": self.replication.to_dict(),
               "compare": _changed(self.compare)}
        return {k: v for k, v in out.items() if v or k == "scan"}

    def replace(self, **kw: Any) -> Settings:
        """A copy with some flat keywords changed (validated again); the replication is kept
        unless ``holdout`` is among them."""
        base = {k: v for k, v in self.keywords().items()}
        base.update(kw)
        new = Settings.from_keywords(**base)
        return dataclasses.replace(new, replication=self.replication if "holdout" not in kw else new.replication,
                                   explain=self.explain, compare=self.compare)


def _section(sections: Mapping[str, Any], name: str, known: Sequence[str]) -> dict:
    value = sections.get(name) or {}
    if not isinstance(value, Mapping):
        raise input_error(MSG_NOT_MAPPING, name=name, value=value)
    for key in value:
        if key not in known:
            raise input_error(MSG_UNKNOWN_KEY, key=key, where=f" in the plan's {name} section",
                        known=", ".join(known))
    return dict(value)


#: settings a plan always writes, default or not: the numbers a reader checks first, and a
#: plan that keeps its meaning if a default changes
ALWAYS_WRITTEN = {"Mining": ("min_support",), "Statistics": ("confidence", "correction", "family", "bootstrap", "seed")}


def _changed(part: Any) -> dict:
    """The fields of a section that differ from its defaults (and those always written), as
    plain data."""
    defaults = _defaults(type(part))
    always = ALWAYS_WRITTEN.get(type(part).__name__, ())
    out: dict = {}
    for f in fields(part):
        v = getattr(part, f.name)
        if f.name in defaults and f.name not in always and _same(defaults[f.name], v):
            continue
        out[f.name] = _plain(v)
    return out


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:  # no attributes chosen (None) is not an empty choice
        return a is None and b is None
    if isinstance(a, tuple) or isinstance(b, tuple):
        return list(a or ()) == list(b or ())
    return a == b


def _plain(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x
