"""Slice plans: the settings of a scan saved as a file (YAML or JSON) and read back.

A plan names the column roles, the attributes and their bins, the thresholds and the
statistics settings, so that the same analysis can be re-run on the next evaluation
file (a standing report) or reopened in the dashboard. Reading and writing live here
only, so the format can grow in one place.

Format (YAML shown; JSON holds the same mapping)::

    divergence_plan: 1
    kind: exploratory            # or pre-registered
    data: {source: built-in}     # where the rows came from (for the record only)
    scan: {target: defaulted, prediction: predicted_default, positive: 'yes',
           metrics: [fpr, fnr], attributes: [age, sex], bins: {age: [30, 50]},
           min_support: 0.02, max_length: 3}     # keyword arguments of divergence.scan
    statistics: {delta: 0.05, confidence: 0.95, correction: bh, bootstrap: 200}
    explain: {redundancy: 0.01}
    replication: {kind: holdout, share: 0.3}     # or split (column, confirm_values), file (name)
    compare: {reference: previous_default}       # optional: also compare with a reference model
                                                 # (or reference_score, reference_threshold; metrics)
"""
from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from ..errors import DivergenceInputError, shown

__all__ = ["SlicePlan", "save_plan", "load_plan", "dump_plan", "parse_plan", "plan_hash", "PLAN_VERSION"]

PLAN_VERSION = 1
PlanKind = Literal["exploratory", "pre-registered"]
PLAN_KINDS = ("exploratory", "pre-registered")

DATA_KEYS = ("source", "file", "rows")
_TOP_KEYS = ("divergence_plan", "kind", "created", "hash", "data", "scan", "statistics", "explain",
             "replication", "slices", "compare")
#: the sections that hold settings (their keys are the fields of divergence.settings.Settings)
SETTINGS_SECTIONS = ("scan", "statistics", "explain", "replication", "compare")


