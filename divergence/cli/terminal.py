"""What the command line prints, made inert: text from the data (a column name, a value) never drives
the terminal (escape sequences) nor disguises itself (direction overrides, zero-width characters)."""
from __future__ import annotations

import re

__all__ = ["inert", "Inert"]

#: control characters (C0 but tab and line feed, DEL, C1): a terminal would act on them (clear the
#: screen, set the window's title, recolour), so text from the data never prints them as they are
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: beyond ASCII, the characters that change how the text around them reads without showing themselves:
#: format characters (direction overrides and isolates U+202A-U+202E, U+2066-U+2069, zero-width space
#: and joiners, the byte-order mark, tags), line and paragraph separators, lone surrogates
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
#: letters and marks that draw nothing (Hangul fillers, the combining grapheme joiner)
_BLANK = frozenset("\u034f\u115f\u1160\u3164\uffa0")
_NON_ASCII = re.compile("[^\x00-\x7f]")


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _hidden(match: re.Match) -> str:
    import unicodedata

    ch = match.group(0)
    return _escape(ch) if ch in _BLANK or unicodedata.category(ch) in _HIDDEN_CATEGORIES else ch


def inert(text: str) -> str:
    """``text`` with every character that could drive the terminal or disguise what it shows written
    as its escape (ESC as ``\\x1b``, RIGHT-TO-LEFT OVERRIDE as ``\\u202e``): an itemset printed from the
    data reads as it is stored, never reversed, hidden or recoloured."""
    text = _CONTROL.sub(lambda m: _escape(m.group(0)), text)
    return text if text.isascii() else _NON_ASCII.sub(_hidden, text)


class Inert:
    """A text stream that writes what :func:`inert` escapes as its escape: a column name or a value
    printed by the CLI shows what it holds and cannot drive the terminal."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(inert(text))

    def __getattr__(self, name):
        return getattr(self._stream, name)
