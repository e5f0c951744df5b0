"""`cairn ui`: the app alone on HTTP, under the rules `cairn serve` follows (mcp_http.py):
loopback only unless a token is set, the token on every request, no CORS unless configured."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp

from cairn.adapters.app.routes import build_app
from cairn.adapters.mcp_binding import Binding
from cairn.adapters.mcp_http import Listening, is_loopback, serve_http
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


def serve_ui(
    location: str, settings: Settings, listening: Listening, *, announce: Callable[[str], None]
) -> None:
    """Serve the app until interrupted; `announce` gets the address once the socket listens,
    with the token once, so the first visit can set the cookie."""
    host, token = listening.host, listening.token
    query = f"?token={token}" if token else ""

    def build(binding: Binding) -> ASGIApp:
        return with_cors(app_for(binding, host=host, token=token), listening.cors_origins)

    # The app has nothing to start or stop, so uvicorn runs no ASGI lifespan for it.
    serve_http(
        location,
        settings,
        listening,
        build=build,
        announce=lambda origin: announce(f"{origin}/{query}"),
        lifespan="off",
    )
