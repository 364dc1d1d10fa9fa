"""The dashboard is safe by default (issue 21): `streamlit run app.py` (what `make app` runs) listens
on the loopback address only, looks nothing up outside at start, and accepts a WebSocket only for
the host names localhost and 127.0.0.1 (no DNS rebinding from a web page)."""
from __future__ import annotations

import base64
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from conftest import ROOT

pytestmark = pytest.mark.slow


def _listening(port: int) -> list[str]:
    """The local addresses of the sockets listening on ``port`` (from /proc/net/tcp and tcp6)."""
    found = []
    for name, size in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            lines = open(name).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            addr, p = local.split(":")
            if state == "0A" and int(p, 16) == port:  # 0A: LISTEN
                raw = bytes.fromhex(addr)
                if size == 8:
                    found.append(socket.inet_ntop(socket.AF_INET, raw[::-1]))
                else:
                    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
                    found.append(socket.inet_ntop(socket.AF_INET6, words))
    return found


def _own_addresses() -> list[str]:
    """This machine's non-loopback IPv4 addresses (no packet is sent)."""
    out = set()
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            out.add(s.getsockname()[0])
    except OSError:
        pass
    try:
        out |= {a for a in socket.gethostbyname_ex(socket.gethostname())[2]}
    except OSError:
        pass
    return sorted(a for a in out if not a.startswith("127."))


def _websocket_status(port: int, host: str, origin: str | None = "") -> str:
    """The first line of the answer to a WebSocket request for ``host:port`` from ``origin`` (by default
    the page at that address; None: no Origin header, as a client that is not a browser)."""
    origin = f"http://{host}:{port}" if origin == "" else origin
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall((f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                   + ("" if origin is None else f"Origin: {origin}\r\n") + "\r\n").encode())
        return s.recv(256).decode(errors="replace").splitlines()[0]


def _start(tmp_path_factory, serve: str = "", host: str = "127.0.0.1", bare: bool = False):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log_path = tmp_path_factory.mktemp("serving") / "server.log"
    env = {k: v for k, v in os.environ.items() if k not in ("DIVERGENCE_DATA_FOLDER", "DIVERGENCE_SERVED_AS")}
    log = open(log_path, "w")
    # exactly what `make app SERVE=...` runs (the repository's .streamlit/config.toml decides), on a free port
    # (bare: the plain `streamlit run app.py` of Streamlit's own documentation, no ui.serve nor ui.guard)
    command = ["streamlit", "run", "app.py"] if bare else ["ui.serve", serve]
    proc = subprocess.Popen([sys.executable, "-m", *command, "--server.port", str(port),
                             "--server.fileWatcherType", "none"], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True, env=env)
    deadline = time.time() + 180
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"http://{host}:{port}/_stcore/health", timeout=1).read() == b"ok":
                break
        except OSError:
            time.sleep(0.2)
    else:
        os.killpg(proc.pid, 15)
        pytest.fail(f"the app did not start; see {log_path}")
    return proc, port, log, log_path


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    proc, port, log, log_path = _start(tmp_path_factory)
    yield port, log_path
    os.killpg(proc.pid, 15)
    proc.wait(30)
    log.close()


def test_a_loopback_name_stays_loopback(tmp_path_factory):
    """Issue 32 point 3: `make app SERVE=127.0.0.2` binds that loopback address, not every interface,
    and warns of nothing."""
    proc, port, log, log_path = _start(tmp_path_factory, "127.0.0.2", host="127.0.0.2")
    try:
        assert _listening(port) == ["127.0.0.2"]
        assert "WARNING" not in log_path.read_text()
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(30)
        log.close()


def test_the_app_listens_on_the_loopback_address_only(server):
    port, _ = server
    assert _listening(port) == ["127.0.0.1"]
    for address in _own_addresses():
        with pytest.raises(OSError):
            socket.create_connection((address, port), timeout=3).close()


def test_nothing_is_looked_up_outside_at_start(server):
    port, log_path = server
    text = log_path.read_text()
    assert f"URL: http://127.0.0.1:{port}" in text
    for line in ("Network URL", "External URL", "Did not auto detect external IP"):
        assert line not in text


def test_a_websocket_is_refused_for_another_host_name(server):
    port, _ = server
    assert " 101 " in _websocket_status(port, "localhost") and " 101 " in _websocket_status(port, "127.0.0.1")
    assert " 403 " in _websocket_status(port, "evil.example")  # a page that rebinds its name to 127.0.0.1


def test_a_websocket_is_refused_for_another_port_or_a_file(server):
    """Issue 33 F14: a page on another local port (same host name) or opened from a file opens no
    session; the app's own page and a client that sends no origin do."""
    port, _ = server
    other = port + 1 if port < 65535 else port - 1
    for host in ("127.0.0.1", "localhost"):
        assert " 403 " in _websocket_status(port, "127.0.0.1", f"http://{host}:{other}")
        assert " 403 " in _websocket_status(port, host, f"http://{host}:{other}")
    assert " 403 " in _websocket_status(port, "127.0.0.1", "null")
    assert " 403 " in _websocket_status(port, "127.0.0.1", f"https://127.0.0.1:{port}")  # another scheme
    assert " 101 " in _websocket_status(port, "127.0.0.1", None)


def test_no_other_site_may_frame_the_app(server):
    """Issue 33 F14: every answer forbids framing by another site (the page, a static file, health)."""
    port, _ = server
    for path in ("/", "/_stcore/health", "/favicon.png"):
        try:
            headers = urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10).headers
        except urllib.error.HTTPError as e:  # a missing file answers 404, with the same headers
            headers = e.headers
        assert headers["X-Frame-Options"] == "SAMEORIGIN", path
        assert headers["Content-Security-Policy"] == "frame-ancestors 'self'", path


def test_a_bare_streamlit_run_is_guarded_too(tmp_path_factory):
    """Issue 47 N10: a bare `streamlit run app.py` had no guard (the middleware came only with `make app`),
    so any site could frame it. app.py names the server Streamlit serves (st.App with ui.guard's middleware):
    the same headers on every answer, from the first one on, and the same WebSocket rule."""
    proc, port, log, log_path = _start(tmp_path_factory, bare=True)
    try:
        for path in ("/", "/_stcore/health", "/favicon.png", "/no-such-page"):
            try:
                headers = urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10).headers
            except urllib.error.HTTPError as e:
                headers = e.headers
            assert headers["X-Frame-Options"] == "SAMEORIGIN", path
            assert headers["Content-Security-Policy"] == "frame-ancestors 'self'", path
        assert " 403 " in _websocket_status(port, "127.0.0.1", f"http://127.0.0.1:{port + 1}")
        assert " 101 " in _websocket_status(port, "127.0.0.1")
        assert _listening(port) == ["127.0.0.1"]  # the repository's config.toml still decides the address
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(30)
        log.close()
