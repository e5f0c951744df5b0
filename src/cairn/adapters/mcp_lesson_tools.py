"""The lesson tools of the MCP server: `lessons` (read-only) and `confirm`.

Same pattern as `mcp_tools.py`: one method per tool, one `Cairn` call each.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from cairn.adapters.mcp import Binding, ToolResult, Where
from cairn.adapters.mcp_fields import Cwd, Ref, Scope
from cairn.adapters.mcp_tools import Ctx
from cairn.lessons.models import ConfirmResult, LessonsResult

AnySessionId = Annotated[
    str | None,
    Field(
        description="Your session: a cairn session_id from activate, or your agent's own session "
        "id. Lessons already given in it for the same file or command are not repeated."
    ),
]


class LessonToolset:
    """lessons, confirm."""

    def __init__(self, binding: Binding) -> None:
        self._b = binding

    async def lessons(
        self,
        ctx: Ctx,
        tool: Annotated[str, Field(description="The tool to be called, e.g. Edit.")],
        args: Annotated[
            dict[str, Any] | None,
            Field(description='Its arguments, e.g. {"command": "npm publish"}.'),
        ] = None,
        scope: Scope = None,
        cwd: Cwd = None,
        session_id: AnySessionId = None,
        limit: Annotated[int, Field(description="At most this many lessons.")] = 3,
    ) -> ToolResult:
        """Before a tool call: the few memories about it (citing lines it touches, naming
        its command or files), each with ref and why; often none. When an edit changes lines
        a memory cites, answer with confirm(ref) or correct(ref, ...)."""
        return await self._b.call(
            ctx,
            lambda mem, where: mem.lessons(
                tool, args, scope=scope, cwd=where, session_id=session_id, limit=limit
            ),
            _lessons_text,
            Where(scope, cwd, session_id if _is_cairn_session(session_id) else None),
        )

    async def confirm(
        self,
        ctx: Ctx,
        ref: Ref,
        scope: Scope = None,
        cwd: Cwd = None,
        session_id: AnySessionId = None,
    ) -> ToolResult:
        """Say a memory still holds (e.g. after a lesson asked about an edit of lines it
        cites); counts once per session when another client wrote it."""
        return await self._b.call(
            ctx,
            lambda mem, where: mem.confirm(ref, scope=scope, cwd=where, session_id=session_id),
            _confirm_text,
            Where(scope, cwd, session_id if _is_cairn_session(session_id) else None),
        )


def _is_cairn_session(session_id: str | None) -> bool:
    return isinstance(session_id, str) and session_id.startswith("ses_")


def _lessons_text(result: LessonsResult) -> str:
    if result.text:
        return result.text
    return f"nothing worth saying before this {result.tool} call"


def _confirm_text(result: ConfirmResult) -> str:
    return result.message
