"""A raw customer export for the personal-identifier screen (issue 48), made with numpy alone.

25,000 rows: fifteen columns of personal identifiers in mixed header styles, four of them under headers
that tell nothing (``contact``, ``field_7``, ``host``, ``location``: only their values say what they
are), beside seven genuine attributes, a target and a model's predictions with a planted cohort.
First names follow a Zipf spread over 3,000 names, so that the commonest reach the default support and
most names are rare: a rule that looks for near-unique columns misses them.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

#: the fifteen columns no default scan may slice by
PERSONAL_COLUMNS = ["first_name", "LastName", "Full Name", "E-Mail", "Phone Number", "mobile", "Street Address",
                    "ip_address", "SSN", "PassportNo", "user_agent", "contact", "field_7", "host", "location"]
#: the genuine attributes, all kept
ATTRIBUTES = ["age", "sex", "region", "segment", "channel", "tenure_months", "last_review_score"]
#: where the model's false-positive rate was planted
PLANTED = "region=North, segment=Retail"

_SYLLABLES = ("an", "bel", "cor", "da", "el", "fi", "gra", "ha", "il", "jo", "ka", "lu", "ma", "ni", "or",
              "pe", "qui", "ra", "so", "ta", "ul", "vi", "wen", "xa", "yo", "zel")
_STREETS = ("Main", "Oak", "Pine", "Maple", "Cedar", "Elm", "Lake", "Hill", "Park", "Washington", "Church",
            "Mill", "River", "Spring", "Sunset", "Highland")
_TYPES = ("Street", "St", "Avenue", "Ave", "Road", "Rd", "Lane", "Drive", "Court", "Boulevard", "Way", "Place")
_AGENTS = tuple(f"Mozilla/5.0 ({os}) AppleWebKit/537.36 (KHTML, like Gecko) {browser}/{v}.0 Safari/537.36"
                for os in ("Windows NT 10.0; Win64; x64", "Macintosh; Intel Mac OS X 10_15_7", "X11; Linux x86_64",
                           "iPhone; CPU iPhone OS 17_4 like Mac OS X", "Linux; Android 14; Pixel 8")
                for browser in ("Chrome", "Edg", "OPR") for v in (120, 121, 122))


def _words(rng: np.random.Generator, count: int, syllables: int) -> list[str]:
    """``count`` distinct capitalised made-up words of ``syllables`` syllables (26 ** syllables of them exist)."""
    out: dict[str, None] = {}
    while len(out) < count:
        out["".join(rng.choice(_SYLLABLES, syllables)).capitalize()] = None
    return list(out)


def _zipf(rng: np.random.Generator, pool: list[str], n: int, s: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, len(pool) + 1) ** s
    return np.asarray(pool, dtype=object)[rng.choice(len(pool), n, p=weights / weights.sum())]


def _phones(rng: np.random.Generator, n: int, style: str) -> list[str]:
    # Python ints: formatting numpy's own integers one at a time costs ten times as much
    a, b, c = rng.integers(200, 999, n).tolist(), rng.integers(200, 999, n).tolist(), rng.integers(0, 10_000, n).tolist()
    if style == "us":
        return [f"({x}) {y}-{z:04d}" for x, y, z in zip(a, b, c)]
    if style == "dots":
        return [f"{x}.{y}.{z:04d}" for x, y, z in zip(a, b, c)]
    return [f"+44 7{x} {y}{z:04d}" for x, y, z in zip(a, b, c)]


def _streets(rng: np.random.Generator, n: int) -> list[str]:
    num, name, kind, apt = (rng.integers(1, 9999, n).tolist(), rng.choice(_STREETS, n).tolist(),
                            rng.choice(_TYPES, n).tolist(), rng.integers(1, 40, n).tolist())
    return [f"{k} {s} {t}" + (f", Apt {a}" if k % 5 == 0 else "") for k, s, t, a in zip(num, name, kind, apt)]


def personal_table(n: int = 25_000, seed: int = 48) -> pd.DataFrame:
    """The table (same rows for the same arguments)."""
    rng = np.random.default_rng(seed)
    first_pool = _words(rng, 3_000, 3)
    last_pool = _words(rng, 2_000, 4)
    first = _zipf(rng, first_pool, n, 1.0)
    last = _zipf(rng, last_pool, n, 0.9)
    emails = [f"{f.lower()}.{ln.lower()}{k}@{d}" for f, ln, k, d in
              zip(first, last, rng.integers(1, 100, n).tolist(),
                  rng.choice(["example.com", "mail.test", "post.example.org"], n).tolist())]
    ip = [f"{a}.{b}.{c}.{d}" for a, b, c, d in rng.integers(1, 255, (n, 4)).tolist()]
    # columns whose headers tell nothing: drawn from small pools, so that no value is near unique
    contact_pool = [f"{w.lower()}@{d}" for w, d in zip(_words(rng, 500, 3), rng.choice(["example.com", "shop.test"], 500))]
    phone_pool = _phones(rng, 800, "dots")
    host_pool = [f"10.{a}.{b}.{c}" for a, b, c in rng.integers(0, 255, (300, 3))]
    street_pool = _streets(rng, 600)

    age = np.clip(np.round(rng.normal(44, 14, n)), 18, 90).astype(int)
    sex = rng.choice(["Female", "Male"], n)
    region = rng.choice(["North", "South", "East", "West"], n, p=[0.3, 0.3, 0.2, 0.2])
    segment = rng.choice(["Retail", "Business", "Premium"], n, p=[0.5, 0.3, 0.2])
    channel = rng.choice(["Web", "App", "Phone", "Branch"], n)
    tenure = rng.integers(1, 120, n)
    review = rng.integers(1, 6, n)
    churned = rng.random(n) < 0.25
    planted = (region == "North") & (segment == "Retail")
    flip = np.where(churned, rng.random(n) < 0.2, rng.random(n) < np.where(planted, 0.3, 0.06))
    return pd.DataFrame({
        "customer_id": rng.choice(10_000_000, n, replace=False) + 1_000_000,  # distinct, not a 10^7 shuffle
        "first_name": first,
        "LastName": last,
        "Full Name": [f"{f} {ln}" for f, ln in zip(first, last)],
        "age": age,
        "E-Mail": emails,
        "Phone Number": _phones(rng, n, "us"),
        "sex": sex,
        "mobile": _phones(rng, n, "uk"),
        "region": region,
        "Street Address": _streets(rng, n),
        "ip_address": ip,
        "segment": segment,
        "SSN": [f"{a:03d}-{b:02d}-{c:04d}" for a, b, c in
                zip(rng.integers(100, 900, n).tolist(), rng.integers(1, 100, n).tolist(),
                    rng.integers(1, 10_000, n).tolist())],
        "PassportNo": [f"{chr(65 + a)}{b:08d}" for a, b in zip(rng.integers(0, 26, n).tolist(),
                                                                  rng.integers(0, 10**8, n).tolist())],
        "channel": channel,
        "user_agent": rng.choice(_AGENTS, n),
        "contact": rng.choice(contact_pool, n),
        "tenure_months": tenure,
        "field_7": rng.choice(phone_pool, n),
        "host": rng.choice(host_pool, n),
        "location": rng.choice(street_pool, n),
        "last_review_score": review,
        "churned": np.where(churned, "yes", "no"),
        "predicted": np.where(churned ^ flip, "yes", "no"),
    })
