"""Records of lessons on tool calls: what crosses the store seam and what the tools return.

Stored (migration 0005): `GivenLesson` (a lesson given in a session, so it is not given again),
`MuteRule` (a per-scope rule that silences lessons by type, tag or path) and `LessonSession`
(what an agent session did, so the Stop hook reminds only after changes). Returned: `Lesson`,
`LessonsResult`, `ConfirmResult`, `StartBrief`, `ClaudeHookInstall`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

MUTE_KINDS: tuple[str, ...] = ("type", "tag", "path")


# Stored ----------------------------------------------------------------------------------------
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


# Returned --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Lesson:
    """One thing worth knowing before the call, and why it was chosen.

    `question` is set for an edit on cited lines: it asks whether the memory still holds and
    names the ref to `confirm` or `correct`.
    """

    ref: str
    kind: str  # memory | procedure
    type: str  # the memory's type, or "procedure"
    summary: str
    why: str
    target: str  # the file or command the lesson is about
    score: float
    question: str | None = None
    source_ref: str | None = None
    pinned: bool = False

    def render(self) -> str:
        line = f"- {self.ref} [{self.type}] {self.summary} (why: {self.why})"
        return line if self.question is None else f"{line}\n  {self.question}"


@dataclass(frozen=True, slots=True)
class LessonsResult:
    """What `lessons` returns: the lessons (best first) and `text`, the same as one block for
    an agent's context; `text` is empty when nothing is worth saying."""

    tool: str
    scope: str
    lessons: tuple[Lesson, ...]
    text: str
    targets: tuple[str, ...] = ()  # the files and commands the call was read as touching
    session_id: str | None = None
    repeated: int = 0  # left out: already given in this session for the same target
    muted: int = 0  # left out by a mute rule
    budget_chars: int = 0
    used_chars: int = 0

    @property
    def refs(self) -> list[str]:
        return [lesson.ref for lesson in self.lessons]


@dataclass(frozen=True, slots=True)
class ConfirmResult:
    """What `confirm` did: `outcome` is `confirmation` (counted), `echo` (the writer itself:
    not counted), `repeat` (this client already counted in this session or day, or this person
    already confirmed), `derived`, or `undone` (`unconfirm` took a person's confirmation back).
    `integration` is who confirmed: the client, or `person` / `person:<name>`."""

    ref: str
    outcome: str
    counted: bool
    confirmed: int
    status: str
    integration: str
    message: str


@dataclass(frozen=True, slots=True)
class StartBrief:
    """What an agent is given when its session starts (Claude Code `SessionStart`), without a
    task: the standing rules of the scope, the branch and the lesson mute rules."""

    scope: str
    text: str
    refs: tuple[str, ...]
    mutes: tuple[MuteRule, ...] = ()


@dataclass(frozen=True, slots=True)
class ClaudeHookInstall:
    settings_path: str
    command: str
    changed: tuple[str, ...]  # hook events written or removed
    unchanged: tuple[str, ...]
