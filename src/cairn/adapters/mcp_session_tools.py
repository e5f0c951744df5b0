"""The session tools of the MCP server: activate → recall → feedback → commit, and the trace.

Same pattern as `mcp_tools.py`: one function per tool, one `Cairn` call each. Tools that name a
session take their scope from it, so they never ask the client for roots.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from cairn.adapters import mcp_render as render
from cairn.adapters.mcp_fields import (
    Assessments,
    Cwd,
    NoteText,
    Procedure,
    RequiredSessionId,
    Scope,
    SessionId,
    TaskContext,
    Used,
    by_id,
)
from cairn.adapters.mcp_toolkit import Toolset
from cairn.core import Cairn
from cairn.errors import InvalidInput
from cairn.sessions.models import (
    Brief,
    CommitResult,
    EpisodesResult,
    FeedbackResult,
    HistoryResult,
    TraceWrite,
)

Resolved = str | None


tools = Toolset()


@tools.tool(render.brief)
def activate(
    mem: Cairn,
    resolved: Resolved,
    task: Annotated[str, Field(description="The task you are starting, in a sentence.")],
    scope: Scope = None,
    cwd: Cwd = None,
    task_context: TaskContext = None,
    standing: Annotated[
        bool, Field(description="false: leave out what your session-start brief gave.")
    ] = True,
) -> Brief:
    """Start a task: opens a session; returns its session_id and a brief (pinned
    memories, constraints, warnings, instructions, preferences, the branch, the hits and
    procedures for the task). Pass session_id to later calls; give feedback on the
    brief's retrieval_id before commit.
    """
    return mem.activate(
        task, scope=scope, cwd=resolved, task_context=task_context, standing=standing
    )


@tools.tool(render.feedback)
def feedback(
    mem: Cairn,
    resolved: Resolved,
    session_id: RequiredSessionId,
    retrieval_id: Annotated[str, Field(description="From the recall or activate assessed.")],
    assessments: Assessments,
) -> FeedbackResult:
    """Say which refs a retrieval returned were used and what they did; helped and
    harmed move them in later recalls. Assessing a ref again replaces its assessment.
    Returns the retrievals still waiting for feedback (commit needs none)."""
    return mem.feedback(session_id, retrieval_id, by_id(assessments))


@tools.tool(render.closed)
def commit(
    mem: Cairn,
    resolved: Resolved,
    session_id: RequiredSessionId,
    outcome: Annotated[str, Field(description="How the task went.")],
    summary: Annotated[str, Field(description="What was done and learned, briefly.")],
    procedure: Procedure = None,
    used: Used = None,
) -> CommitResult:
    """Finish the session: writes its episode and, when given, a procedure (a reusable
    method). Refused while a retrieval lacks feedback (the error lists which). Remember
    durable lessons first."""
    return mem.commit(session_id, outcome=outcome, summary=summary, procedure=procedure, used=used)


@tools.tool(render.closed)
def end(
    mem: Cairn,
    resolved: Resolved,
    session_id: RequiredSessionId,
    summary: Annotated[str | None, Field(description="What happened, briefly.")] = None,
) -> CommitResult:
    """Close a session without waiting for feedback, e.g. an abandoned task; prefer
    commit when the work is done."""
    return mem.end(session_id, summary=summary)


@tools.tool(render.trace_write)
def note(
    mem: Cairn,
    resolved: Resolved,
    text: NoteText,
    scope: Scope = None,
    cwd: Cwd = None,
    session_id: SessionId = None,
) -> TraceWrite:
    """Append a working note to the trace for the next turns (trace shows it); not
    searchable: remember what must be found later."""
    return mem.pin(text, scope=scope, cwd=resolved, session_id=session_id)


@tools.tool(render.trace_write)
def log_progress(
    mem: Cairn,
    resolved: Resolved,
    session_id: RequiredSessionId,
    text: Annotated[str, Field(description="One line on what was achieved.")],
    used: Used = None,
) -> TraceWrite:
    """Record a progress line on the session; used: the refs that helped."""
    return mem.log_progress(session_id, text, used)


@tools.tool(render.trace_lines)
def trace(
    mem: Cairn,
    resolved: Resolved,
    at: Annotated[
        str | None,
        Field(description="Lines around this moment, 'YYYY-MM-DD HH:MM:SS' (UTC)."),
    ] = None,
    max_chars: Annotated[
        int | None, Field(description="For the latest lines (default 4000).")
    ] = None,
    scope: Scope = None,
    cwd: Cwd = None,
) -> EpisodesResult | HistoryResult:
    """The trace (notes, progress, calls): the latest lines, oldest first, or the lines
    around a moment."""
    if at is None:
        return mem.history(max_chars, scope=scope, cwd=resolved)
    if max_chars is not None:
        raise InvalidInput("give at or max_chars, not both: max_chars is for the latest.")
    return mem.episodes(at, scope=scope, cwd=resolved)
