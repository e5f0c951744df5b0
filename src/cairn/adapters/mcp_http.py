"""`cairn serve`: the MCP server over streamable HTTP, loopback-only unless a token guards it.

Three rules, checked before anything is served:

* Binding to an address other than loopback is refused unless a bearer token is configured
  (`--token` / `CAIRN_HTTP_TOKEN`, or `--new-token`): memory is private, and a LAN is not.
  A token must be strong (`check_token`): at least 32 printable ASCII characters, at least 8
  of them different, and an estimated 128 bits (`token_bits`: length × log2 of the alphabet
  its character classes span), so `openssl rand -hex 16` passes and `aaaa…` does not.
* With a token, every request must carry `Authorization: Bearer <token>` (the scheme in any
  case, as RFC 9110 has it), else 401 (compared in constant time). The check wraps the whole
  app, so no route escapes it.
* No CORS unless origins are configured (`--cors-origin` / `CAIRN_HTTP_CORS_ORIGINS`); a
  browser page elsewhere cannot call the server. On loopback the SDK's DNS-rebinding guard
  stays on and admits the configured origins beside the loopback ones.

The socket is bound before the server starts, so `--port 0` works and the announced address
is the real one. Every POST body is vetted first (`mcp_http_vet.py`), and every refusal
carries a JSON-RPC error body, including the SDK's plain-text ones (403, 405, 406), so a
client always has an error to read.
"""

from __future__ import annotations

import hmac
import ipaddress
import math
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Literal

import mcp_types as types
import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers, MutableHeaders
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cairn.adapters.mcp import build_server, open_binding
from cairn.adapters.mcp_binding import Binding
from cairn.adapters.mcp_http_vet import VetBodies
from cairn.adapters.mcp_surface import chosen_set
from cairn.config import Settings
from cairn.errors import InvalidInput

MCP_PATH = "/mcp"
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain"})
_LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
_LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
MIN_TOKEN_CHARS = 32
MIN_TOKEN_DISTINCT = 8
MIN_TOKEN_BITS = 128
# Character classes and their sizes: a token's alphabet is the sum of the classes it uses.
_CLASSES = ((str.isdigit, 10), (str.islower, 26), (str.isupper, 26))
_OTHER_PRINTABLE = 32
AUTH_ERROR = -32001  # a server-defined JSON-RPC code: the request was not authorised


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
            "and change your memory. Set --token (or CAIRN_HTTP_TOKEN), use --new-token, or "
            "bind to 127.0.0.1."
        )
    if token is not None:
        check_token(token)


def token_bits(token: str) -> float:
    """Estimated entropy, as if each character were drawn at random from the classes used."""
    alphabet = sum(size for test, size in _CLASSES if any(test(char) for char in token))
    if any(not char.isalnum() for char in token):
        alphabet += _OTHER_PRINTABLE
    return len(token) * math.log2(alphabet) if alphabet > 1 else 0.0


def check_token(token: str) -> None:
    """Refuse a token an attacker could guess; the message never repeats the token."""
    if not all("!" <= char <= "~" for char in token):
        raise InvalidInput(
            "the token must be printable ASCII without spaces, since it travels in an HTTP "
            "header; `cairn serve --new-token` makes one."
        )
    distinct, bits = len(set(token)), token_bits(token)
    if len(token) < MIN_TOKEN_CHARS or distinct < MIN_TOKEN_DISTINCT or bits < MIN_TOKEN_BITS:
        raise InvalidInput(
            f"the token is too weak to guard your memory ({len(token)} characters, {distinct} "
            f"different, about {int(bits)} bits): use at least {MIN_TOKEN_CHARS} characters, "
            f"{MIN_TOKEN_DISTINCT} of them different, worth {MIN_TOKEN_BITS} bits counted as "
            "length × log2(alphabet: 10 for digits, +26 lowercase, +26 uppercase, +32 other), "
            "e.g. 32 random hex digits. `cairn serve --new-token` makes one."
        )


def check_port(port: int) -> None:
    if not 0 <= port <= 65535:
        raise InvalidInput(
            f"port {port} is out of range: give --port (or CAIRN_HTTP_PORT) from 1 to 65535, "
            "or 0 to pick a free one."
        )


def jsonrpc_error_body(code: int, message: str) -> bytes:
    error = types.JSONRPCError(
        jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message)
    )
    return error.model_dump_json(by_alias=True, exclude_unset=True).encode()


def bearer_credentials(header: bytes) -> bytes | None:
    """The token of an `Authorization: Bearer <token>` header; the scheme is case-insensitive."""
    scheme, _, credentials = header.strip().partition(b" ")
    return credentials.strip() if scheme.lower() == b"bearer" else None


