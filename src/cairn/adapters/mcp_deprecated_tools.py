"""Tool names kept for one release after their rename (deprecated): callable, not listed
(`mcp_surface.RENAMED`).

`pin` became `note` (a pin sounded like `pinned`, which is the opposite: always in briefs),
`episodes` and `history` became `trace` (commit writes episodes; these read the trace).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from cairn.adapters import mcp_render as render
from cairn.adapters.mcp_fields import Cwd, NoteText, Scope, SessionId
from cairn.adapters.mcp_toolkit import Toolset
from cairn.core import Cairn
from cairn.sessions.models import EpisodesResult, HistoryResult, TraceWrite

tools = Toolset()


@tools.tool(render.trace_write)
def pin(
    mem: Cairn,
    resolved: str | None,
    note: NoteText,
    scope: Scope = None,
    cwd: Cwd = None,
    session_id: SessionId = None,
) -> TraceWrite:
    """Deprecated: use note. Append a working note to the trace."""
    return mem.pin(note, scope=scope, cwd=resolved, session_id=session_id)


@tools.tool(render.trace_lines)
def episodes(
    mem: Cairn,
    resolved: str | None,
    timestamp: Annotated[str, Field(description="'YYYY-MM-DD HH:MM:SS' (UTC when no zone).")],
    scope: Scope = None,
    cwd: Cwd = None,
) -> EpisodesResult:
    """Deprecated: use trace(at). The trace lines around a moment."""
    return mem.episodes(timestamp, scope=scope, cwd=resolved)


@tools.tool(render.trace_lines)
def history(
    mem: Cairn,
    resolved: str | None,
    max_chars: Annotated[int | None, Field(description="Default 4000.")] = None,
    scope: Scope = None,
    cwd: Cwd = None,
) -> HistoryResult:
    """Deprecated: use trace. The latest trace lines, oldest first."""
    return mem.history(max_chars, scope=scope, cwd=resolved)
