"""Every setting at and just past its bounds (issue 32 point 6), generated from the settings model as
scikit-learn's parameter tests generate theirs: each numeric setting at its bounds (taken), a step
past them (refused), and the values no one means (NaN, infinities, 1e308, a 5,000-digit integer, a
fraction for a count, text, a list); each word setting with a word of its own and one that is not.
Taken or refused, never another exception: a refusal is one DivergenceInputError line that names the
setting. The command line refuses the same values past the bounds in one line."""
from __future__ import annotations

import math
from dataclasses import fields

import pytest

from divergence import DivergenceInputError, Settings
from divergence.settings import _SECTIONS, Integer, OneOf, Real, flat_keys

ODD = [float("nan"), float("inf"), float("-inf"), 1e308, -1e308, 10 ** 5000, "abc", [1, 2], object()]


def _numeric_settings():
    for owner, section in _SECTIONS.items():
        for f in fields(section):
            kind = f.metadata.get("kind")
            if isinstance(kind, (Real, Integer, OneOf)):
                yield f"{owner}.{f.name}", kind, f


FIELDS = sorted(_numeric_settings(), key=lambda nkf: nkf[0])
SETTINGS = [(name, kind) for name, kind, _ in FIELDS]
FLAT = set(flat_keys())


def _field(name: str):
    return next(f for n, _, f in FIELDS if n == name)


def _cases(kind) -> list[tuple[object, bool]]:
    """(value, taken) at and past the kind's bounds."""
    out: list[tuple[object, bool]] = []
    if isinstance(kind, OneOf):
        out += [(w, True) for w in kind.words] + [("no-such-word", False), (3, False)]
        return out
    if isinstance(kind, Real):
        if kind.low is not None:
            lo = float(kind.low)
            out += [(lo, not kind.low_open and lo not in kind.none_at or lo in kind.none_at),
                    (math.nextafter(lo, -math.inf), math.nextafter(lo, -math.inf) in kind.none_at),
                    (math.nextafter(lo, math.inf), True)]
        if kind.high is not None:
            hi = float(kind.high)
            out += [(hi, not kind.high_open), (math.nextafter(hi, math.inf), False),
                    (math.nextafter(hi, -math.inf), kind.low is None or math.nextafter(hi, -math.inf) > kind.low)]
        return out
    if kind.low is not None:
        out += [(kind.low, not (kind.gap and kind.gap[0] <= kind.low <= kind.gap[1])), (kind.low - 1, False)]
    if kind.high is not None:
        out += [(kind.high, True), (kind.high + 1, False)]
    if kind.gap is not None:
        out += [(kind.gap[0], False), (kind.gap[1], False), (kind.gap[0] - 1, kind.low is None or kind.gap[0] - 1 >= kind.low),
                (kind.gap[1] + 1, True)]
    out += [(2.5, False)]
    return out


@pytest.mark.parametrize("name, kind", SETTINGS, ids=[n for n, _ in SETTINGS])
def test_every_setting_at_and_past_its_bounds(name, kind):
    f = _field(name)
    label = f.metadata.get("label") or f.name
    for value, taken in _cases(kind) + [(v, None) for v in ODD]:
        try:
            kind.check(value, label)
        except DivergenceInputError as e:
            text = str(e)
            assert taken is not True, f"{name}={value!r} refused: {text}"
            assert label in text and "\n" not in text and len(text) < 1_000, text
            continue
        except Exception as e:  # noqa: BLE001 - the point: no other exception
            pytest.fail(f"{name}={value!r}: {type(e).__name__}: {e}")
        assert taken is not False, f"{name}={value!r} was taken"
        if taken is None:  # an odd value taken must be one the kind means to take (None: no limit)
            assert isinstance(value, (int, float)) and not isinstance(value, bool), (name, value)


def test_settings_from_keywords_refuse_past_the_bounds_by_name():
    """The same through the public path (Settings.from_keywords, what scan() reads)."""
    for name, kind in SETTINGS:
        key = _field(name).name
        if key not in FLAT:  # a section's own field (replication's share is holdout=)
            continue
        bad = [v for v, taken in _cases(kind) if taken is False]
        for value in bad[:2]:
            with pytest.raises(DivergenceInputError) as e:
                Settings.from_keywords(**{key: value})
            assert "\n" not in str(e.value)


