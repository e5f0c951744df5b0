"""Every POSTed body vetted as the stdio lines are, before the SDK's HTTP transport sees it.

The SDK's streamable HTTP transport answers a body it cannot parse with a JSON-RPC error, but
with `id: null` and the parser's words ("unexpected end of hex escape at line 1 column 106"),
and it takes a request whose id is not a string or an integer for a notification: 202, no
answer ever. Here each body goes through `mcp_vet.vet_line` first: a refused one gets a 400
whose JSON-RPC error names what is wrong and echoes the request's id when it has a valid one;
a lone surrogate in a tool's arguments, which the SDK's parser cannot read at all on this
transport, gets an invalid-params error naming the field. Bodies over the size limit are
refused (413) while being read, never held whole.
"""

from __future__ import annotations

import mcp_types as types
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cairn.adapters.mcp import MAX_ARGUMENT_DEPTH
from cairn.adapters.mcp_vet import (
    MAX_LINE_BYTES,
    Rejected,
    find_flaw,
    rejection,
    too_long,
    vet_line,
)


class VetBodies:
    """ASGI middleware: JSON-RPC errors for POST bodies the server should not be handed."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self._app(scope, receive, send)
            return
        body, trailing = await _read_body(receive)
        if body is None:
            await _refuse(413, too_long(), scope, receive, send)
            return
        refused = vet_body(body)
        if refused is not None:
            await _refuse(400, refused, scope, receive, send)
            return
        await self._app(scope, _replay(body, trailing, receive), send)


def vet_body(body: bytes) -> Rejected | None:
    """The error answering `body`, or None to hand it to the SDK (which answers blanks)."""
    vetted = vet_line(body)
    if isinstance(vetted, Rejected) or vetted is None:
        return vetted
    if not isinstance(vetted, types.JSONRPCRequest) or vetted.method != "tools/call":
        return None
    params = vetted.params or {}
    tool = params.get("name")
    flaw = find_flaw(
        params.get("arguments"),
        max_depth=MAX_ARGUMENT_DEPTH,
        root=tool if isinstance(tool, str) else "arguments",
    )
    if flaw is None:
        return None
    return rejection(
        types.INVALID_PARAMS, f"Invalid params: {flaw.sentence()}. Fix that value.", vetted.id
    )


async def _read_body(receive: Receive) -> tuple[bytes | None, Message | None]:
    """The whole body, or None once it passes the limit; and a message read past its end."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), message
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_LINE_BYTES:
            return None, None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), None


def _replay(body: bytes, trailing: Message | None, receive: Receive) -> Receive:
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]
    if trailing is not None:
        pending.append(trailing)

    async def replayed() -> Message:
        return pending.pop(0) if pending else await receive()

    return replayed


async def _refuse(
    status: int, refused: Rejected, scope: Scope, receive: Receive, send: Send
) -> None:
    body = refused.reply.model_dump_json(by_alias=True, exclude_unset=True)
    await Response(body, status_code=status, media_type="application/json")(scope, receive, send)
