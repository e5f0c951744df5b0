"""Stored records of code awareness and the lifecycle (migration 0003): citations, branch goals,
acts, tidy proposals, and the sessions a branch brief lists. Refs: an act is `act_<n>`, a tidy
proposal `tidy_<n>`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from cairn.models import Numbered


@dataclass(frozen=True, slots=True)
class CitationRow:
    """What was true of a memory's `source_ref` when it was written.

    `root` is the checkout the memory was written from (the project folder later checks fall
    back to). `digest` hashes the cited text (normalised lines, the symbol's body, or the whole
    file); `line_hashes`, `before` and `after` hash each cited line and a few lines of context
    on each side, which is what lets a check find the lines again after edits above them.
    """

    memory_id: int
    scope: str
    kind: str  # file | directory | glob | lines | symbol | commit | url
    path: str | None
    symbol: str | None
    commit: str | None
    root: str | None
    start_line: int | None
    end_line: int | None
    digest: str | None
    line_hashes: tuple[str, ...]
    before: tuple[str, ...]
    after: tuple[str, ...]
    file_hash: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class BranchGoal:
    scope: str
    branch: str
    goal: str
    set_at: datetime
    integration: str | None = None
    session_id: str | None = None


@dataclass(frozen=True, slots=True)
class NewAct:
    scope: str
    kind: str  # merge | revert | discard
    subject: str  # a branch name, or a commit sha for a revert
    at: datetime
    integration: str | None
    effects: tuple[Mapping[str, Any], ...]  # {memory_id, effect, prior_status}
    detail: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ActRow(NewAct, Numbered):
    """A stored act: `id`, what was inserted, and when it was undone (the `acts` columns)."""

    REF: ClassVar[str] = "act"
    undone_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class ProposalRow(Numbered):
    REF: ClassVar[str] = "tidy"
    id: int
    scope: str
    kind: str  # merge | retire | contradiction | skill
    key: str  # identifies the proposal across runs, so a declined one is never made again
    memory_ids: tuple[int, ...]
    payload: Mapping[str, Any]
    status: str  # open | accepted | declined | stale
    created_at: datetime
    decided_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class BriefSession:
    session_id: str
    task: str | None
    last_at: datetime
    status: str | None = None
