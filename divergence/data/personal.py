"""Personal identifiers: columns that hold a person's name, contact details or identity numbers.

A slice such as ``first_name=Vikor`` is no cohort: it puts a person's name on a projected screen and in an
exported report. The attribute screen (:mod:`divergence.data.columns`) leaves such columns out of the default
attributes, each with its reason; a user who names one in ``attributes`` keeps it. Two rules, both read
from the table alone and the same on every engine (the engines screen a sample of rows):

- **by header**: the header's words, whatever their case and separators (``first_name``, ``FirstName``,
  ``given name``, ``E-Mail``, ``IPAddress``), read as whole words, never as substrings: ``ip`` is not
  in ``zip`` or ``relationship``, and ``last_review_score`` or ``region_first`` are no names. The word
  for the identifier comes last, after any words before it (``customer_email``, ``src_ip``) and before
  only words such as ``address``, ``number`` or ``1`` (``phone_no``, ``address_line_2``): ``email_opened``,
  ``phone_type`` and ``passport_country`` stay attributes. A name needs a person's or a name part's word
  before it (``patient_last_name``), so ``product_name`` and ``country_name`` stay.
- **by value**, whatever the header: email addresses, IP addresses, social security numbers, phone numbers
  and street addresses, on at least :data:`VALUE_SHARE` of the distinct values read (street addresses
  :data:`STREET_SHARE`).

A column with at most :data:`FEW_VALUES` distinct values is a category whatever its header (``address``
holding ``U``/``R`` in the UCI student table, ``mobile`` holding yes/no, ``phone`` holding iPhone/Android),
and a header naming a person's name needs values with letters (a numeric ``last`` is a price).
"""
from __future__ import annotations

import ipaddress
import re

import pandas as pd

from .column_kinds import DATE, is_text, text_sample

__all__ = ["PERSONAL", "OVERRIDES", "FEW_VALUES", "VALUE_SHARE", "STREET_SHARE", "personal_kind", "header_kind",
           "value_kind", "personal_notes", "KEEP_IT"]

#: the screen's kind for these columns (:data:`divergence.data.columns.KINDS`)
PERSONAL = "personal identifier"
#: kinds of the other shape rules a personal identifier's reason replaces (it says more)
OVERRIDES = ("free text", "name", "identifier")
#: a column with at most this many distinct values is a category, whatever its header or values
FEW_VALUES = 10
#: share of the distinct values read that must have the identifier's shape
VALUE_SHARE = 0.9
#: ... for street addresses (written more loosely: "Apt 4, 12 Main St", "PO Box 7")
STREET_SHARE = 0.8
#: what the note adds: these columns come back only by name
KEEP_IT = "; name it in attributes to keep it"

# ------------------------------------------------------------------------------------------- by header
_PREFIX = r"(?:\w+ )*"
_SUFFIX = r"(?: (?:address|addr|number|numbers|num|no|nr|id|line|digits|primary|secondary|\d+))*"
#: words that make an "address" no street address (a MAC, web or wallet address)
_NOT_STREET = "mac|web|url|uri|ip|email|wallet|memory|hardware|ethernet|bluetooth|network|server|internet|bitcoin|crypto|contract|host|node"
#: a person: the words before "name" that make it a person's name
_PERSON = ("customer|client|patient|person|persons|people|employee|staff|contact|student|pupil|applicant|candidate|"
           "member|owner|holder|cardholder|account holder|passenger|respondent|participant|defendant|offender|inmate|"
           "guardian|parent|mother|father|spouse|partner|beneficiary|recipient|sender|buyer|seller|driver|borrower|"
           "tenant|user|insured|policyholder|subscriber|agent|doctor|physician|nurse|teacher|manager|author|victim|"
           "suspect|witness|officer|emergency contact|caller|reviewer|employer contact|child|kin|next of kin")
#: the part of a name: first, last, ...
_PART = "first|last|given|middle|family|maiden|full|sur|nick|fore|christian|display|legal|preferred|birth|screen|real"
_NAME_WORD = r"(?:name|names|nm)"