class BearerToken:
    """401 for any HTTP request without `Authorization: Bearer <token>`."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._expected = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorised(scope):
            body = jsonrpc_error_body(
                AUTH_ERROR, "missing or wrong bearer token; send Authorization: Bearer <token>."
            )
            response = Response(
                body,
                status_code=401,
                media_type="application/json",
                headers={"WWW-Authenticate": 'Bearer realm="cairn"'},
            )
            await response(scope, receive, send)
            return
        await self._app(scope, receive, send)

    def _authorised(self, scope: Scope) -> bool:
        header = dict(scope.get("headers") or ()).get(b"authorization", b"")
        sent = bearer_credentials(header)
        # compare_digest on every path, so a missing scheme costs the same as a wrong token.
        return hmac.compare_digest(sent or b"", self._expected) and sent is not None


class JsonRpcRejections:
    """The SDK's plain-text 4xx answers (403, 405, 406) with a JSON-RPC error body instead.

    Its JSON parse and validation errors already are JSON-RPC; these come from layers in front
    of the parser (the host and origin guard, method and Accept checks), whose bare text a
    JSON-RPC client cannot read.
    """

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        held: list[Message] = []

        async def relay(message: Message) -> None:
            if message["type"] == "http.response.start" and _plain_rejection(message):
                held.append(message)
                return
            if not held:
                await send(message)
                return
            held.append(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                for rewritten in _as_jsonrpc(held):
                    await send(rewritten)

        await self._app(scope, receive, relay)


def _plain_rejection(start: Message) -> bool:
    content_type = Headers(raw=start.get("headers") or []).get("content-type", "")
    return 400 <= start["status"] < 500 and not content_type.startswith("application/json")


def _as_jsonrpc(held: Sequence[Message]) -> list[Message]:
    start, status = held[0], held[0]["status"]
    said = b"".join(m.get("body", b"") for m in held[1:]).decode("utf-8", "replace").strip()
    text = said or HTTPStatus(status).phrase
    body = jsonrpc_error_body(types.INVALID_REQUEST, f"Invalid request: {text} (HTTP {status}).")
    headers = MutableHeaders(raw=list(start.get("headers") or []))
    headers["content-type"] = "application/json"
    headers["content-length"] = str(len(body))
    return [
        {**start, "headers": headers.raw},
        {"type": "http.response.body", "body": body, "more_body": False},
    ]


def transport_security(host: str, origins: Sequence[str]) -> TransportSecuritySettings:
    if is_loopback(host):
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=list(_LOOPBACK_HOSTS),
            allowed_origins=[*_LOOPBACK_ORIGINS, *origins],
        )
    # Off loopback the token is the guard: a rebinding page cannot know it.
    return TransportSecuritySettings(enable_dns_rebinding_protection=False)


class BesideMcp:
    """`/mcp` (and lifespan) to the MCP server, every other path to the app (`cairn.adapters.app`),
    which guards itself by the same rules in a form a browser can follow."""

    def __init__(self, mcp: ASGIApp, app: ASGIApp) -> None:
        self._mcp = mcp
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else MCP_PATH
        ours = path == MCP_PATH or path.startswith(MCP_PATH + "/")
        await (self._mcp if ours else self._app)(scope, receive, send)


def http_app(
    inner: ASGIApp,
    *,
    token: str | None,
    cors_origins: Sequence[str],
    beside: ASGIApp | None = None,
) -> ASGIApp:
    guarded: ASGIApp = JsonRpcRejections(VetBodies(inner))
    app: ASGIApp = BearerToken(guarded, token) if token else guarded
    if beside is not None:
        app = BesideMcp(app, beside)
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


@dataclass(frozen=True, slots=True)
class Listening:
    """Where and how to serve HTTP: the address and port to bind (port 0 picks a free one),
    the token every request must then carry, and the browser origins allowed to call."""

    host: str
    port: int
    token: str | None
    cors_origins: tuple[str, ...]


def serve(
    location: str,
    settings: Settings,
    listening: Listening,
    *,
    announce: Callable[[str], None],
    tool_set: str | None = None,
    beside: Callable[[Binding], ASGIApp] | None = None,
) -> None:
    """Serve until interrupted; `announce` gets the URL once the socket listens. `beside`
    builds an app served at every other path (the app, `cairn.adapters.app`)."""
    chosen = chosen_set(tool_set)
    host, token, cors_origins = listening.host, listening.token, listening.cors_origins

    def build(binding: Binding) -> ASGIApp:
        server = build_server(binding, chosen)
        inner = server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            transport_security=transport_security(host, cors_origins),
            host=host,
        )
        extra = beside(binding) if beside is not None else None
        return http_app(inner, token=token, cors_origins=cors_origins, beside=extra)

    # The MCP server's session manager runs in the ASGI lifespan, so it must be on.
    serve_http(
        location,
        settings,
        listening,
        build=build,
        announce=lambda origin: announce(origin + MCP_PATH),
        lifespan="on",
    )


def serve_http(
    location: str,
    settings: Settings,
    listening: Listening,
    *,
    build: Callable[[Binding], ASGIApp],
    announce: Callable[[str], None],
    lifespan: Literal["on", "off"],
) -> None:
    """Serve `build`'s app over the store at `location` until interrupted, for `cairn serve` and
    `cairn ui` alike: the port and the bind are checked and the socket bound before the store
    opens, and `announce` gets the origin actually bound (`http://host:port`), which is the
    only place a `--port 0` shows its port."""
    check_port(listening.port)
    check_bind(listening.host, listening.token)
    sock = listen(listening.host, listening.port)
    binding = open_binding(location, settings)
    try:
        app = build(binding)
        bound_host, bound_port = sock.getsockname()[:2]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        announce(f"http://{shown}:{bound_port}")
        config = uvicorn.Config(app, log_level="warning", lifespan=lifespan)
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
        binding.close()


def listen(host: str, port: int) -> socket.socket:
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
