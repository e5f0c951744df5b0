"""Tool names kept for one release after their rename (deprecated): callable, not listed
(`mcp_surface.RENAMED`).

`pin` became `note` (a pin sounded like `pinned`, which is the opposite: always in briefs),
`episodes` and `history` became `trace` (commit writes episodes; these read the trace).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from cairn.adapters import mcp_render as render
from cairn.adapters.mcp import Binding, ToolResult, Where
from cairn.adapters.mcp_fields import Cwd, Scope, SessionId
from cairn.adapters.mcp_tools import Ctx


class DeprecatedToolset:
    """pin, episodes, history."""

    def __init__(self, binding: Binding) -> None:
        self._b = binding

    async def pin(
        self,
        ctx: Ctx,
        note: Annotated[str, Field(description="A working note: a result, plan or checklist.")],
        scope: Scope = None,
        cwd: Cwd = None,
        session_id: SessionId = None,
    ) -> ToolResult:
        """Deprecated: use note. Append a working note to the trace."""
        return await self._b.call(
            ctx,
            lambda mem, where: mem.pin(note, scope=scope, cwd=where, session_id=session_id),
            render.trace_write,
            Where(scope, cwd, session_id),
        )

    async def episodes(
        self,
        ctx: Ctx,
        timestamp: Annotated[str, Field(description="'YYYY-MM-DD HH:MM:SS' (UTC when no zone).")],
        scope: Scope = None,
        cwd: Cwd = None,
    ) -> ToolResult:
        """Deprecated: use trace(at). The trace lines around a moment."""
        return await self._b.call(
            ctx,
            lambda mem, where: mem.episodes(timestamp, scope=scope, cwd=where),
            render.trace_lines,
            Where(scope, cwd),
        )

    async def history(
        self,
        ctx: Ctx,
        max_chars: Annotated[int | None, Field(description="Default 4000.")] = None,
        scope: Scope = None,
        cwd: Cwd = None,
    ) -> ToolResult:
        """Deprecated: use trace. The latest trace lines, oldest first."""
        return await self._b.call(
            ctx,
            lambda mem, where: mem.history(max_chars, scope=scope, cwd=where),
            render.trace_lines,
            Where(scope, cwd),
        )
