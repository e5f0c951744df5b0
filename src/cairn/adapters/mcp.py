"""cairn's tools as an MCP server, on the official SDK's `MCPServer` (stdio and streamable HTTP).

The server is a thin adapter: every tool (in `mcp_tools.py` and the `mcp_*_tools.py` modules,
declared with `mcp_toolkit.py`) makes one `Cairn` call through `Binding.call`
(`mcp_binding.py`), which adds only what MCP itself brings: who is calling, where (the
client's roots) and errors as tool errors. This module adds what the server as a whole does:

* **Arguments** that do not fit a tool's schema (unknown fields, wrong types, a lone
  surrogate, nesting past `MAX_ARGUMENT_DEPTH`) are answered as a tool error, on one line
  (`error: <message>`), and the server carries on.
* **A store that will not open** (damaged, not a cairn store) does not stop the server: it
  still answers `initialize` and `tools/list`, and every tool call answers the store's error
  until the store opens (it is retried per call, so moving the bad file aside is enough).
* **What clients list**: lean, typed schemas without deprecated names (`CairnServer`).
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import Any

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from pydantic import ValidationError

from cairn.adapters import (
    mcp_deprecated_tools,
    mcp_lesson_tools,
    mcp_session_tools,
    mcp_tools,
)
from cairn.adapters.mcp_binding import (
    Binding,
    StoreOpener,
    ToolResult,
    error_result,
    with_progress,
)
from cairn.adapters.mcp_outputs import OUTPUT_SCHEMAS, accepting_errors
from cairn.adapters.mcp_stdio import serve_stdio
from cairn.adapters.mcp_surface import (
    RENAMED,
    advertised,
    chosen_set,
    in_set,
    tool_annotations,
)
from cairn.adapters.mcp_vet import find_flaw, safe_text
from cairn.config import Settings
from cairn.errors import CairnError, StoreError
from cairn.store import Store, open_store

# What other modules and tests take from here: the server's own API.
__all__ = [
    "Binding",
    "CairnServer",
    "build_server",
    "open_binding",
    "run_stdio",
    "with_progress",
]

# The tool groups in the order clients list their tools.
TOOLSETS = (
    mcp_tools.tools,
    mcp_session_tools.tools,
    mcp_lesson_tools.tools,
    mcp_deprecated_tools.tools,
)

SERVER_NAME = "cairn"
# cairn's deepest honest arguments (a batch of memories, each with a list of tags) nest 4 levels.
MAX_ARGUMENT_DEPTH = 32

INSTRUCTIONS = """\
cairn is your long-term memory across sessions. At the start of a task call activate (task,
cwd) and read the brief; recall when you need more; after using what came back, call feedback
for each retrieval_id; remember durable claims (decisions, constraints, lessons, warnings) as
you learn them; finish with commit (outcome, summary). Refs look like mem_12; get_memory shows
a memory in full with its history. A call's scope is its scope argument, else its cwd's git
repository, else its session's, else your client's first root; cwd must be absolute (a
relative one is resolved against your first root, or refused)."""


class CairnServer(MCPServer[Any]):
    """`MCPServer` whose argument errors read like cairn's: one line, what to change."""

    def __init__(
        self, tools: Sequence[Tool], aliases: Mapping[str, frozenset[str]], **kwargs: Any
    ) -> None:
        for tool in tools:
            # Unknown fields are refused rather than ignored: a misspelt `sesion_id` must not
            # silently turn a session call into a sessionless one.
            tool.parameters["additionalProperties"] = False
        self._schemas = {tool.name: tool.parameters for tool in tools}
        # What clients see: lean, typed schemas without the deprecated argument names.
        self._listed = [
            types.Tool(
                name=tool.name,
                title=tool.title,
                description=tool.description,
                input_schema=advertised(
                    tool.name, tool.parameters, aliases.get(tool.name, frozenset())
                ),
                output_schema=accepting_errors(OUTPUT_SCHEMAS[tool.name]),
                annotations=tool_annotations(tool.name),
            )
            for tool in tools
            if tool.name not in RENAMED
        ]
        self._listed_fields = {t.name: list(t.input_schema["properties"]) for t in self._listed}
        super().__init__(tools=list(tools), **kwargs)
        # Neither prompts nor resources are served, so neither is advertised.
        handlers = self._lowlevel_server._request_handlers
        for method in [m for m in handlers if m.startswith(("prompts/", "resources/"))]:
            del handlers[method]

    async def list_tools(self) -> list[types.Tool]:
        return list(self._listed)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        context: Context[Any, Any] | None = None,
    ) -> ToolResult:
        schema = self._schemas.get(name)
        if schema is None:
            return error_result(
                f"there is no tool {safe_text(repr(name))}; cairn's tools are "
                f"{', '.join(tool.name for tool in self._listed)}."
            )
        flaw = find_flaw(arguments, max_depth=MAX_ARGUMENT_DEPTH, root=name)
        if flaw is not None:
            return error_result(f"{flaw.sentence()}. Fix that value and call again.")
        fields = schema.get("properties", {})
        unknown = sorted(set(arguments) - set(fields))
        if unknown:
            # Named as listed (deprecated spellings still work but are not offered).
            listed = self._listed_fields.get(name, fields)
            return error_result(
                f"{name} has no field {', '.join(map(repr, unknown))}; its fields are "
                f"{', '.join(listed)}. Remove or rename it and call again."
            )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return error_result(argument_errors(name, exc.__cause__))
            raise


