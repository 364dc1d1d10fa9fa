"""The server's origin rule (issue 33 F14), decided on the headers alone: the live server is checked
in tests/app/test_serving.py."""
from __future__ import annotations

import pytest

from ui.guard import same_origin


@pytest.mark.parametrize("origin, host, allowed", [
    ("http://127.0.0.1:8501", "127.0.0.1:8501", True),
    ("http://LOCALHOST:8501", "localhost:8501", True),
    ("http://localhost", "localhost:80", True),  # a default port is the same port
    (None, "127.0.0.1:8501", True),  # not a browser: nothing to tell
    ("http://127.0.0.1:8702", "127.0.0.1:8501", False),  # another local port
    ("http://localhost:8501", "127.0.0.1:8501", False),  # another name for the same address
    ("http://evil.example:8501", "127.0.0.1:8501", False),
    ("https://127.0.0.1:8501", "127.0.0.1:8501", False),  # another scheme, another default port
    ("null", "127.0.0.1:8501", False),  # a file or a sandboxed frame
    ("http://[::1", "127.0.0.1:8501", False),  # does not parse
    ("http://127.0.0.1:8501", None, False),
])
def test_only_the_address_the_browser_asked_for_is_its_own_origin(origin, host, allowed):
    assert same_origin(origin, host) is allowed


def test_over_tls_the_origin_is_https():
    assert same_origin("https://app.example.com", "app.example.com", secure=True)
    assert not same_origin("http://app.example.com:443", "app.example.com", secure=True)


def test_an_origin_named_exactly_is_allowed_and_nothing_near_it():
    named = ["https://reports.example.com"]
    assert same_origin("https://reports.example.com", "10.0.0.5:8501", named)
    assert same_origin("https://reports.example.com:443", "10.0.0.5:8501", named)
    assert not same_origin("http://reports.example.com", "10.0.0.5:8501", named)
    assert not same_origin("https://reports.example.com:8443", "10.0.0.5:8501", named)
    assert not same_origin("https://evil.reports.example.com", "10.0.0.5:8501", named)
