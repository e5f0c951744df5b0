"""What the session tools take and return: assessments, briefs, commit and feedback results,
the trace. The rows the store persists (sessions, retrievals, procedures, episodes) are in
`cairn.records.sessions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cairn.code.records import BriefItem
from cairn.models import Hit, ProcedureHit
from cairn.records.code import BriefSession
from cairn.records.lessons import MuteRule

OUTCOMES: tuple[str, ...] = ("success", "partial", "failure", "unknown")
EFFECTS: tuple[str, ...] = ("helped", "no_effect", "harmed", "unknown")


@dataclass(frozen=True, slots=True)
class Assessment:
    ref: str  # mem_N or proc_N
    used: bool
    effect: str


@dataclass(frozen=True, slots=True)
class BriefMemory:
    """A memory the brief shows because of what it is (pinned, a rule), not the task."""

    memory_id: str
    type: str
    summary: str
    content: str
    pinned: bool
    scope: str
    weight: float


@dataclass(frozen=True, slots=True)
class CommitLine:
    sha: str
    subject: str


@dataclass(frozen=True, slots=True)
class BranchBrief:
    """The branch part of a brief: what is checked out, its goal, what is open on it."""

    branch: str | None
    commits: tuple[CommitLine, ...] = ()
    goal: str | None = None
    open_items: tuple[BriefItem, ...] = ()
    recent_sessions: tuple[BriefSession, ...] = ()


@dataclass(frozen=True, slots=True)
class Brief:
    """What `activate` returns: the session id and, within a budget, what the task needs."""

    session_id: str
    scope: str
    task: str
    task_context: Mapping[str, Any]
    retrieval_id: str  # covers the brief's memories and procedures: give feedback before commit
    pinned: tuple[BriefMemory, ...]
    constraints: tuple[BriefMemory, ...]
    warnings: tuple[BriefMemory, ...]
    instructions: tuple[BriefMemory, ...]
    preferences: tuple[BriefMemory, ...]
    branch: BranchBrief
    memories: tuple[Hit, ...]
    procedures: tuple[ProcedureHit, ...]
    more_available: bool
    budget_chars: int
    used_chars: int
    lesson_mutes: tuple[MuteRule, ...] = ()  # the rules that keep lessons unsaid in this scope

    @property
    def refs(self) -> list[str]:
        shown = [*self.pinned, *self.constraints, *self.warnings, *self.instructions]
        shown += self.preferences
        return (
            [m.memory_id for m in shown]
            + [h.ref for h in self.memories]
            + [p.procedure_id for p in self.procedures]
        )


@dataclass(frozen=True, slots=True)
class FeedbackResult:
    session_id: str
    retrieval_id: str
    recorded: int
    pending: tuple[str, ...]  # retrievals of the session still waiting for feedback


@dataclass(frozen=True, slots=True)
class CommitResult:
    session_id: str
    status: str  # committed | ended
    episode_id: str
    procedure_id: str | None = None
    cited: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TraceWrite:
    """What pin and log_progress return: where the line went."""

    event_id: str
    scope: str
    at: datetime
    session_id: str | None = None


@dataclass(frozen=True, slots=True)
class TraceLine:
    at: datetime
    kind: str
    text: str
    event_id: str
    session_id: str | None = None

    @property
    def line(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.kind}: {self.text}"


@dataclass(frozen=True, slots=True)
class EpisodesResult:
    """The trace around a moment: up to `max_episode_lines` lines, oldest first."""

    scope: str
    at: datetime
    lines: tuple[TraceLine, ...] = field(default_factory=tuple)

    @property
    def text(self) -> str:
        return "\n".join(line.line for line in self.lines)


@dataclass(frozen=True, slots=True)
class HistoryResult:
    """The most recent trace lines, oldest first, within `max_chars` characters."""

    scope: str
    max_chars: int
    lines: tuple[TraceLine, ...]
    truncated: bool  # older lines exist that did not fit

    @property
    def text(self) -> str:
        return "\n".join(line.line for line in self.lines)
