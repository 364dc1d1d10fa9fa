"""`make app SERVE=...` (ui/serve.py): loopback names stay loopback, any other name binds every
interface with a warning in the terminal and on every page (issue 32 point 3)."""
from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from ui.serve import SERVED_AS, is_loopback, plan


@pytest.mark.parametrize("name, loopback", [("localhost", True), ("app.localhost", True), ("127.0.0.2", True),
                                            ("::1", True), ("[::1]", True), ("host.example.com", False),
                                            ("10.0.0.5", False), ("0.0.0.0", False), ("localhost.example.com", False)])
def test_loopback_names_are_told_without_a_lookup(name, loopback):
    assert is_loopback(name) is loopback
    options, warning = plan(name)
    address = options[options.index("--server.address") + 1]
    if loopback:
        assert warning is None and address != "0.0.0.0"
    else:
        assert address == "0.0.0.0" and "no login" in warning.lower() and name in warning


def test_the_terminal_warns_before_serving_a_team():
    quiet = subprocess.run([sys.executable, "-m", "ui.serve", "127.0.0.2", "--dry-run"], cwd=ROOT, capture_output=True,
                           text=True, timeout=60)
    assert quiet.returncode == 0 and "--server.address 127.0.0.2" in quiet.stdout and not quiet.stderr
    loud = subprocess.run([sys.executable, "-m", "ui.serve", "host.example.com", "--dry-run"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert "--server.address 0.0.0.0" in loud.stdout
    assert loud.stderr.startswith("divergence: WARNING: Served to the network as http://host.example.com:8501")
    assert plan("")[0] == ["--server.address", "127.0.0.1"]


def test_every_page_says_it_is_served(monkeypatch):
    monkeypatch.setenv(SERVED_AS, "http://host.example.com:8501")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert any("Served to the network as `http://host.example.com:8501`" in w.value for w in at.warning)
    monkeypatch.delenv(SERVED_AS)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not any("Served to the network" in w.value for w in at.warning)