def argument_errors(tool: str, error: ValidationError) -> str:
    problems = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        problems.append(f"{where}: {item['msg']}")
    return (
        f"{tool} got arguments that do not fit its input schema: {'; '.join(problems)}. "
        "Fix them and call again."
    )


def build_server(binding: Binding, tool_set: str | None = None) -> CairnServer:
    """The server with the tools of `tool_set` (core, sessions, all; default `CAIRN_MCP_TOOLS`
    or core)."""
    chosen = chosen_set(tool_set)
    return CairnServer(
        [tool for tool in collect_tools(binding) if in_set(tool.name, chosen)],
        mcp_tools.ALIASES,
        name=SERVER_NAME,
        title="cairn memory",
        version=package_version(),
        instructions=INSTRUCTIONS,
        log_level="WARNING",
    )


def collect_tools(binding: Binding) -> list[Tool]:
    return [tool for toolset in TOOLSETS for tool in toolset.bind(binding)]


def package_version() -> str:
    try:
        return metadata.version("cairn-memory")
    except metadata.PackageNotFoundError:
        return "0"


def store_opener(location: str, settings: Settings) -> StoreOpener:
    """Opens the store; a file SQLite cannot read becomes one `StoreError` saying what to do."""

    def opener() -> Store:
        try:
            return open_store(location, busy_timeout_ms=settings.busy_timeout_ms)
        except sqlite3.OperationalError as exc:
            # Unreadable, read-only, a directory: the file may be fine, access is not.
            raise StoreError(
                f"the store at {location} cannot be opened: {exc}. Check that it is a file "
                "you may read and write, in a directory you may write; the server tries "
                "again on the next call."
            ) from exc
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"the store at {location} cannot be opened: {exc}. It is damaged or not a "
                "cairn store: move it aside (cairn starts a new store there) or restore it "
                "from a backup; the server picks it up on the next call."
            ) from exc

    return opener


def open_binding(location: str, settings: Settings) -> Binding:
    """A binding on the store at `location`, opened now if it can be, else on each call."""
    binding = Binding(store_opener(location, settings), settings)
    try:
        _ = binding.store  # opened now, so a healthy store costs the first call nothing
    except CairnError as exc:
        # Serving anyway: a client that cannot start the server cannot show the user why.
        print(f"cairn: {exc.message} Serving; every tool call answers this.", file=sys.stderr)
    return binding


def run_stdio(location: str, settings: Settings, tool_set: str | None = None) -> None:
    """Serve over stdin/stdout until the client closes the pipe."""
    chosen = chosen_set(tool_set)  # a wrong set name is refused before the store is opened
    binding = open_binding(location, settings)
    try:
        anyio.run(serve_stdio, build_server(binding, chosen))
    finally:
        binding.close()
