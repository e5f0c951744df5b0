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
)
from cairn.adapters.mcp_tools import Ctx


class SessionToolset:
    """activate, feedback, commit, end, pin, log_progress, episodes, history."""

    def __init__(self, binding: Binding) -> None:
        self._b = binding

    async def activate(
        self,
        ctx: Ctx,
        task: Annotated[str, Field(description="The task you are starting, in a sentence.")],
        scope: Scope = None,
        cwd: Cwd = None,
        task_context: TaskContext = None,
    ) -> ToolResult:
        """Start a task: opens a session and returns its session_id and a brief of what
        memory holds for it: pinned memories, constraints, warnings, instructions,
        preferences, the branch and its recent commits, the memories and procedures most
        relevant to the task; more_available says recall would find more.

        Pass session_id to later calls. The brief is the session's first retrieval: give
        feedback on its retrieval_id (like every recall's) before commit.
        """
        return await self._b.call(
            ctx,
            lambda mem, where: mem.activate(
                task, scope=scope, cwd=where, task_context=task_context
            ),
            render.brief,
            Where(scope, cwd),
        )

    async def feedback(
        self,
        ctx: Ctx,
        session_id: RequiredSessionId,
        retrieval_id: Annotated[
            str, Field(description="The retrieval_id of the recall or activate assessed.")
        ],
        assessments: Assessments,
    ) -> ToolResult:
        """Say which memories and procedures a retrieval returned were used and what they did
        (helped, no_effect, harmed, unknown). Helped and harmed move them in later recalls.
        Assessing the same ref again replaces the earlier assessment. Returns the session's
        retrievals still waiting for feedback; commit needs none left."""
        return await self._b.call(
            ctx,
            lambda mem, _: mem.feedback(session_id, retrieval_id, assessments),
            render.feedback,
        )

    async def commit(
        self,
        ctx: Ctx,
        session_id: RequiredSessionId,
        outcome: Annotated[
            str, Field(description="How the task went: success, partial, failure or unknown.")
        ],
        summary: Annotated[str, Field(description="What was done and learned, briefly.")],
        procedure: Procedure = None,
        used: Used = None,
    ) -> ToolResult:
        """Finish the session: writes its episode and, when given, captures a procedure (a
        reusable method with steps and caveats). Refused while any retrieval of the session
        lacks feedback; the error lists which. Remember durable lessons before committing."""
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
        """Close a session without a procedure and without waiting for feedback, e.g. when
        the task was abandoned. Prefer commit when the work is done."""
        return await self._b.call(
            ctx, lambda mem, _: mem.end(session_id, summary=summary), render.closed
        )

    async def pin(
        self,
        ctx: Ctx,
        note: Annotated[
            str, Field(description="A working note: an intermediate result, plan or checklist.")
        ],
        scope: Scope = None,
        cwd: Cwd = None,
        session_id: SessionId = None,
    ) -> ToolResult:
        """Append a working-memory note to the trace so the next turns see it (history).
        Pins are not searchable later: remember what should be found days from now."""
        return await self._b.call(
            ctx,
            lambda mem, where: mem.pin(note, scope=scope, cwd=where, session_id=session_id),
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
        """Record a progress line on the session; used lists the memories that helped
        (each counts a cite)."""
        return await self._b.call(
            ctx,
            lambda mem, _: mem.log_progress(session_id, text, used),
            render.trace_write,
        )

    async def episodes(
        self,
        ctx: Ctx,
        timestamp: Annotated[
            str, Field(description="The moment, 'YYYY-MM-DD HH:MM:SS' (UTC when no zone).")
        ],
        scope: Scope = None,
        cwd: Cwd = None,
    ) -> ToolResult:
        """The lines of the trace (pins, progress, calls) around a moment: what was going on
        then."""
        return await self._b.call(
            ctx,
            lambda mem, where: mem.episodes(timestamp, scope=scope, cwd=where),
            render.trace_lines,
            Where(scope, cwd),
        )

    async def history(
        self,
        ctx: Ctx,
        max_chars: Annotated[
            int | None, Field(description="At most this many characters (default 4000).")
        ] = None,
        scope: Scope = None,
        cwd: Cwd = None,
    ) -> ToolResult:
        """The most recent lines of the trace, pins included, oldest first: what the last
        turns were doing."""
        return await self._b.call(
            ctx,
            lambda mem, where: mem.history(max_chars, scope=scope, cwd=where),
            render.trace_lines,
            Where(scope, cwd),
        )