#: (what the column holds, the header's words in full) in the order tried; the first that matches says
_HEADER_RULES: tuple[tuple[str, re.Pattern], ...] = tuple((what, re.compile(pattern)) for what, pattern in (
    ("an email address", _PREFIX + r"(?:email|emails)" + _SUFFIX),
    ("an IP address", _PREFIX + r"ip" + _SUFFIX),
    ("a phone number", _PREFIX + r"(?:phone|phones|telephone|tel|mobile|cellphone|fax|msisdn|cell (?:number|num|no|nr))"
     + _SUFFIX),
    ("a user agent", _PREFIX + r"user agent" + _SUFFIX),
    ("a social security number", _PREFIX + r"(?:ssn|ssns|social security|social insurance)" + _SUFFIX),
    ("a national identity number", _PREFIX + r"(?:national (?:insurance|id|identity|identification)|tax id|taxpayer id)"
     + _SUFFIX),
    ("a passport number", _PREFIX + r"passports?" + _SUFFIX),
    ("a driving licence number", _PREFIX + r"(?:driver|drivers|driving) licen[cs]e" + _SUFFIX),
    ("a street address", rf"(?:(?!(?:{_NOT_STREET})\b)\w+ )*(?:address|addr|street|streets|street name)" + _SUFFIX),
    ("a person's name", rf"(?:(?:{_PERSON}) )?(?:(?:{_PART}) )?{_NAME_WORD}(?: \d+)?"),
    ("a person's name", rf"{_NAME_WORD} (?:{_PART})(?: \d+)?"),
    ("a person's name", r"(?:first|last|surname|surnames|forename|forenames)(?: \d+)?"),
))
_NAMES = "a person's name"

#: one-word headers read as their words
_COMPOUND = {
    "firstname": "first name", "lastname": "last name", "fullname": "full name", "givenname": "given name",
    "middlename": "middle name", "familyname": "family name", "maidenname": "maiden name", "username": "user name",
    "nickname": "nick name", "displayname": "display name", "fname": "first name", "lname": "last name",
    "emailaddress": "email address", "emailaddr": "email address", "ipaddress": "ip address",
    "ipaddr": "ip address", "phonenumber": "phone number", "phoneno": "phone number", "telno": "tel number",
    "telephonenumber": "telephone number", "mobilenumber": "mobile number", "mobileno": "mobile number",
    "streetaddress": "street address", "streetname": "street name", "useragent": "user agent",
    "addressline": "address line", "homeaddress": "home address", "nextofkin": "next of kin",
    "passportno": "passport number", "passportnumber": "passport number",
}
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_E_MAIL = re.compile(r"(?<![A-Za-z])e[-_ ]?mail", re.IGNORECASE)
_IP_VERSION = re.compile(r"ipv[46]", re.IGNORECASE)


def header_words(name: object) -> str:
    """The header as lower-case words split at separators, case changes and digits (``IPAddress`` ->
    ``ip address``, ``E-Mail`` -> ``email``, ``address_line_2`` -> ``address line 2``)."""
    text = _IP_VERSION.sub("ip", _E_MAIL.sub("email", str(name)))
    words = []
    for w in _WORD.findall(text):
        words.extend(_COMPOUND.get(w.lower(), w.lower()).split())
    return " ".join(words)


def header_kind(name: object) -> str | None:
    """What the header says the column holds (``"a person's name"``, ``"an email address"`` ...), or None."""
    words = header_words(name)
    for what, pattern in _HEADER_RULES:
        if pattern.fullmatch(words):
            return what
    return None


# ------------------------------------------------------------------------------------------- by value
_EMAIL = re.compile(r"^[\w.%+'\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}$")
_SSN = re.compile(r"^\d{3}-\d{2}-\d{4}$")
_PHONE = re.compile(r"^\+?[\d\s().\-/]+(?:\s*(?:x|ext\.?)\s*\d{1,5})?$", re.IGNORECASE)
_STREET_TYPES = ("street|st|avenue|ave|av|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|place|pl|way|terrace|ter|"
                 "circle|cir|parkway|pkwy|highway|hwy|square|sq|trail|trl|crescent|cres|close|alley|aly|plaza|plz|loop|"
                 "pike|mews|grove|gardens|row|walk|route|rte|expressway|expy|freeway|fwy|turnpike|tpke|causeway|"
                 "strasse|straße|rue|via|calle|avenida")
_UNITS = "(?:min|mins|minute|minutes|hr|hrs|hour|hours|day|days|week|weeks|mile|miles|km|kms|block|blocks|sq|square)"
#: a house number, one to five words (not a unit: "5 minute walk", "100 sq ft"), a street type; or a PO box
_STREET = re.compile(rf"\b\d{{1,6}}[A-Za-z]?(?:-\d+)?,?\s+(?!{_UNITS}\b)(?:[^\W\d_][\w.'’\-]*\s+){{1,5}}"
                     rf"(?:{_STREET_TYPES})\b|^\s*p\.?\s*o\.?\s*box\s+\d+", re.IGNORECASE)
_PLURAL = {"an email address": "email addresses", "an IP address": "IP addresses",
           "a social security number": "social security numbers", "a phone number": "phone numbers",
           "a street address": "street addresses"}


def _is_ip(s: str) -> bool:
    try:
        ipaddress.ip_address(s)
    except ValueError:
        return False
    return True