def test_the_command_line_refuses_past_the_bounds_in_one_line(tmp_path, capsys):
    import pandas as pd

    from divergence.cli.cli import main

    csv = tmp_path / "t.csv"
    pd.DataFrame({"a": ["x", "y", "z"] * 40, "y": [0, 1] * 60, "pred": [1, 0, 0] * 40}).to_csv(csv, index=False)
    roles = ["--target", "y", "--prediction", "pred", "--positive", "1", "--metric", "fpr"]
    tried = 0
    for name, kind in SETTINGS:
        f = _field(name)
        option = f.metadata.get("option") or "--" + f.name.replace("_", "-")
        bad = [v for v, taken in _cases(kind) if taken is False and not isinstance(v, (list, object.__class__))]
        for value in bad[:1]:
            try:
                code = main(["scan", str(csv), *roles, option, str(value), "--output", str(tmp_path / "o.csv")])
            except SystemExit as e:  # argparse: not an option of the scan command, or its own one-line refusal
                code = e.code
            err = capsys.readouterr().err
            if "unrecognized arguments" in err or "invalid choice" in err and option not in err:
                continue  # a setting the scan command does not offer (compare's, explain's)
            tried += 1
            assert code == 2, (option, value, err)
            lines = [line for line in err.strip().splitlines() if line]
            assert "Traceback" not in err and lines, (option, value, err)
    assert tried >= 10


def _names_it(text: str, label: str, value: object) -> bool:
    """The message names the setting, or the value at fault (its start: long values are cut)."""
    if label in text or label.replace("_", " ") in text:
        return True
    parts = list(value) if isinstance(value, (list, tuple)) else [value]
    for part in parts:  # the value, or the element of it at fault
        try:
            start = str(part)[:8]
        except ValueError:  # a 5,000-digit integer has no str()
            continue
        if start and start in text:
            return True
    return False


ALL_FIELDS = sorted(((f"{owner}.{f.name}", f) for owner, section in _SECTIONS.items() for f in fields(section)
                     if f.metadata.get("kind") is not None), key=lambda nf: nf[0])


@pytest.mark.parametrize("name, f", ALL_FIELDS, ids=[n for n, _ in ALL_FIELDS])
def test_every_setting_takes_or_refuses_odd_values_in_one_line(name, f):
    """Every setting of every kind (support, per-metric deltas, gamma, bins, columns, words, flags):
    NaN, infinities, huge numbers, a 5,000-digit integer, text, lists, nested dicts, an object, a
    megabyte of text are taken or refused in one line naming the setting, never another exception."""
    kind, label = f.metadata["kind"], f.metadata.get("label") or f.name
    for value in ODD + [None, True, -1, 0, {"x": {"y": 1}}, "x" * 1_000_000, ["a"] * 3, ("a", 1)]:
        try:
            kind.check(value, label)
        except DivergenceInputError as e:
            text = str(e)
            assert _names_it(text, label, value) and "\n" not in text and len(text) < 1_000, (name, text[:200])
        except Exception as e:  # noqa: BLE001 - the point: no other exception
            pytest.fail(f"{name}={repr(value)[:40]}: {type(e).__name__}: {str(e)[:200]}")


@pytest.mark.parametrize("value, taken", [(0, False), (-0.1, False), (1e-300, True), (0.02, True), (1, True),
                                          (1.5, False), (2, True), (float("nan"), False), ("109/6172", True),
                                          ("1/0", False), (10 ** 5000, False)],
                         ids=lambda v: "5000-digits" if isinstance(v, int) and v > 10 ** 100 else repr(v)[:20])
def test_the_support_at_and_past_its_bounds(value, taken):
    try:
        Settings.from_keywords(min_support=value)
    except DivergenceInputError as e:
        assert not taken, str(e)
        assert "min_support" in str(e) and "\n" not in str(e)
    else:
        assert taken, value
