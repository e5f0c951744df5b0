"""What the code-awareness and lifecycle tools return: citation checks, branch briefs, act
results, tidy proposals and decisions. The rows the store persists (`CitationRow`, `ActRow`,
`ProposalRow`, ...) are in `cairn.records.code`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cairn.records.code import BriefSession


@dataclass(frozen=True, slots=True)
class CitationCheck:
    """A citation's status now: `same` (with the lines where the cited text is now),
    `changed`, `gone` or `unchecked`, and the checkout that answered."""

    status: str
    lines: tuple[int, int] | None = None
    checked_in: str | None = None


UNCHECKED = CitationCheck("unchecked")


@dataclass(frozen=True, slots=True)
class BriefItem:
    ref: str
    type: str
    summary: str
    written_at: datetime


@dataclass(frozen=True, slots=True)
class BriefCommit:
    sha: str
    subject: str
    author: str
    at: datetime


@dataclass(frozen=True, slots=True)
class BranchBrief:
    """Where work on a branch stands: its goal, what is open, who worked on it, what landed."""

    branch: str
    scope: str
    goal: str | None
    goal_source: str | None  # explicit | session | None
    open_items: tuple[BriefItem, ...]
    recent_sessions: tuple[BriefSession, ...]
    recent_commits: tuple[BriefCommit, ...]
    base: str | None = None  # the branch commits are counted from (main, master...)

    @property
    def ref(self) -> str:
        return f"brief:{self.branch}"

    def summary_line(self) -> str:
        goal = f" — goal: {self.goal}" if self.goal else " — no goal set"
        return (
            f"branch {self.branch}{goal}; {len(self.open_items)} open item(s), "
            f"{len(self.recent_sessions)} recent session(s), "
            f"{len(self.recent_commits)} recent commit(s)"
        )

    def render(self) -> str:
        lines = [f"Branch brief: {self.branch}"]
        lines.append(f"Goal: {self.goal}" if self.goal else "Goal: (none set; `cairn branch goal`)")
        lines.append("Open items:" if self.open_items else "Open items: none")
        lines += [f"- {i.ref} [{i.type}] {i.summary}" for i in self.open_items]
        if self.recent_sessions:
            lines.append("Recent sessions:")
            lines += [
                f"- {s.session_id} {s.last_at:%Y-%m-%d %H:%M}Z {s.task or ''}".rstrip()
                for s in self.recent_sessions
            ]
        if self.recent_commits:
            base = f" (since {self.base})" if self.base else ""
            lines.append(f"Recent commits{base}:")
            lines += [f"- {c.sha[:10]} {c.subject} ({c.author})" for c in self.recent_commits]
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class ActResult:
    act_id: str
    kind: str
    subject: str
    scope: str
    confirmed: tuple[str, ...] = ()
    contradicted: tuple[str, ...] = ()
    rested: tuple[str, ...] = ()
    restored: tuple[str, ...] = ()
    undone: bool = False
    detail: Mapping[str, Any] = field(default_factory=dict)

    @property
    def undo(self) -> str:
        return f"cairn undo-act {self.act_id}"


@dataclass(frozen=True, slots=True)
class HookInstall:
    hooks_dir: str
    written: tuple[str, ...]
    chained: tuple[str, ...]  # existing hooks kept and run first
    unchanged: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Proposal:
    id: str
    kind: str
    refs: tuple[str, ...]
    summary: str
    status: str
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TidyDecision:
    id: str
    kind: str
    status: str
    changed: tuple[str, ...] = ()  # refs written or retired by accepting
    path: str | None = None  # the skill file written
