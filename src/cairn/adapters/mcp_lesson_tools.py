"""The lesson tools of the MCP server: `lessons` (read-only) and `confirm`.

Same pattern as `mcp_tools.py`: one function per tool, one `Cairn` call each.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from cairn.adapters.mcp_binding import Where
from cairn.adapters.mcp_fields import Cwd, Ref, Scope
from cairn.adapters.mcp_toolkit import Arguments, Toolset
from cairn.core import Cairn
from cairn.lessons.models import ConfirmResult, LessonsResult

AnySessionId = Annotated[
    str | None,
    Field(
        description="Your session: a cairn session_id from activate, or your agent's own session "
        "id. Lessons already given in it for the same file or command are not repeated."
    ),
]


def _where(arguments: Arguments) -> Where:
    """An agent's own session id has no scope in cairn: only a cairn session stands in for
    the location."""
    session_id = arguments.get("session_id")
    cairn_session = isinstance(session_id, str) and session_id.startswith("ses_")
    return Where(
        arguments.get("scope"), arguments.get("cwd"), session_id if cairn_session else None
    )


tools = Toolset()


@tools.tool(
    lambda result: result.text or f"nothing worth saying before this {result.tool} call",
    where=_where,
)
def lessons(
    mem: Cairn,
    resolved: str | None,
    tool: Annotated[str, Field(description="The tool to be called, e.g. Edit.")],
    args: Annotated[
        dict[str, Any] | None,
        Field(description='Its arguments, e.g. {"command": "npm publish"}.'),
    ] = None,
    scope: Scope = None,
    cwd: Cwd = None,
    session_id: AnySessionId = None,
    limit: Annotated[int, Field(description="At most this many lessons.")] = 3,
) -> LessonsResult:
    """Before a tool call: the few memories about it (citing lines it touches, naming
    its command or files), each with ref and why; often none. When an edit changes lines
    a memory cites, answer with confirm(ref) or correct(ref, ...)."""
    return mem.lessons(tool, args, scope=scope, cwd=resolved, session_id=session_id, limit=limit)


@tools.tool(lambda result: result.message, where=_where)
def confirm(
    mem: Cairn,
    resolved: str | None,
    ref: Ref,
    scope: Scope = None,
    cwd: Cwd = None,
    session_id: AnySessionId = None,
) -> ConfirmResult:
    """Say a memory still holds (e.g. after a lesson asked about an edit of lines it
    cites); counts once per session when another client wrote it."""
    return mem.confirm(ref, scope=scope, cwd=resolved, session_id=session_id)
