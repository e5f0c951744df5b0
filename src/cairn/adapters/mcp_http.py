"""`cairn serve`: the MCP server over streamable HTTP, loopback-only unless a token guards it.

Three rules, checked before anything is served:

* Binding to an address other than loopback is refused unless a bearer token is configured
  (`--token` / `CAIRN_HTTP_TOKEN`): memory is private, and a LAN is not.
* With a token, every request must carry `Authorization: Bearer <token>`, else 401 (compared in
  constant time). The check wraps the whole app, so no route escapes it.
* No CORS unless origins are configured (`--cors-origin` / `CAIRN_HTTP_CORS_ORIGINS`); a
  browser page elsewhere cannot call the server. On loopback the SDK's DNS-rebinding guard
  stays on and admits the configured origins beside the loopback ones.

The socket is bound before the server starts, so `--port 0` works and the announced address
is the real one.
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
from collections.abc import Callable, Sequence

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from cairn.adapters.mcp import build_server, open_binding
from cairn.config import Settings
from cairn.errors import InvalidInput

MCP_PATH = "/mcp"
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain"})
_LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
_LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


def is_loopback(host: str) -> bool:
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    if not is_loopback(host) and not token:
        raise InvalidInput(
            f"refusing to serve on {host} without a token: anyone who can reach it could read "
            "and change your memory. Set --token (or CAIRN_HTTP_TOKEN), or bind to 127.0.0.1."
        )


class BearerToken:
    """401 for any HTTP request without `Authorization: Bearer <token>`."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorised(scope):
            response = JSONResponse(
                {"error": "missing or wrong bearer token; send Authorization: Bearer <token>."},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="cairn"'},
            )
            await response(scope, receive, send)
            return
        await self._app(scope, receive, send)

    def _authorised(self, scope: Scope) -> bool:
        sent = dict(scope.get("headers") or ()).get(b"authorization", b"")
        return hmac.compare_digest(sent, self._expected)


def transport_security(host: str, origins: Sequence[str]) -> TransportSecuritySettings:
    if is_loopback(host):
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=list(_LOOPBACK_HOSTS),
            allowed_origins=[*_LOOPBACK_ORIGINS, *origins],
        )
    # Off loopback the token is the guard: a rebinding page cannot know it.
    return TransportSecuritySettings(enable_dns_rebinding_protection=False)


def http_app(inner: ASGIApp, *, token: str | None, cors_origins: Sequence[str]) -> ASGIApp:
    app = BearerToken(inner, token) if token else inner
    if cors_origins:
        # Outside the token check, so a browser's preflight (which carries no token) is answered.
        app = CORSMiddleware(
            app,
            allow_origins=list(cors_origins),
            allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
            allow_headers=[
                "Authorization",
                "Content-Type",
                "Mcp-Session-Id",
                "Mcp-Protocol-Version",
                "Last-Event-ID",
            ],
            expose_headers=["Mcp-Session-Id"],
        )
    return app


def parse_origins(raw: str | Sequence[str] | None) -> list[str]:
    items = raw.split(",") if isinstance(raw, str) else list(raw or ())
    return [item.strip().rstrip("/") for item in items if item.strip()]


def serve(
    location: str,
    settings: Settings,
    *,
    host: str,
    port: int,
    token: str | None,
    cors_origins: Sequence[str],
    announce: Callable[[str], None],
) -> None:
    """Serve until interrupted; `announce` gets the URL once the socket listens."""
    check_bind(host, token)
    sock = _listen(host, port)
    binding = open_binding(location, settings)
    try:
        server = build_server(binding)
        inner = server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            transport_security=transport_security(host, cors_origins),
            host=host,
        )
        app = http_app(inner, token=token, cors_origins=cors_origins)
        bound_host, bound_port = sock.getsockname()[:2]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        announce(f"http://{shown}:{bound_port}{MCP_PATH}")
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
        binding.close()


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise InvalidInput(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}. Pick another --port "
            "(0 picks a free one) or stop what holds it."
        ) from None
    sock.listen(128)
    return sock
