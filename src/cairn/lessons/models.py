"""What the lesson tools return: `Lesson`, `LessonsResult`, `ConfirmResult`, `StartBrief`,
`ClaudeHookInstall`. The rows the store persists (given lessons, mute rules, lesson sessions)
are in `cairn.records.lessons`.
"""

from __future__ import annotations

from dataclasses import dataclass

from cairn.records.lessons import MuteRule

MUTE_KINDS: tuple[str, ...] = ("type", "tag", "path")


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
