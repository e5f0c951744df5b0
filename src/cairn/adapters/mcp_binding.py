"""What each MCP tool call needs from the MCP side, shared by the server (`mcp.py`) and the
tool modules (`mcp_tools.py`, `mcp_*_tools.py`), which import this module and never each other.

* **Who is calling.** The client's `clientInfo` (name and version, from `initialize` or the
  2026 request envelope) becomes the `Cairn` integration, so evidence counts per client. One
  `Cairn` per integration shares the one open store and the one embedder.
* **Where.** A call's scope comes from its `scope` or `cwd`; failing both (and with no
  `session_id`, whose session already has a scope) from the client's roots: the first
  `file://` root. Handshake-era clients are asked with a `roots/list` request; 2026-era
  clients get an `InputRequiredResult` and retry with the answer. A client without roots,
  or one that does not answer, leaves the server's working directory. A relative `cwd` is
  resolved against the first root, or refused without one.
* **Errors.** A `CairnError` becomes a tool error (`isError`) whose text is the CLI's line,
  `error: <message>`, and whose structured content is `{"error": {code, message, retryable}}`.

Blocking work (SQLite, the embedding model) runs on worker threads; the SQLite store keeps one
connection per thread, so concurrent calls do not share a connection.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import is_version_at_least
from pydantic import ValidationError

from cairn.adapters.mcp_outputs import structured
from cairn.adapters.mcp_vet import escape_surrogates, safe_text
from cairn.config import Settings
from cairn.core import Cairn
from cairn.embeddings.base import Embedder
from cairn.errors import CairnError, StoreError
from cairn.store import Store
from cairn.timeutil import Clock, system_clock

T = TypeVar("T")
ToolResult = types.CallToolResult | types.InputRequiredResult
Ctx = Context[Any, Any]

ROOTS_KEY = "cairn/roots"
ROOTS_TIMEOUT_S = 5.0
DEFAULT_INTEGRATION = "mcp"
MAX_IDENTITY_CHARS = 100
_INPUT_REQUIRED_SINCE = "2026-07-28"

# How often a long tool call tells a client with a progress token that it is still working.
PROGRESS_EVERY_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class Where:
    """The location arguments of a call, before the client's roots fill in for them."""

    scope: str | None = None
    cwd: str | None = None
    session_id: str | None = None

    @property
    def needs_roots(self) -> bool:
        return self.scope is None and self.cwd is None and self.session_id is None


class _SharedEmbedder:
    """Builds the embedder once, on first use, for every `Cairn` of the server."""

    def __init__(self, settings: Settings, embedder: Embedder | None) -> None:
        self._settings = settings
        self._embedder = embedder
        self._lock = threading.Lock()

    def __call__(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                from cairn.embeddings import make_embedder

                self._embedder = make_embedder(self._settings)
            return self._embedder


StoreOpener = Callable[[], Store]


class Binding:
    """The store and what each call needs from the MCP side (integration, roots, errors).

    Given a `StoreOpener` rather than an open store, the store is opened on first use and,
    while opening fails, again on each call, whose answer is then the store's error.
    """

    def __init__(
        self,
        store: Store | StoreOpener,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        clock: Clock = system_clock,
        cwd: str | Path | None = None,
        progress_every: float = PROGRESS_EVERY_SECONDS,
    ) -> None:
        self.progress_every = progress_every
        self._opener: StoreOpener | None = store if callable(store) else None
        self._store: Store | None = None if callable(store) else store
        self.settings = settings
        self._embedder = _SharedEmbedder(settings, embedder)
        self._clock = clock
        self._cwd = cwd
        self._cairns: dict[tuple[str, str | None], Cairn] = {}
        self._lock = threading.RLock()

    @property
    def store(self) -> Store:
        """The open store; raises the store's `CairnError` while it cannot be opened."""
        with self._lock:
            if self._store is None:
                assert self._opener is not None
                self._store = self._opener()
            return self._store

    def cairn_for(self, name: str, version: str | None) -> Cairn:
        with self._lock:
            key = (name, version)
            if key not in self._cairns:
                self._cairns[key] = Cairn(
                    self.store,
                    self.settings,
                    embedder=self._embedder,
                    clock=self._clock,
                    integration=name,
                    integration_version=version,
                    cwd=self._cwd,
                )
            return self._cairns[key]

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()

    async def call(
        self,
        ctx: Context[Any, Any],
        action: Callable[[Cairn, str | None], T],
        render: Callable[[T], str],
        where: Where | None = None,
    ) -> ToolResult:
        """Run one `Cairn` call for a tool: `action(cairn, cwd)`, then its text and structure."""
        cwd = where.cwd if where is not None else None
        if where is not None and (where.needs_roots or not _absolute(where.cwd)):
            found = await client_root(ctx)
            if isinstance(found, types.InputRequiredResult):
                return found
            if where.needs_roots:
                cwd = found
            elif found is None:
                # Resolving against the server's own directory would file memories under
                # whatever project the server happened to start in.
                return error_result(
                    f"cwd {safe_text(repr(where.cwd))} is relative and your client gave no "
                    "root to resolve it against; pass the absolute path you work in."
                )
            else:
                cwd = str(Path(found) / str(where.cwd))
        identity = client_identity(ctx)

        def run() -> T:
            # On the worker thread: opening a store that failed before may take a moment.
            return action(self.cairn_for(*identity), cwd)

        try:
            result = await with_progress(ctx, run, self.progress_every)
        except CairnError as exc:
            return error_result(exc.message, exc.as_dict())
        except sqlite3.DatabaseError as exc:
            # What the store did not translate itself: still one line, never a traceback.
            failed = StoreError(
                f"the store failed: {exc}. If this repeats, the file may be damaged: move it "
                "aside (cairn starts a new store there) or restore a backup."
            )
            return error_result(failed.message, failed.as_dict())
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=render(result))],
            structured_content=structured(result),
        )


