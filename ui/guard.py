"""The dashboard's server with two guards Streamlit's own options cannot give (``make app`` starts it).

- **Its WebSocket answers its own page only.** Streamlit accepts a WebSocket from any origin whose
  host name is ``localhost`` or ``127.0.0.1``, whatever the port, so a page served on another local
  port could open a session and read the data. Here the origin must be the address the browser
  asked for, port included (``Host``), or one named exactly in ``server.corsAllowedOrigins`` or
  served as (``make app SERVE=name``). A client that sends no origin (not a browser) is let through.
- **No other site frames it**: every answer says ``X-Frame-Options: SAMEORIGIN`` and
  ``Content-Security-Policy: frame-ancestors 'self'``.

    python -m ui.guard run app.py [streamlit options]   # as ``streamlit run``, guarded
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from urllib.parse import urlsplit

#: the headers every HTTP answer carries: only the app's own pages may frame it
FRAME_HEADERS = [(b"x-frame-options", b"SAMEORIGIN"),
                 (b"content-security-policy", b"frame-ancestors 'self'")]
_DEFAULT_PORT = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def _netloc(scheme: str, host: str) -> tuple[str, int] | None:
    """(host name, port) of ``host`` (``name[:port]``) under ``scheme``; None if it does not parse."""
    try:
        parts = urlsplit(f"{scheme}://{host}")
        port = parts.port or _DEFAULT_PORT.get(scheme)
    except ValueError:
        return None
    if not parts.hostname or port is None:
        return None
    return parts.hostname.lower(), port


def same_origin(origin: str | None, host: str | None, allowed: Iterable[str] = (), *, secure: bool = False) -> bool:
    """True when a WebSocket with this ``Origin`` header may open a session on the server the
    browser reached as ``host`` (its ``Host`` header; ``secure``: over TLS): no origin (not a
    browser), the same scheme, host name and port, or an origin in ``allowed`` exactly."""
    if origin is None:
        return True
    origin = origin.strip()
    if origin.lower() == "null":  # a file, a sandboxed frame: never the app's own page
        return False
    mine = _origin(origin)
    if mine is None:
        return False
    if host and mine[0] == ("https" if secure else "http") and mine[1:] == _netloc(mine[0], host.strip()):
        return True
    return any(mine == _origin(o) for o in allowed if o and o.strip())


def _origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host name, port) of an origin; None if it does not parse."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    scheme = (parts.scheme or "").lower()
    where = _netloc(scheme, parts.netloc)
    return None if where is None else (scheme, *where)


def allowed_origins() -> list[str]:
    """The origins named exactly: ``server.corsAllowedOrigins`` and the address served as."""
    from streamlit import config

    from ui.serve import SERVED_AS

    named = list(config.get_option("server.corsAllowedOrigins") or [])
    if os.environ.get(SERVED_AS):
        named.append(os.environ[SERVED_AS])
    return named


class Guard:
    """ASGI middleware: a WebSocket from another origin is refused before it is accepted (the
    browser sees 403), and every HTTP answer carries :data:`FRAME_HEADERS`."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope.get("divergence.guarded"):  # guarded once already (app.py's app under `python -m ui.guard`)
            return await self.app(scope, receive, send)
        scope = {**scope, "divergence.guarded": True}
        if scope["type"] == "websocket":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            if not same_origin(headers.get("origin"), headers.get("host"), allowed_origins(),
                               secure=scope.get("scheme") == "wss"):
                message = await receive()  # the connection request; refused, never accepted
                if message.get("type") == "websocket.connect":
                    await send({"type": "websocket.close", "code": 1008})
                return
            return await self.app(scope, receive, send)
        if scope["type"] == "http":
            async def framed(message):
                if message["type"] == "http.response.start":
                    kept = [(k, v) for k, v in message.get("headers", [])
                            if k.lower() not in {h for h, _ in FRAME_HEADERS}]
                    message = {**message, "headers": kept + FRAME_HEADERS}
                await send(message)
            return await self.app(scope, receive, framed)
        return await self.app(scope, receive, send)


def middleware() -> list:
    """:class:`Guard` as the middleware of ``app.py``'s ``st.App``: what ``streamlit run app.py`` serves."""
    from starlette.middleware import Middleware

    return [Middleware(Guard)]


def install() -> None:
    """Add :class:`Guard` to the middleware of the server ``streamlit run`` builds (once)."""
    from starlette.middleware import Middleware
    from streamlit.web.server.starlette import starlette_app

    original = starlette_app.create_streamlit_middleware
    if getattr(original, "_guarded", False):
        return

    def guarded():
        return [Middleware(Guard), *original()]

    setattr(guarded, "_guarded", True)
    starlette_app.create_streamlit_middleware = guarded


def main(argv: list[str] | None = None) -> None:
    """``streamlit`` with the guard installed: ``python -m ui.guard run app.py ...``."""
    from streamlit.web import cli

    install()
    args = list(sys.argv[1:] if argv is None else argv)
    sys.argv = ["streamlit", *args]
    cli.main(prog_name="streamlit")


if __name__ == "__main__":
    main()
