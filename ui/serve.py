"""Start the dashboard (``make app``): on this machine only, or served to a team under a name.

    python -m ui.serve                      # http://localhost:8501, loopback only
    python -m ui.serve 127.0.0.2            # a loopback name: still loopback only, bound to it
    python -m ui.serve host.example.com     # every interface, with a warning here and on every page
    python -m ui.serve "" --server.port 8600  # options after the name go to ``streamlit run``

A name is loopback when it is ``localhost`` (or ends in ``.localhost``) or a loopback address
(127.0.0.0/8, ::1); no name is looked up (nothing leaves the machine to decide). Any other name
binds every interface: the terminal says who can reach the app and that there is no login, and the
app shows the same on every page (``DIVERGENCE_SERVED_AS``). The server is ``streamlit run`` with
:mod:`ui.guard`'s guards: its WebSocket answers its own page only, and no other site frames it.
"""
from __future__ import annotations

import ipaddress
import os
import sys
from pathlib import Path

#: the environment variable that tells the app it is served to the network, under which name
SERVED_AS = "DIVERGENCE_SERVED_AS"
ROOT = Path(__file__).resolve().parents[1]


def is_loopback(name: str) -> bool:
    """True for ``localhost``, ``*.localhost`` and loopback addresses; never looks a name up."""
    text = name.strip().strip("[]").lower()
    if text == "localhost" or text.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(text).is_loopback
    except ValueError:
        return False


def warning_text(address: str, *, markdown: bool = False) -> str:
    """What serving beyond this machine at ``address`` (``http://name:port``) means, in one paragraph
    (the terminal; ``markdown``: the page, the address as code, not a link)."""
    if markdown:
        from divergence.present.formats import md_code

        address = md_code(address)
    return (f"Served to the network as {address}: anyone who can reach this machine's port can see "
            "and download the data the sessions load, upload files and use its memory and cores. There is no "
            "login: put it behind your organisation's authenticating proxy, or run `make app` without SERVE.")


def plan(serve: str, port: int = 8501) -> tuple[list[str], str | None]:
    """The ``streamlit run`` options for ``serve`` ('' for this machine only) and the warning to give
    (None on loopback)."""
    serve = serve.strip()
    if not serve:
        return ["--server.address", "127.0.0.1"], None
    if is_loopback(serve):
        address = "127.0.0.1" if serve.lower().strip("[]").endswith("localhost") else serve.strip("[]")
        return ["--server.address", address, "--browser.serverAddress", serve], None
    return (["--server.address", "0.0.0.0", "--browser.serverAddress", serve, "--server.allowedHosts", serve,
             "--server.allowedHosts", "localhost", "--server.allowedHosts", "127.0.0.1"],
            warning_text(f"http://{serve}:{port}"))


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    dry = "--dry-run" in args
    args = [a for a in args if a != "--dry-run"]
    serve = args[0] if args else ""
    extra = args[1:]
    port = int(extra[extra.index("--server.port") + 1]) if "--server.port" in extra[:-1] else 8501
    options, warning = plan(serve, port)
    command = [sys.executable, "-m", "ui.guard", "run", str(ROOT / "app.py"), *options, *args[1:]]
    env = dict(os.environ)
    env.pop(SERVED_AS, None)
    if warning:
        print(f"divergence: WARNING: {warning}", file=sys.stderr, flush=True)
        env[SERVED_AS] = f"http://{serve}:{port}"
    if dry:
        print(" ".join(command))
        return 0
    os.execve(sys.executable, command, env)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