@dataclass(frozen=True)
class SlicePlan:
    """The settings of one analysis (scan, statistics, explanation, replication, comparison:
    the sections of :class:`divergence.settings.Settings`, validated by it), where the data
    came from, the plan's kind and the slices always reported."""

    scan: dict
    statistics: dict = field(default_factory=dict)
    explain: dict = field(default_factory=dict)
    replication: dict = field(default_factory=dict)
    data: dict = field(default_factory=dict)
    kind: PlanKind = "exploratory"
    #: when the plan was first saved (ISO 8601, UTC); set by save_plan/dump_plan if missing
    created: str | None = field(default=None, compare=False)
    #: slices always reported, whatever their statistics (itemsets as text)
    slices: list = field(default_factory=list)
    #: the content hash the file stated when it was read (None for a new plan)
    saved_hash: str | None = field(default=None, compare=False)
    #: a comparison with a reference model (reference, reference_score, reference_threshold,
    #: metrics); empty: none
    compare: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        from ..settings import Settings

        _check_section("data", self.data, DATA_KEYS)
        settings = Settings.from_sections({name: getattr(self, name) for name in SETTINGS_SECTIONS})
        object.__setattr__(self, "_settings", settings)
        if self.kind not in PLAN_KINDS:
            raise DivergenceInputError(
                f"Plan kind must be {' or '.join(PLAN_KINDS)}; got {shown(self.kind)}."
            )

    @property
    def settings(self):
        """The plan's settings as one validated :class:`divergence.settings.Settings`."""
        return self._settings  # type: ignore[attr-defined]

    @classmethod
    def from_settings(cls, settings, *, data: Mapping | None = None, kind: PlanKind = "exploratory",
                      slices: list | None = None, created: str | None = None) -> SlicePlan:
        """The plan of these settings: each section holds what differs from the defaults."""
        sections = settings.sections()
        return cls(data=dict(data or {}), kind=kind, slices=list(slices or []), created=created,
                   **{name: sections.get(name, {}) for name in SETTINGS_SECTIONS})

    def to_dict(self) -> dict:
        """The plan as plain data (numbers, text, lists, mappings), ready for YAML or JSON."""
        out: dict = {"divergence_plan": PLAN_VERSION, "kind": self.kind}
        if self.created:
            out["created"] = self.created
        for name in ("data", "scan", "statistics", "explain", "replication", "compare"):
            section = getattr(self, name)
            if section:
                out[name] = _plain(section)
        if self.slices:
            out["slices"] = [str(s) for s in self.slices]
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SlicePlan:
        """A plan from plain data (as written by :meth:`to_dict`), checked key by key."""
        if not isinstance(d, Mapping):
            raise DivergenceInputError("A slice plan must be a mapping of sections (scan, statistics, ...).")
        unknown = [k for k in d if k not in _TOP_KEYS]
        if unknown:
            raise DivergenceInputError(
                f"Unknown section {shown(unknown[0])} in the plan; known sections: {', '.join(_TOP_KEYS)}."
            )
        version = d.get("divergence_plan", PLAN_VERSION)
        if version != PLAN_VERSION:
            raise DivergenceInputError(f"Plan version {shown(version)} is not supported (this is version {PLAN_VERSION}).")
        if "scan" not in d:
            raise DivergenceInputError("The plan has no 'scan' section (the columns and thresholds).")
        sections = {}
        for name in ("scan", "statistics", "explain", "replication", "data", "compare"):
            value = d.get(name) or {}
            if not isinstance(value, Mapping):
                raise DivergenceInputError(f"Section {shown(name)} of the plan must be a mapping; got {shown(value)}.")
            sections[name] = dict(value)
        slices = d.get("slices") or []
        if not isinstance(slices, (list, tuple)) or not all(isinstance(x, str) for x in slices):
            raise DivergenceInputError("The plan's 'slices' must be a list of itemsets written as text.")
        created = d.get("created")
        return cls(kind=d.get("kind", "exploratory"), created=None if created is None else str(created),
                   slices=list(slices), saved_hash=d.get("hash"), **sections)


def _check_section(name: str, section: Mapping, known) -> None:
    if not isinstance(section, Mapping):
        raise DivergenceInputError(f"Section {shown(name)} of the plan must be a mapping; got {shown(section)}.")
    for key in section:
        if key not in known:
            raise DivergenceInputError(
                f"Unknown key {shown(key)} in the plan's {name} section; known keys: {', '.join(known) or 'none'}."
            )


def _plain(x: Any) -> Any:
    """Numpy scalars, tuples and the like as plain Python values (YAML's safe subset)."""
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    numpy = type(x).__module__ == "numpy"  # numpy is not imported to read a plan
    if isinstance(x, (list, tuple)) or (numpy and hasattr(x, "tolist") and getattr(x, "ndim", 0) > 0):
        return [_plain(v) for v in x]
    if numpy and hasattr(x, "item"):
        return _plain(x.item())
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    return str(x)


def plan_hash(plan: SlicePlan) -> str:
    """SHA-256 of the plan's content (every section, not its creation time or stated hash)."""
    import hashlib

    data = plan.to_dict()
    data.pop("created", None)
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def dump_plan(plan: SlicePlan, *, format: Literal["yaml", "json"] = "yaml", stamp: bool = False) -> str:
    """The plan as YAML (default) or JSON text, with its content hash; ``stamp`` also records
    the creation time if the plan has none (as when it is saved for the first time)."""
    import dataclasses
    import datetime

    if stamp and not plan.created:
        now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
        plan = dataclasses.replace(plan, created=now.isoformat().replace("+00:00", "Z"))
    data = plan.to_dict()
    data["hash"] = plan_hash(plan)
    if format == "json":
        return json.dumps(data, indent=2) + "\n"
    if format != "yaml":
        raise DivergenceInputError(f"Plan format must be 'yaml' or 'json'; got {shown(format)}.")
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


