"""Issue 32 point 1: a PNG export opens no connection outside this machine. The export runs in a
process of its own under strace (every connect, send and write with its socket's addresses, every
program started): kaleido's Chromium is seen starting, and every internet address any of the processes
opens a TCP connection to or sends data to is a loopback one (a name looked up outside, a sign-in or an
update request would show as another). A UDP socket only *connected* sends nothing: Chromium's IPv6
reachability probe does that on some machines (docs/safety.md), and it is not counted."""
from __future__ import annotations

import ipaddress
import re
import shutil
import subprocess
import sys

import pytest

from divergence.present.export import png_supported

EXPORT = """
import plotly.graph_objects as go
from divergence.present.export import figure_png
png = figure_png(go.Figure(go.Bar(x=[1, 2], y=[3, 4])), width=300, height=200, scale=1)
assert png[:4] == b"\\x89PNG"
print("exported")
"""


def test_an_export_reaches_nothing_outside_loopback(tmp_path):
    if not png_supported():
        pytest.skip("kaleido or Chromium (/usr/bin/chromium) missing: PNG export unavailable here")
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed (make test installs Debian's when root)")
    script, log = tmp_path / "export.py", tmp_path / "trace.log"
    script.write_text(EXPORT)
    done = subprocess.run(["strace", "-f", "-qq", "-yy", "-e", "trace=connect,sendto,sendmsg,sendmmsg,write,execve",
                           "-e", "signal=none", "-o", str(log), sys.executable, str(script)],
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0 and "ptrace" in done.stderr:
        pytest.skip(f"strace cannot trace here: {done.stderr.strip().splitlines()[0]}")
    assert done.returncode == 0 and "exported" in done.stdout, done.stderr[-2000:]
    trace = log.read_text(errors="replace")
    assert re.search(r'execve\("[^"]*chromium"', trace), "the exporter's Chromium was not seen starting"
    reached = reached_addresses(trace)
    outside = sorted(a for a in reached if not ipaddress.ip_address(a).is_loopback)
    assert not outside, f"the export reached {outside}"
    assert "127.0.0.1" in reached  # the trace sees the exporter's own loopback traffic


def reached_addresses(trace: str) -> set[str]:
    """Internet addresses a TCP connection was opened to or data was sent to, from ``strace -yy``."""
    reached = set()
    for line in trace.splitlines():
        call = re.match(r"\d+\s+(connect|sendto|sendmsg|sendmmsg|write)\((\d+)<([A-Z]+)(?:v6)?:\[([^\]]*(?:\][^\]]*)*)\]>", line)
        if call is None or call.group(3) not in ("TCP", "UDP"):
            continue
        name, proto, fd_info = call.group(1), call.group(3), call.group(4)
        given = re.findall(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"\)', line)
        given = {a or b for a, b in given}
        if name == "connect":
            if proto == "TCP":
                reached |= given
            continue  # a UDP socket connected only: nothing sent yet
        peer = re.search(r"->\[?([0-9A-Fa-f:.]+?)\]?:\d+$", fd_info)
        reached |= given or ({peer.group(1)} if peer else set())
    return reached