async def with_progress(ctx: Context[Any, Any], work: Callable[[], T], every: float) -> T:
    """Run `work` on a worker thread; while it runs, tell a client that sent a progress token
    how long it has been working, every `every` seconds (a no-op for a client that sent none).

    A tool call can take seconds (a large batch `remember`, `tidy` over a big scope, the first
    store migration); without a sign of life a client may give up on it and retry the write.
    """
    outcome: list[T] = []
    failure: list[Exception] = []

    async def beat() -> None:
        ticks = 0
        while True:
            await anyio.sleep(every)
            ticks += 1
            await ctx.report_progress(ticks, None, f"working ({ticks * every:.0f} s)")

    async def attempt() -> None:
        try:
            outcome.append(await anyio.to_thread.run_sync(work))
        except Exception as exc:  # noqa: BLE001 - handed back to the caller unchanged below
            failure.append(exc)

    async with anyio.create_task_group() as group:
        group.start_soon(beat)
        await attempt()
        group.cancel_scope.cancel()
    if failure:
        raise failure[0]
    return outcome[0]


def _absolute(cwd: str | None) -> bool:
    return cwd is None or Path(cwd).expanduser().is_absolute()


def error_result(message: str, error: Mapping[str, object] | None = None) -> types.CallToolResult:
    """A tool error in the CLI's words: `error: <message>` on one line."""
    line = " ".join(message.split())
    detail = dict(error) if error is not None else {"code": "invalid_input", "message": line}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"error: {line}")],
        structured_content={"error": detail},
        is_error=True,
    )


def client_identity(ctx: Context[Any, Any]) -> tuple[str, str | None]:
    """The calling client's name and version as the integration; `mcp` when it gave none."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    if info is None or not info.name.strip():
        return DEFAULT_INTEGRATION, None
    # Peer-supplied text: kept short, since it is stored with every event the client causes,
    # and with any lone surrogate escaped, since the store cannot encode one.
    version = escape_surrogates((info.version or "").strip())[:MAX_IDENTITY_CHARS]
    return escape_surrogates(info.name.strip())[:MAX_IDENTITY_CHARS], version or None


async def client_root(ctx: Context[Any, Any]) -> str | types.InputRequiredResult | None:
    """The client's first `file://` root as a path, or None (then the server's directory)."""
    capabilities = ctx.session.client_capabilities
    if capabilities is None or capabilities.roots is None:
        return None
    version = ctx.protocol_version
    if version is not None and is_version_at_least(version, _INPUT_REQUIRED_SINCE):
        answer = (ctx.input_responses or {}).get(ROOTS_KEY)
        if answer is None:
            return types.InputRequiredResult(input_requests={ROOTS_KEY: types.ListRootsRequest()})
        return first_file_root(answer) if isinstance(answer, types.ListRootsResult) else None
    try:
        listed = await ctx.session.send_request(
            types.ListRootsRequest(),
            types.ListRootsResult,
            request_read_timeout_seconds=ROOTS_TIMEOUT_S,
            metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
        )
    except (MCPError, ValidationError, TimeoutError):
        # Roots are a hint: a client that cannot answer gets the server's directory.
        return None
    return first_file_root(listed)


def first_file_root(listed: types.ListRootsResult) -> str | None:
    for root in listed.roots:
        parsed = urlparse(str(root.uri))
        if parsed.scheme == "file" and parsed.path:
            return url2pathname(unquote(parsed.path))
    return None
