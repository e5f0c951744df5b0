"""Stored records of lessons on tool calls (migration 0005): `GivenLesson` (a lesson given in a
session, so it is not given again), `MuteRule` (a per-scope rule that silences lessons by type,
tag or path) and `LessonSession` (what an agent session did, so the Stop hook reminds only
after changes)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class GivenLesson:
    """One lesson given in a session: `subject` is a ref (mem_4, proc_2), `target` the file or
    command it was given for, `kind` `note` or `question` (an edit on cited lines)."""

    session_key: str
    subject: str
    target: str
    kind: str
    scope: str
    at: datetime


@dataclass(frozen=True, slots=True)
class MuteRule:
    """Lessons of `type`, carrying `tag`, or on calls touching `path` (a glob) stay unsaid in
    `scope` (a `global` rule applies everywhere)."""

    id: int
    scope: str
    kind: str  # type | tag | path
    value: str
    created_at: datetime
    integration: str | None = None

    def describe(self) -> str:
        return f"lessons muted for {self.kind} {self.value} in {self.scope}"


@dataclass(frozen=True, slots=True)
class LessonSession:
    """An agent session as lessons see it: when it last changed something (edit, write, run)
    and when it was settled: reminded by the Stop hook, or seen calling remember."""

    session_key: str
    scope: str | None
    seen_at: datetime
    changed_at: datetime | None = None
    reminded_at: datetime | None = None

    @property
    def owes_reminder(self) -> bool:
        # Once per session, and only for one that changed code and remembered nothing: a
        # reminder at the end of every editing turn would nag, and teach agents to ignore it.
        return self.changed_at is not None and self.reminded_at is None
