"""The session tools of the MCP server: activate → recall → feedback → commit, and the trace.

Same pattern as `mcp_tools.py`: one method per tool, one `Cairn` call each. Tools that name a
session take their scope from it, so they never ask the client for roots.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from cairn.adapters import mcp_render as render
from cairn.adapters.mcp import Binding, ToolResult, Where
from cairn.adapters.mcp_fields import (
    Assessments,
    Cwd,
    Procedure,
    RequiredSessionId,
    Scope,
    SessionId,
    TaskContext,
    Used,
    by_id,
)
from cairn.adapters.mcp_tools import Ctx
from cairn.core import Cairn
from cairn.errors import InvalidInput
from cairn.sessions.models import EpisodesResult, HistoryResult


class SessionToolset:
    """activate, feedback, commit, end, note, log_progress, trace."""

    def __init__(self, binding: Binding) -> None:
        self._b = binding

    async def activate(
        self,
        ctx: Ctx,
        task: Annotated[str, Field(description="The task you are starting, in a sentence.")],
        scope: Scope = None,
        cwd: Cwd = None,
        task_context: TaskContext = None,
        standing: Annotated[
            bool, Field(description="false: leave out what your session-start brief gave.")
        ] = True,
    ) -> ToolResult:
        """Start a task: opens a session; returns its session_id and a brief (pinned
        memories, constraints, warnings, instructions, preferences, the branch, the hits and
        procedures for the task). Pass session_id to later calls; give feedback on the
        brief's retrieval_id before commit.
        """
        return await self._b.call(
            ctx,
            lambda mem, where: mem.activate(
                task, scope=scope, cwd=where, task_context=task_context, standing=standing
            ),
            render.brief,
            Where(scope, cwd),
        )

    async def feedback(
        self,
        ctx: Ctx,
        session_id: RequiredSessionId,
        retrieval_id: Annotated[str, Field(description="From the recall or activate assessed.")],
        assessments: Assessments,
    ) -> ToolResult:
        """Say which refs a retrieval returned were used and what they did; helped and
        harmed move them in later recalls. Assessing a ref again replaces its assessment.
        Returns the retrievals still waiting for feedback (commit needs none)."""
        return await self._b.call(
            ctx,
            lambda mem, _: mem.feedback(session_id, retrieval_id, by_id(assessments)),
            render.feedback,
        )

    async def commit(
        self,
        ctx: Ctx,
        session_id: RequiredSessionId,
        outcome: Annotated[str, Field(description="How the task went.")],
        summary: Annotated[str, Field(description="What was done and learned, briefly.")],
        procedure: Procedure = None,
        used: Used = None,
    ) -> ToolResult:
        """Finish the session: writes its episode and, when given, a procedure (a reusable
        method). Refused while a retrieval lacks feedback (the error lists which). Remember
        durable lessons first."""
        return await self._b.call(
            ctx,
            lambda mem, _: mem.commit(
                session_id, outcome=outcome, summary=summary, procedure=procedure, used=used
            ),
            render.closed,
        )

    async def end(
        self,
        ctx: Ctx,
        session_id: RequiredSessionId,
        summary: Annotated[str | None, Field(description="What happened, briefly.")] = None,
    ) -> ToolResult:
        """Close a session without waiting for feedback, e.g. an abandoned task; prefer
        commit when the work is done."""
        return await self._b.call(
            ctx, lambda mem, _: mem.end(session_id, summary=summary), render.closed
        )

    async def note(
        self,
        ctx: Ctx,
        text: Annotated[str, Field(description="A working note: a result, plan or checklist.")],
        scope: Scope = None,
        cwd: Cwd = None,
        session_id: SessionId = None,
    ) -> ToolResult:
        """Append a working note to the trace for the next turns (trace shows it); not
        searchable: remember what must be found later."""
        return await self._b.call(
            ctx,
            lambda mem, where: mem.pin(text, scope=scope, cwd=where, session_id=session_id),
            render.trace_write,
            Where(scope, cwd, session_id),
        )

    async def log_progress(
        self,
        ctx: Ctx,
        session_id: RequiredSessionId,
        text: Annotated[str, Field(description="One line on what was achieved.")],
        used: Used = None,
    ) -> ToolResult:
        """Record a progress line on the session; used: the refs that helped."""
        return await self._b.call(
            ctx,
            lambda mem, _: mem.log_progress(session_id, text, used),
            render.trace_write,
        )

    async def trace(
        self,
        ctx: Ctx,
        at: Annotated[
            str | None,
            Field(description="Lines around this moment, 'YYYY-MM-DD HH:MM:SS' (UTC)."),
        ] = None,
        max_chars: Annotated[
            int | None, Field(description="For the latest lines (default 4000).")
        ] = None,
        scope: Scope = None,
        cwd: Cwd = None,
    ) -> ToolResult:
        """The trace (notes, progress, calls): the latest lines, oldest first, or the lines
        around a moment."""

        def action(mem: Cairn, where: str | None) -> EpisodesResult | HistoryResult:
            if at is None:
                return mem.history(max_chars, scope=scope, cwd=where)
            if max_chars is not None:
                raise InvalidInput("give at or max_chars, not both: max_chars is for the latest.")
            return mem.episodes(at, scope=scope, cwd=where)

        return await self._b.call(ctx, action, render.trace_lines, Where(scope, cwd))
