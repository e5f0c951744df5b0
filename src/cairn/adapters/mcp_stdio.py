"""The stdio transport of `cairn mcp`: the SDK's, except that every line gets an answer.

The SDK's `mcp.server.stdio.stdio_server` reads each line with
`jsonrpc_message_adapter.validate_json` and, when that raises, sends the exception down the
read stream; `JSONRPCDispatcher._dispatch` (`mcp/shared/jsonrpc_dispatcher.py`) then only logs
it at debug level and returns. Malformed JSON, a line that is not UTF-8 (which the SDK's reader
first turns into U+FFFD with `errors="replace"`, so a string that survives is silently
altered), a `"\\ud800"` escape, or nesting past the JSON parser's recursion limit: the client
gets no response at all and waits forever. Its writer also dies on an answer that cannot be
encoded (a lone surrogate in a result), taking the server with it.

This transport feeds the same lowlevel server from its own reader and writer: each line is
vetted by `mcp_vet.vet_line`, refused lines are answered with a JSON-RPC error on the spot, and
an answer the encoder refuses becomes an internal error for the same request id.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.shared.message import SessionMessage
from pydantic_core import PydanticSerializationError

from cairn.adapters.mcp_vet import MAX_LINE_BYTES, Rejected, vet_line

logger = logging.getLogger(__name__)

Inbound = SessionMessage | Exception


def read_line(source: BinaryIO) -> bytes | None:
    """The next line, without its newline; None at end of input.

    A line longer than `MAX_LINE_BYTES` is read through and dropped, and comes back as
    `MAX_LINE_BYTES + 1` bytes so the vetting refuses it without holding it all in memory.
    """
    line = source.readline(MAX_LINE_BYTES + 1)
    if not line:
        return None
    if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
        while (rest := source.readline(MAX_LINE_BYTES + 1)) and not rest.endswith(b"\n"):
            pass
        return line
    return line.rstrip(b"\r\n")


def encode(message: types.JSONRPCMessage) -> bytes:
    """The message as one JSON line; an answer that cannot be encoded becomes an error."""
    try:
        text = message.model_dump_json(by_alias=True, exclude_unset=True)
    except (PydanticSerializationError, ValueError) as exc:
        if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            raise
        logger.warning("answer to request %r could not be encoded: %s", message.id, exc)
        error = types.ErrorData(
            code=types.INTERNAL_ERROR,
            message="cairn could not encode its answer as JSON (it held text that is not "
            "valid Unicode); the request did run. Check what it changed before retrying.",
        )
        fallback = types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
        text = fallback.model_dump_json(by_alias=True, exclude_unset=True)
    return text.encode("utf-8") + b"\n"


def _put(sink: BinaryIO, data: bytes) -> None:
    sink.write(data)
    sink.flush()


async def pump_in(
    source: BinaryIO,
    inbound: ObjectSendStream[Inbound],
    replies: ObjectSendStream[SessionMessage],
) -> None:
    """Lines in: messages to the session, refusals straight to the writer."""
    async with inbound, replies:
        while True:
            line = await anyio.to_thread.run_sync(read_line, source, abandon_on_cancel=True)
            if line is None:
                return
            vetted = vet_line(line)
            if isinstance(vetted, Rejected):
                await replies.send(SessionMessage(vetted.reply))
            elif vetted is not None:
                await inbound.send(SessionMessage(vetted))


async def pump_out(sink: BinaryIO, outbound: ObjectReceiveStream[SessionMessage]) -> None:
    async with outbound:
        async for item in outbound:
            try:
                data = encode(item.message)
            except (PydanticSerializationError, ValueError):
                logger.exception("dropped an unencodable %s", type(item.message).__name__)
                continue
            try:
                await anyio.to_thread.run_sync(partial(_put, sink, data))
            except OSError:
                return  # the client closed its end; nobody is left to answer


async def serve_streams(server: MCPServer[Any], source: BinaryIO, sink: BinaryIO) -> None:
    """Serve one client on a pair of byte streams until the input ends."""
    inbound_send, inbound_receive = anyio.create_memory_object_stream[Inbound](0)
    outbound_send, outbound_receive = anyio.create_memory_object_stream[SessionMessage](0)
    # The lowlevel server is what the SDK's own `run_stdio_async` drives; it has no public name.
    lowlevel = server._lowlevel_server
    async with anyio.create_task_group() as group:
        group.start_soon(pump_in, source, inbound_send, outbound_send.clone())
        group.start_soon(pump_out, sink, outbound_receive)
        # Closing the server's send end once it stops lets the writer drain and finish.
        async with outbound_send:
            await lowlevel.run(
                inbound_receive, outbound_send, lowlevel.create_initialization_options()
            )


@contextmanager
def claimed_stdio() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """The process's stdin and stdout as private byte streams, fds 0 and 1 diverted meanwhile.

    While serving, fd 0 reads the null device and fd 1 writes to stderr, so a library that
    prints cannot corrupt the protocol stream; both are restored on exit.
    """
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        # closefd=False: a reader thread may still block on wire_in after the server stops.
        with os.fdopen(wire_out, "wb", closefd=False) as sink:
            yield os.fdopen(wire_in, "rb", closefd=False), sink
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_out)


async def serve_stdio(server: MCPServer[Any]) -> None:
    """Serve over the process's stdin and stdout until the client closes its end."""
    with claimed_stdio() as (source, sink):
        await serve_streams(server, source, sink)
