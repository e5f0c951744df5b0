"""Records that cross module boundaries: frozen, slotted dataclasses and the vocabularies.

Internally memories and events are numbered rows; everything that leaves the core names them
by ref (`mem_12`, `evt_40`), which `refs.py` parses.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, Literal

MEMORY_TYPES: tuple[str, ...] = (
    "fact",
    "preference",
    "decision",
    "constraint",
    "instruction",
    "lesson",
    "warning",
    "open_question",
    "task",
    "artifact",
)

DURABILITIES: tuple[str, ...] = ("episodic", "semantic", "permanent")

# Per-day exponential decay of weight, from the reference document on embeddings.
DECAY_PER_DAY: Mapping[str, float] = {"episodic": 0.15, "semantic": 0.03, "permanent": 0.0}

_PERMANENT_TYPES = frozenset({"preference", "decision", "constraint", "instruction"})
_EPISODIC_TYPES = frozenset({"task", "open_question"})


# The standing sections every brief opens with, whatever the task: (name, types or None for
# any, pinned only). The session brief and the session-start brief list the same ones.
STANDING_SECTIONS: tuple[tuple[str, tuple[str, ...] | None, bool], ...] = (
    ("pinned", None, True),
    ("constraints", ("constraint",), False),
    ("warnings", ("warning",), False),
    ("instructions", ("instruction",), False),
    ("preferences", ("preference",), False),
)


def default_durability(memory_type: str) -> str:
    if memory_type in _PERMANENT_TYPES:
        return "permanent"
    if memory_type in _EPISODIC_TYPES:
        return "episodic"
    return "semantic"


@dataclass(frozen=True)
class Numbered:
    """A stored, numbered record, named outside the core by its ref `<REF>_<id>` (`mem_12`,
    `ep_7`), which `refs.py` parses.

    A dataclass so that `id` is the first field of a record that also inherits the fields of
    its unnumbered `New...` twin (`class Memory(MemoryFields, Numbered)`): fields are ordered
    from the last base to the first. Empty slots, so each slotted subclass holds `id` itself
    and may sit beside another slotted base.
    """

    __slots__ = ()
    REF: ClassVar[str]
    id: int

    @property
    def ref(self) -> str:
        return f"{self.REF}_{self.id}"


Disposition = Literal["created", "matched", "boosted"]
Citation = Literal["same", "changed", "gone", "unchecked"]
RecallKind = Literal["memories", "pages", "all"]


@dataclass(frozen=True, slots=True)
class MemoryFields:
    """What a memory says and where it came from: shared by the stored `Memory` and the
    `NewMemory` a store is handed to insert. A class of its own (where `Procedure` inherits
    `NewProcedure` whole) because `NewMemory.replaces` has a default, while `Memory` keeps
    `replaces` among its required lifecycle fields, in column order."""

    scope: str
    type: str
    content: str
    summary: str
    durability: str
    weight: float
    tags: tuple[str, ...]
    reason: str | None
    source_ref: str | None
    pinned: bool
    branch: str | None
    session_id: str | None
    source_event_id: int | None
    diff_text: str | None
    diff_files: tuple[str, ...]
    error_trace: str | None
    integration: str | None
    content_hash: str
    written_at: datetime
    occurred_at: datetime


@dataclass(frozen=True, slots=True)
class Memory(MemoryFields, Numbered):
    """One stored version of a claim, as the store holds it: `id`, then the `MemoryFields`,
    then its lifecycle (the column order of `MEMORY_COLUMNS`)."""

    REF: ClassVar[str] = "mem"
    until: datetime | None
    replaces: int | None
    replaced_by: int | None
    status: str
    confirmed: int = 0
    cited: int = 0
    contradicted: int = 0
    evidence: Mapping[str, Any] = field(default_factory=dict)
    last_cited_at: datetime | None = None
    access_count: int = 0
    last_accessed_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class NewMemory(MemoryFields):
    """What the core hands a store to insert; the store assigns the id."""

    replaces: int | None = None


@dataclass(frozen=True, slots=True)
class NewEvent:
    """One call as the core hands it to a store to append; the store assigns the id."""

    kind: str
    scope: str | None
    session_id: str | None
    at: datetime
    integration: str | None
    memory_id: int | None
    payload: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Event(NewEvent, Numbered):
    """An append-only record of one call: `id`, then what was appended (the `events` columns)."""

    REF: ClassVar[str] = "evt"


@dataclass(frozen=True, slots=True)
class RememberResult:
    memory_id: str
    disposition: Disposition
    type: str
    scope: str
    source_event_id: str
    similarity: float | None = None
    stored: bool = True
    # Set when the claim was stored beside a near-duplicate carrying different values: the
    # memory it may update (linked both ways) and what differs (`3.11 → 3.12`).
    may_update: str | None = None
    changed: str | None = None


@dataclass(frozen=True, slots=True)
class ItemError:
    code: str
    message: str
    retryable: bool


@dataclass(frozen=True, slots=True)
class BatchItem:
    index: int
    ok: bool
    data: RememberResult | None = None
    error: ItemError | None = None


@dataclass(frozen=True, slots=True)
class RememberBatch:
    """The batch form of a typed remember: one result per item, in the items' order."""

    results: tuple[BatchItem, ...]
    ok: bool = True  # the call itself succeeded; each item says whether it did


