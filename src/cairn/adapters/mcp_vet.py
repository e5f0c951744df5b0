"""Hostile input on the MCP wire: every line a client sends gets a message or a JSON-RPC error.

The SDK's stdio transport drops what it cannot parse without a word (see `mcp_stdio.py`), and
even what parses can carry things the rest of the server cannot hold: a lone UTF-16 surrogate
(`"\\ud800"` is valid JSON but not encodable UTF-8, so SQLite and the JSON encoder both fail on
it) or nesting deep enough to exhaust a recursive validator. `vet_line` turns one raw line into
either a JSON-RPC message for the session or the error to send back; `find_flaw` is the walk
both the transport and the tool layer use to say where such a value sits.

Surrogates inside a `tools/call`'s `arguments` pass the transport on purpose: the tool layer
answers them as a tool error naming the field, which an agent reads and acts on, rather than as
a protocol error its host may only log.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import mcp_types as types
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from pydantic import ValidationError

# The same bound the SDK puts on an HTTP body, so both transports refuse the same requests.
MAX_LINE_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE
# A JSON-RPC envelope is 3 levels, cairn's deepest arguments (a batch of memories with tags)
# 4 more; 64 leaves room for any honest client and stops hostile nesting well short of the
# validators' recursion limits.
MAX_MESSAGE_DEPTH = 64
_SHOWN_CHARS = 200
_ARGUMENTS = "message.params.arguments"


@dataclass(frozen=True, slots=True)
class Flaw:
    """Where in a value a problem sits (`remember.memories[0].content`) and what it is."""

    where: str
    problem: str
    kind: str  # "surrogate" or "depth"

    def sentence(self) -> str:
        # A path through hostile nesting is as long as the nesting: shown cut.
        where = self.where if len(self.where) <= 120 else self.where[:120] + "…"
        return f"{where} {self.problem}"


def escape_surrogates(text: str) -> str:
    """`text` with any lone surrogate written as a backslash escape (`\\ud800`), so it can
    be encoded and stored."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def safe_text(text: str, limit: int = _SHOWN_CHARS) -> str:
    """Peer text fit to quote in an answer: surrogates escaped, cut to `limit` characters."""
    shown = escape_surrogates(text)
    return shown if len(shown) <= limit else shown[:limit] + "…"


def _surrogate(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"holds a lone UTF-16 surrogate (\\u{ord(text[exc.start]):04x}) at character "
            f"{exc.start}, which is not Unicode text; send the character as a valid surrogate "
            "pair, or drop it"
        )
    return None


def find_flaw(value: object, *, max_depth: int, root: str) -> Flaw | None:
    """The first lone surrogate or over-deep nesting in a parsed JSON value, else None.

    Iterative, so a hostile depth cannot exhaust Python's own stack while looking.
    """
    stack: list[tuple[object, str, int]] = [(value, root, 1)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, str):
            problem = _surrogate(item)
            if problem is not None:
                return Flaw(where, problem, "surrogate")
        elif isinstance(item, dict | list):
            if depth > max_depth:
                return Flaw(where, f"nests more than {max_depth} levels deep", "depth")
            if isinstance(item, list):
                stack.extend((v, f"{where}[{i}]", depth + 1) for i, v in enumerate(item))
                continue
            for key, v in item.items():
                name = f"{where}.{safe_text(str(key), 60)}"
                problem = _surrogate(str(key))
                if problem is not None:
                    return Flaw(name, "(a key) " + problem, "surrogate")
                stack.append((v, name, depth + 1))
    return None


@dataclass(frozen=True, slots=True)
class Rejected:
    """A line that is not a message the session can take, and the error that answers it."""

    reply: types.JSONRPCError


def valid_id(request_id: object) -> bool:
    return isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool)
    )


def rejection(code: int, message: str, request_id: object = None) -> Rejected:
    # The id is echoed only when it is a valid one, so the client's waiting request resolves.
    error = types.ErrorData(code=code, message=message)
    echoed = request_id if valid_id(request_id) else None
    return Rejected(types.JSONRPCError(jsonrpc="2.0", id=echoed, error=error))  # type: ignore[arg-type]


def too_long() -> Rejected:
    return rejection(
        types.INVALID_REQUEST,
        f"Invalid request: a message longer than {MAX_LINE_BYTES} bytes was refused unread; "
        "send less per call (split a batch of memories).",
    )


def vet_line(line: bytes) -> types.JSONRPCMessage | Rejected | None:
    """One raw line off the wire: a message, the error answering it, or None for a blank line."""
    if len(line) > MAX_LINE_BYTES:
        return too_long()
    if not line.strip():
        return None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return rejection(
            types.PARSE_ERROR,
            f"Parse error: the message is not UTF-8 (byte 0x{line[exc.start]:02x} at offset "
            f"{exc.start}); send JSON encoded as UTF-8.",
        )
    try:
        parsed = json.loads(text)
    except RecursionError:
        return rejection(
            types.PARSE_ERROR,
            f"Parse error: the message nests more than {MAX_MESSAGE_DEPTH} levels deep.",
        )
    except ValueError as exc:
        return rejection(types.PARSE_ERROR, f"Parse error: {safe_text(str(exc))}.")
    return _vet_parsed(parsed)


def _vet_parsed(parsed: object) -> types.JSONRPCMessage | Rejected:
    request_id = parsed.get("id") if isinstance(parsed, dict) else None
    method = parsed.get("method") if isinstance(parsed, dict) else None
    if isinstance(parsed, dict) and "id" in parsed and not valid_id(request_id):
        # The SDK would read such a request as a notification and never answer it.
        shown = safe_text(json.dumps(request_id), 40)
        return rejection(
            types.INVALID_REQUEST,
            f"Invalid request: id must be a string or an integer, not {shown}.",
        )
    flaw = find_flaw(parsed, max_depth=MAX_MESSAGE_DEPTH, root="message")
    if flaw is not None and not _tool_argument(flaw, method):
        return rejection(types.INVALID_REQUEST, f"Invalid request: {flaw.sentence()}.", request_id)
    try:
        return types.jsonrpc_message_adapter.validate_python(parsed, by_name=False)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, item['loc'])) or 'message'}: {item['msg']}"
            for item in exc.errors(include_url=False)[:5]
        )
        return rejection(
            types.INVALID_REQUEST,
            f"Invalid request: not a JSON-RPC 2.0 message ({safe_text(problems, 400)}).",
            request_id,
        )


def _tool_argument(flaw: Flaw, method: object) -> bool:
    """A surrogate in a tool's arguments, which the tool layer answers as a tool error."""
    inside = flaw.where.removeprefix(_ARGUMENTS)
    return (
        method == "tools/call"
        and flaw.kind == "surrogate"
        and inside != flaw.where
        and inside[:1] in ("", ".", "[")
    )