#: a plan is a few hundred bytes: a file above this is refused before it is parsed
MAX_PLAN_BYTES = 1 << 20
#: YAML nodes (scalars, lists, mappings) and nesting a plan may hold
MAX_PLAN_NODES = 100_000
MAX_PLAN_DEPTH = 32


#: libyaml's parser where PyYAML was built with it (about 20 times faster), else the Python one
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _check_events(text: str) -> None:
    """Refuse aliases (``*name``: a few hundred bytes of nested aliases expand to gigabytes, the
    "billion laughs"; merge keys ``<<: *name`` too), and more values or nesting than a plan
    needs, from the parser's events: nothing is built, so a hostile plan costs what its bytes cost."""
    nodes = depth = 0
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.AliasEvent):
            raise DivergenceInputError(
                f"The plan file uses a YAML alias ({shown('*' + str(event.anchor))[1:-1]}, line "
                f"{event.start_mark.line + 1}): aliases are not allowed in a plan; write the value out.")
        if isinstance(event, (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            nodes += 1
            if nodes > MAX_PLAN_NODES:
                raise DivergenceInputError(f"The plan file holds more than {MAX_PLAN_NODES:,} values: not a slice "
                                           "plan.")
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > MAX_PLAN_DEPTH:
                raise DivergenceInputError(f"The plan file nests values more than {MAX_PLAN_DEPTH} deep: not a "
                                           "slice plan.")
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1


def parse_plan(text: str | bytes) -> SlicePlan:
    """A plan from YAML or JSON text (JSON is YAML too). A file larger than a megabyte, with a
    YAML alias, or with more values or nesting than a plan needs is refused in one line."""
    if len(text) > MAX_PLAN_BYTES:
        raise DivergenceInputError(f"The plan file is {len(text):,} bytes, more than a slice plan's "
                                   f"{MAX_PLAN_BYTES:,}: not a slice plan.")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise DivergenceInputError("The plan file is not UTF-8 text.") from None
    try:
        _check_events(text)
        data = yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader, on text without aliases
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        # libyaml marks an error at the end of the text on the line after it: the last line then
        at = f" (line {min(where.line + 1, text.rstrip(chr(10)).count(chr(10)) + 1)})" if where is not None else ""
        raise DivergenceInputError(f"The plan file is not valid YAML or JSON{at}.") from None
    except RecursionError:
        raise DivergenceInputError(f"The plan file nests values more than {MAX_PLAN_DEPTH} deep: not a slice plan.") \
            from None
    except DivergenceInputError:
        raise
    except (ValueError, OverflowError):  # a scalar the loader cannot build: Python's 4,300-digit limit, a date
        raise DivergenceInputError("The plan file holds a value that cannot be read (a number of more than 4,300 "
                                   "digits, or an impossible date): not a slice plan.") from None
    if data is None:
        raise DivergenceInputError("The plan file is empty.")
    return SlicePlan.from_dict(data)


def save_plan(plan: SlicePlan, path: str | os.PathLike) -> Path:
    """Write a plan to ``path``: JSON when the name ends in .json, YAML otherwise."""
    from ..data.io import write_atomically

    p = Path(path)
    fmt: Literal["yaml", "json"] = "json" if p.suffix.lower() == ".json" else "yaml"
    return write_atomically(p, dump_plan(plan, format=fmt, stamp=True))


def load_plan(path: str | os.PathLike) -> SlicePlan:
    """Read a plan written by :func:`save_plan` (or by hand)."""
    p = Path(path)
    if not p.is_file():
        raise DivergenceInputError(f"Plan file '{path}' does not exist." if not p.exists() else
                                   f"Plan file '{path}' is not a regular file.")
    with open(p, "rb") as fh:
        text = fh.read(MAX_PLAN_BYTES + 1)  # never more than a plan can be
    return parse_plan(text)