def _is_phone(s: str) -> bool:
    """Seven to fifteen digits written as a phone number: a leading +, a bracketed area code, three
    or more groups, or ``555-1234``; never a date, a range (``10000-20000``) or a number with
    thousands separators (``1.234.567``)."""
    if not _PHONE.match(s) or DATE.match(s):
        return False
    main = re.split(r"(?i)\s*(?:x|ext\.?)\s*\d", s)[0]
    groups = re.findall(r"\d+", main)
    digits = sum(len(g) for g in groups)
    if not 7 <= digits <= 15:
        return False
    if len(groups) > 1 and all(len(g) == 3 for g in groups[1:]) and len(groups[0]) <= 3 and "(" not in main \
            and not main.startswith("+") and len(set(re.findall(r"[^\d]+", main))) == 1:
        return False  # 1.234.567 or 12 345 678: a number with thousands separators
    if main.startswith("+") or "(" in main or len(groups) >= 3:
        return True
    return bool(re.fullmatch(r"\d{3}[-.\s]\d{4}", main))


def _value_shape(s: str) -> str | None:
    """What one value is written as (``"an email address"`` ...), or None."""
    s = s.strip()
    if not s or len(s) > 200:
        return None
    if "@" in s:
        return "an email address" if _EMAIL.match(s) else None
    if _SSN.match(s):
        return "a social security number"
    if (":" in s or s.count(".") == 3) and _is_ip(s):
        return "an IP address"
    if _is_phone(s):
        return "a phone number"
    if _STREET.search(s):
        return "a street address"
    return None


def _shapes(values: list[str]) -> tuple[str, float] | None:
    """The commonest shape among the values and its share, or None when none has one."""
    counts: dict[str, int] = {}
    for v in values:
        shape = _value_shape(v)
        if shape is not None:
            counts[shape] = counts.get(shape, 0) + 1
    if not counts:
        return None
    best = max(counts, key=counts.__getitem__)
    return best, counts[best] / len(values)


def value_kind(present: pd.Series) -> tuple[str, str] | None:
    """(what, reason) for text whose values are email addresses, IP addresses, social security numbers,
    phone numbers or street addresses, or None: read on the first 50 values, then on a sample of up to
    2,000 distinct values."""
    if not _head_shaped(present):
        return None
    sample = text_sample(present)
    if len(sample) <= FEW_VALUES:
        return None
    found = _shapes(sample)
    if found is None:
        return None
    what, share = found
    if share < (STREET_SHARE if what == "a street address" else VALUE_SHARE):
        return None
    return what, f"{_PLURAL[what]} (by its values: {share:.0%} of the {len(sample):,} distinct values read)"


def _head_shaped(series: pd.Series) -> bool:
    """Half the first 50 values present have one shape: the cheap test most columns end at."""
    head = series.iloc[:500].to_numpy()
    head = head[~pd.isna(head)][:50]
    if len(head) == 0:
        head = series.dropna().to_numpy()[:50]
    first = _shapes([str(v) for v in head.tolist()])
    return first is not None and first[1] >= 0.5


# ------------------------------------------------------------------------------------------- the rule
def personal_kind(name: object, series: pd.Series, min_rows: int) -> tuple[str, str] | None:
    """(:data:`PERSONAL`, reason) for a column holding a personal identifier, by its header or by its values,
    or None; a column with fewer than ``min_rows`` values present is kept (the screen's ``MIN_ROWS``)."""
    what = header_kind(name)
    if what is None and not (is_text(series) and _head_shaped(series)):
        return None  # most columns end here, before reading every row
    present = series.dropna()
    if len(present) < min_rows:
        return None
    if what is not None and _enough_values(present) and (what != _NAMES or _has_letters(present)):
        return PERSONAL, f"{what} (by its header)"
    if is_text(series):
        found = value_kind(present)
        if found is not None:
            return PERSONAL, found[1]
    return None


def _enough_values(present: pd.Series) -> bool:
    """More than FEW_VALUES distinct values."""
    return bool(present.iloc[:10_000].nunique() > FEW_VALUES or present.nunique() > FEW_VALUES)


def _has_letters(present: pd.Series) -> bool:
    """Text, most of whose values (of a sample) hold a letter: a name, not a number."""
    if not is_text(present):
        return False
    sample = text_sample(present, 500)
    return sum(1 for s in sample if re.search(r"[^\W\d_]", s)) >= VALUE_SHARE * len(sample)


def personal_notes(columns: list[str], left_out: dict[str, str]) -> list[str]:
    """One note per column: the reason, and that naming it in attributes keeps it."""
    return [f"Left out column '{c}' from the attributes: {left_out[c]}{KEEP_IT}." for c in columns]
