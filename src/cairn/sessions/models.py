"""Records of the session layer: sessions, retrievals, assessments, procedures, episodes, trace.

Stored rows are numbered (`Retrieval.id`, `Procedure.id`, `Episode.id`); everything that leaves
the core names them by ref (`ret_12`, `proc_3`, `ep_7`). Session ids are random
(`ses_<24 hex>`) because a session is opened by one client and named by others.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cairn.code.records import BriefItem, BriefSession
from cairn.lessons.models import MuteRule
from cairn.models import Contribution, Hit, ProcedureEvidence, ProcedureHit

OUTCOMES: tuple[str, ...] = ("success", "partial", "failure", "unknown")
EFFECTS: tuple[str, ...] = ("helped", "no_effect", "harmed", "unknown")
TALLIES: tuple[str, ...] = ("used", "not_used", "helped", "no_effect", "harmed", "unknown")


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    scope: str
    task: str
    task_context: Mapping[str, Any]
    status: str  # open | committed | ended
    opened_at: datetime
    closed_at: datetime | None = None
    integration: str | None = None
    branch: str | None = None
    episode_id: int | None = None

    @property
    def is_open(self) -> bool:
        return self.status == "open"


@dataclass(frozen=True, slots=True)
class Retrieval:
    """One activate or recall inside a session, and the refs it returned."""

    id: int  # the id of the recall/activate event, so `ret_N` and `evt_N` name the same call
    session_id: str
    at: datetime
    source: str  # activate | recall
    refs: tuple[str, ...]
    feedback_at: datetime | None = None

    @property
    def ref(self) -> str:
        return f"ret_{self.id}"

    @property
    def needs_feedback(self) -> bool:
        # A retrieval that returned nothing has nothing to assess.
        return bool(self.refs) and self.feedback_at is None


@dataclass(frozen=True, slots=True)
class Assessment:
    ref: str  # mem_N or proc_N
    used: bool
    effect: str


@dataclass(frozen=True, slots=True)
class StoredAssessment:
    retrieval_id: int
    session_id: str
    ref: str
    used: bool
    effect: str
    at: datetime


@dataclass(frozen=True, slots=True)
class Procedure:
    id: int
    scope: str
    goal: str
    summary: str
    context: Mapping[str, Any]
    steps: tuple[str, ...]
    caveats: tuple[str, ...]
    outcome: str
    outcome_summary: str
    evidence: ProcedureEvidence
    session_id: str | None
    content_hash: str
    written_at: datetime
    updated_at: datetime
    contributions: tuple[Contribution, ...] = ()  # newest first, at most three

    @property
    def ref(self) -> str:
        return f"proc_{self.id}"

    def as_hit(
        self, score: float = 0.0, explain: Mapping[str, float] | None = None
    ) -> ProcedureHit:
        return ProcedureHit(
            procedure_id=self.ref,
            goal=self.goal,
            summary=self.summary,
            context=self.context,
            steps=self.steps,
            caveats=self.caveats,
            outcome=self.outcome,
            outcome_summary=self.outcome_summary,
            evidence=self.evidence,
            contributions=self.contributions,
            scope=self.scope,
            score=round(score, 6),
            explain=explain,
        )


@dataclass(frozen=True, slots=True)
class NewProcedure:
    scope: str
    goal: str
    summary: str
    context: Mapping[str, Any]
    steps: tuple[str, ...]
    caveats: tuple[str, ...]
    outcome: str
    outcome_summary: str
    session_id: str | None
    content_hash: str
    written_at: datetime


@dataclass(frozen=True, slots=True)
class Episode:
    """A session's record, written when it is committed or ended."""

    id: int
    session_id: str
    scope: str
    task: str
    outcome: str
    summary: str
    procedure_id: int | None
    started_at: datetime
    ended_at: datetime

    @property
    def ref(self) -> str:
        return f"ep_{self.id}"


@dataclass(frozen=True, slots=True)
class NewEpisode:
    session_id: str
    scope: str
    task: str
    outcome: str
    summary: str
    procedure_id: int | None
    started_at: datetime
    ended_at: datetime


@dataclass(frozen=True, slots=True)
class Relation:
    from_id: int
    to_id: int
    kind: str  # relates_to | version


# What tools return --------------------------------------------------------------------------
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
