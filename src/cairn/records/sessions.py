"""Stored records of the session layer: sessions, retrievals, assessments, procedures,
episodes and relations (migration 0002).

Stored rows are numbered (`Retrieval.id`, `Procedure.id`, `Episode.id`); everything that leaves
the core names them by ref (`ret_12`, `proc_3`, `ep_7`). Session ids are random
(`ses_<24 hex>`) because a session is opened by one client and named by others.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, ClassVar

from cairn.models import Contribution, Numbered, ProcedureEvidence, ProcedureFields, ProcedureHit

# The tallies feedback increments: the fields of `ProcedureEvidence`, which is built from the
# tally columns of `procedures` in this order.
TALLIES: tuple[str, ...] = tuple(f.name for f in fields(ProcedureEvidence))


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
class Retrieval(Numbered):
    """One activate or recall inside a session, and the refs it returned."""

    REF: ClassVar[str] = "ret"
    id: int  # the id of the recall/activate event, so `ret_N` and `evt_N` name the same call
    session_id: str
    at: datetime
    source: str  # activate | recall
    refs: tuple[str, ...]
    feedback_at: datetime | None = None

    @property
    def needs_feedback(self) -> bool:
        # A retrieval that returned nothing has nothing to assess.
        return bool(self.refs) and self.feedback_at is None


@dataclass(frozen=True, slots=True)
class StoredAssessment:
    retrieval_id: int
    session_id: str
    ref: str
    used: bool
    effect: str
    at: datetime


@dataclass(frozen=True, slots=True)
class NewProcedure(ProcedureFields):
    """What the core hands a store to insert: what the procedure teaches, and its origin."""

    session_id: str | None
    content_hash: str
    written_at: datetime


@dataclass(frozen=True, slots=True)
class Procedure(NewProcedure, Numbered):
    """A stored procedure: `id`, what was inserted, and what feedback has accumulated since."""

    REF: ClassVar[str] = "proc"
    evidence: ProcedureEvidence
    updated_at: datetime
    contributions: tuple[Contribution, ...] = ()  # newest first, at most three

    def as_hit(
        self, score: float = 0.0, explain: Mapping[str, float] | None = None
    ) -> ProcedureHit:
        taught = {f.name: getattr(self, f.name) for f in fields(ProcedureFields)}
        return ProcedureHit(
            **taught,
            procedure_id=self.ref,
            evidence=self.evidence,
            contributions=self.contributions,
            score=round(score, 6),
            explain=explain,
        )


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
class Episode(NewEpisode, Numbered):
    """A session's record, written when it is committed or ended: `id`, then what was inserted."""

    REF: ClassVar[str] = "ep"


@dataclass(frozen=True, slots=True)
class Relation:
    from_id: int
    to_id: int
    kind: str  # relates_to | version