@dataclass(frozen=True, slots=True)
class Hit:
    """One line of a recall answer."""

    ref: str
    kind: str
    summary: str
    score: float
    weak: bool
    source_ref: str | None
    citation: str
    until: datetime | None
    type: str | None = None
    scope: str | None = None
    content: str | None = None
    pathway: str = "direct"
    occurred_at: datetime | None = None
    explain: Mapping[str, float] | None = None
    provenance: Provenance | None = None
    via: str | None = None  # for pathway "associated": the direct hit it was reached from
    citation_lines: tuple[int, int] | None = None  # where the cited lines are now (`same`)
    # Current memories this one may update or be updated by (near-duplicates that differ in
    # values): the agent should not read either without the other.
    conflicts_with: tuple[str, ...] = ()
    resting: bool = False  # idle or contradicted twice: still found, ranked lower
    stale_vector: bool = False  # its vector is another embedder's: ranked by keywords only

    def __post_init__(self) -> None:
        # A displayed score is never negative: a cosine below zero means "unrelated", which a
        # score of 0 says without suggesting the memory counts against the query.
        if not self.score >= 0.0:
            object.__setattr__(self, "score", 0.0)

    @property
    def memory_id(self) -> str:
        return self.ref

    @classmethod
    def of_memory(
        cls,
        memory: Memory,
        score: float,
        *,
        preview: int,
        weak: bool = False,
        citation: str = "unchecked",
        **more: Any,
    ) -> Hit:
        """A memory as a hit: where it stands, and its content cut to `preview` characters;
        `more` sets the fields only some answers carry (explain, provenance, conflicts...)."""
        return cls(
            ref=memory.ref,
            kind="memory",
            summary=memory.summary,
            score=round(score, 6),
            weak=weak,
            source_ref=memory.source_ref,
            citation=citation,
            until=memory.until,
            type=memory.type,
            scope=memory.scope,
            content=memory.content[:preview],
            occurred_at=memory.occurred_at,
            **more,
        )


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a memory came from: the call that wrote it and the client that made the call."""

    source_kind: str
    integration: str | None
    integration_version: str | None = None
    origin_scope: str | None = None  # set only when the memory lives in another scope


@dataclass(frozen=True, slots=True)
class EvidenceRecord:
    """A raw source record under a recalled memory: an event (`evt_N`) or an episode (`ep_N`).

    `content` and `truncated` are filled only when a recall asks for `evidence="full"`.
    """

    evidence_id: str
    source_kind: str  # event | episode
    recorded_at: datetime
    occurred_at: datetime
    source_ref: Mapping[str, Any]
    supports: tuple[str, ...]  # the memory refs it underlies
    content: str | None = None
    truncated: bool | None = None


@dataclass(frozen=True, slots=True)
class ProcedureEvidence:
    """Use and effect tallies accumulated from feedback on a procedure."""

    used: int = 0
    not_used: int = 0
    helped: int = 0
    no_effect: int = 0
    harmed: int = 0
    unknown: int = 0


@dataclass(frozen=True, slots=True)
class Contribution:
    """One observed outcome of a procedure: captured at a commit or used in a later session."""

    effect: str
    contribution: str  # captured | used
    outcome: str
    outcome_summary: str
    occurred_at: datetime


@dataclass(frozen=True, slots=True)
class ProcedureFields:
    """What a procedure teaches and where it applies: shared by the stored procedure (and the
    `NewProcedure` a store is handed, in the column order of `procedures`) and the
    `ProcedureHit` recall returns."""

    scope: str
    goal: str
    summary: str
    context: Mapping[str, Any]
    steps: tuple[str, ...]
    caveats: tuple[str, ...]
    outcome: str
    outcome_summary: str


@dataclass(frozen=True, slots=True)
class ProcedureHit(ProcedureFields):
    """A procedure as recall and activate return it: evidence from past work, not an order."""

    procedure_id: str
    evidence: ProcedureEvidence
    contributions: tuple[Contribution, ...]
    score: float = 0.0
    explain: Mapping[str, float] | None = None

    def __post_init__(self) -> None:
        if not self.score >= 0.0:  # never shown negative, like a memory hit's score
            object.__setattr__(self, "score", 0.0)


@dataclass(frozen=True, slots=True)
class ReindexNotice:
    """Memories embedded by another model than the current one: `cairn reindex` re-embeds them."""

    count: int
    refs: tuple[str, ...]
    message: str


@dataclass(frozen=True, slots=True)
class RecallResult:
    retrieval_id: str
    query: str
    scope: str
    hits: tuple[Hit, ...]
    as_of: datetime | None = None
    procedures: tuple[ProcedureHit, ...] = ()
    evidence: tuple[EvidenceRecord, ...] = ()
    evidence_mode: str = "references"
    evidence_truncated: bool = False
    session_id: str | None = None
    # Memories whose vector another embedder wrote, waiting for `cairn reindex` (count, first
    # refs); set only when this recall met one of them among its candidates.
    needs_reindex: ReindexNotice | None = None

    @property
    def memories(self) -> tuple[Hit, ...]:
        """The seeds' name for the hits: direct ones first, then associated ones."""
        return self.hits

    @property
    def refs(self) -> list[str]:
        return [hit.ref for hit in self.hits]


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    ref: str
    summary: str
    written_at: datetime
    until: datetime | None


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """A memory as `get_memory` shows it: the stored version plus what is derived from it."""

    memory: Memory
    citation: str
    replaced: tuple[HistoryEntry, ...]  # what it replaced, newest first
    replaced_by_chain: tuple[HistoryEntry, ...]  # what replaced it, oldest first
    citation_lines: tuple[int, int] | None = None  # where the cited lines are now
    may_update: tuple[str, ...] = ()  # older near-duplicates with other values it may update
    may_be_updated_by: tuple[str, ...] = ()  # newer near-duplicates that may update it
    retire_reason: str | None = None  # why it was forgotten (status `retired`)

    @property
    def ref(self) -> str:
        return self.memory.ref


@dataclass(frozen=True, slots=True)
class GetResult:
    records: tuple[MemoryRecord, ...]
    unknown: tuple[str, ...]


def to_jsonable(value: Any) -> Any:
    """Turn records (and containers of them) into JSON-ready values; datetimes become ISO 8601."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, (Memory, Event, MemoryRecord)):
            out["ref"] = value.ref
        if isinstance(value, Hit) and value.kind == "memory":
            out["memory_id"] = value.ref  # the seeds' name for a recalled memory's ref
        return out
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or (
        isinstance(value, Sequence) and not isinstance(value, (str, bytes))
    ):
        return [to_jsonable(v) for v in value]
    return value
