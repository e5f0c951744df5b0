"""`cairn ui`: the app alone on HTTP, under the rules `cairn serve` follows (mcp_http.py):
loopback only unless a token is set, the token on every request, no CORS unless configured."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import uvicorn
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp

from cairn.adapters.app.routes import build_app
from cairn.adapters.mcp import open_binding
from cairn.adapters.mcp_binding import Binding
from cairn.adapters.mcp_http import check_bind, check_port, is_loopback, listen
from cairn.config import Settings

APP_CLIENT = "cairn-app"


def app_for(binding: Binding, *, host: str, token: str | None) -> ASGIApp:
    """The guarded app over the binding's store, as the `cairn-app` client."""
    return build_app(
        lambda: binding.cairn_for(APP_CLIENT, None),
        token=token,
        loopback=is_loopback(host),
    )


def with_cors(app: ASGIApp, origins: Sequence[str]) -> ASGIApp:
    if not origins:
        return app
    return CORSMiddleware(
        app,
        allow_origins=list(origins),
        allow_methods=["GET", "POST", "OPTIONS"],
        allow_headers=["Authorization", "Content-Type", "X-Cairn-CSRF"],
        allow_credentials=True,
    )


def address(host: str, port: int, token: str | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")


def serve_ui(
    location: str,
    settings: Settings,
    *,
    host: str,
    port: int,
    token: str | None,
    cors_origins: Sequence[str],
    announce: Callable[[str], None],
) -> None:
    """Serve the app until interrupted; `announce` gets the address once the socket listens."""
    check_port(port)
    check_bind(host, token)
    sock = listen(host, port)
    binding = open_binding(location, settings)
    try:
        app = with_cors(app_for(binding, host=host, token=token), cors_origins)
        bound_host, bound_port = sock.getsockname()[:2]
        announce(address(bound_host, bound_port, token))
        config = uvicorn.Config(app, log_level="warning", lifespan="off")
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
        binding.close()
