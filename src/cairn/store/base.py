"""The storage seam: one small Protocol, one module per backend.

Backends persist and look up; they never rank, embed or decide policy (the core owns the
lifecycle). What a backend must provide beyond plain rows:

- `transaction()`: a write transaction that serialises writers (SQLite `BEGIN IMMEDIATE`,
  a PostgreSQL transaction-scoped advisory lock, one key per database, taken first), so
  read-check-write sequences such as deduplication are race-free.
  Calls made inside it join it; calls made outside it run in their own short transaction.
- `nearest()`: cosine nearest neighbours among the vectors of one embedder identity,
  restricted by a `MemoryFilter`.
- `lexical_candidates()` / `lexical_stats()`: documents that share at least one analysed term
  with the query, and the per-scope statistics BM25 needs. Text analysis (folding, stemming)
  happens in `cairn.ranking.lexical` before anything reaches the backend, so every backend
  indexes exactly the same terms.

- `dump_table()` / `load_rows()`: a whole-store copy (export/import, `cairn migrate`) moves
  every table listed in `cairn.store.tables` as rows in one backend-neutral encoding.

Times cross this seam as timezone-aware UTC datetimes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from cairn.code.records import ActRow, BranchGoal, BriefSession, CitationRow, NewAct, ProposalRow
from cairn.embeddings.base import Vector
from cairn.lessons.models import GivenLesson, LessonSession, MuteRule
from cairn.models import Contribution, Event, Memory, NewEvent, NewMemory
from cairn.page_records import Page, PageChunk, PageFile
from cairn.sessions.models import (
    Episode,
    NewEpisode,
    NewProcedure,
    Procedure,
    Relation,
    Retrieval,
    Session,
    StoredAssessment,
)

# Columns the core may change after insert; everything else is written once.
UPDATABLE_FIELDS = frozenset(
    {
        "status",
        "until",
        "replaces",  # set once, when a stored claim is accepted as a memory's next version
        "replaced_by",
        "weight",
        "pinned",
        "access_count",
        "last_accessed_at",
        "confirmed",
        "cited",
        "contradicted",
        "evidence",
        "last_cited_at",
        "content",
        "summary",
        "reason",
        "diff_text",
        "error_trace",
        "tags",
        "source_ref",
        "source_event_id",
        "diff_files",
        "content_hash",
    }
)

# Counters that may be incremented atomically without a read.
COUNTER_FIELDS = frozenset({"access_count", "confirmed", "cited", "contradicted"})

# `context` holds the analysed text of the memory's session neighbours (cairn.neighbours).
LEXICAL_FIELDS: tuple[str, ...] = ("content", "tags", "source_ref", "reason", "context")


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Which memories a lookup may return.

    With `as_of` unset only current memories count (not replaced, not retired) whose status is
    in `statuses`. With `as_of` set, the memories believed at that instant count: written at or
    before it and not yet replaced or retired by then.
    """

    scopes: tuple[str, ...]
    as_of: datetime | None = None
    statuses: tuple[str, ...] = ("active",)
    types: tuple[str, ...] | None = None
    tags: tuple[str, ...] | None = None  # any of these
    since: datetime | None = None  # occurred_at >= since
    until: datetime | None = None  # occurred_at <= until


@dataclass(frozen=True, slots=True)
class LexicalDoc:
    """Analysed terms of one memory, per field, joined by single spaces."""

    content: str
    tags: str
    source_ref: str
    reason: str
    context: str = ""

    def field(self, name: str) -> str:
        value: str = getattr(self, name)
        return value


@dataclass(frozen=True, slots=True)
class LexicalRow:
    memory_id: int
    doc: LexicalDoc


@dataclass(frozen=True, slots=True)
class LexicalStats:
    """BM25 statistics over the memories a filter admits."""

    doc_count: int
    document_frequency: Mapping[str, int]
    average_length: Mapping[str, float]  # per field, in terms


class SessionStore(Protocol):
    """Sessions, retrievals, assessments, procedures, episodes, relations and the trace.

    `put_assessment` replaces an earlier assessment of the same ref in the same retrieval and
    returns it, so the core can take back the tallies it had counted. `tally_procedure` never
    takes a tally below zero. The trace is the events table read by scope and time.
    """

    def add_session(self, session: Session) -> None: ...

    def get_session(self, session_id: str) -> Session | None: ...

    def update_session(self, session_id: str, changes: Mapping[str, Any]) -> None: ...

    def add_retrieval(self, retrieval: Retrieval) -> None: ...

    def get_retrieval(self, retrieval_id: int) -> Retrieval | None: ...

    def session_retrievals(self, session_id: str) -> list[Retrieval]: ...

    def mark_feedback(self, retrieval_id: int, at: datetime) -> None: ...

    def put_assessment(self, assessment: StoredAssessment) -> StoredAssessment | None: ...

    def session_assessments(self, session_id: str) -> list[StoredAssessment]: ...

    def add_episode(self, episode: NewEpisode) -> int: ...

    def get_episodes(self, ids: Sequence[int]) -> list[Episode]: ...

    def episodes_for_sessions(self, session_ids: Sequence[str]) -> list[Episode]: ...

    def add_relation(self, from_id: int, to_id: int, kind: str, at: datetime) -> None: ...

    def relations_of(self, ids: Sequence[int]) -> list[Relation]: ...

    def trace_before(self, scope: str, at: datetime | None, limit: int) -> list[Event]: ...

    def trace_after(self, scope: str, at: datetime, limit: int) -> list[Event]: ...

    def select_memories(
        self, scopes: Sequence[str], *, types: Sequence[str] | None, pinned_only: bool, limit: int
    ) -> list[Memory]: ...

    def add_procedure(self, procedure: NewProcedure) -> int: ...

    def get_procedures(self, ids: Sequence[int]) -> list[Procedure]: ...

    def procedures_in(
        self, scopes: Sequence[str], *, as_of: datetime | None, limit: int
    ) -> list[Procedure]: ...

    def find_procedure(self, scope: str, content_hash: str) -> Procedure | None: ...

    def update_procedure(self, procedure_id: int, changes: Mapping[str, Any]) -> None: ...

    def tally_procedure(self, procedure_id: int, tally: str, by: int = 1) -> None: ...

    def add_contribution(
        self, procedure_id: int, session_id: str | None, contribution: Contribution
    ) -> None: ...

    def put_procedure_vector(self, procedure_id: int, identity: str, vector: Vector) -> None: ...

    def get_procedure_vectors(self, ids: Sequence[int], identity: str) -> dict[int, Vector]: ...


class CodeStore(Protocol):
    """Code awareness and the lifecycle (migration 0003): citations, branch goals, acts, tidy
    proposals, and the lookups the brief, the acts, resting and stats need.

    `cited_on_branch` reads the cites made on the branch, or in a session opened on it.
    `upsert_proposal` never reopens a decided (accepted, declined) proposal.
    """

    def put_citation(self, citation: CitationRow) -> None: ...

    def get_citations(self, memory_ids: Sequence[int]) -> dict[int, CitationRow]: ...

    def current_citations(self, scopes: Sequence[str] | None) -> list[CitationRow]: ...

    def memories_citing_commit(self, scope: str, sha: str) -> list[int]: ...

    def rewrite_commit_citations(self, pairs: Sequence[tuple[str, str]]) -> int: ...

    def citation_roots(self, scope: str, limit: int) -> list[str]: ...

    def set_branch_goal(self, goal: BranchGoal) -> None: ...

    def get_branch_goal(self, scope: str, branch: str) -> BranchGoal | None: ...

    def branch_memories(
        self, scopes: Sequence[str], branch: str, types: Sequence[str], limit: int
    ) -> list[Memory]: ...

    def branch_sessions(self, scope: str, branch: str, limit: int) -> list[BriefSession]: ...

    def add_cite(
        self,
        memory_id: int,
        *,
        scope: str | None,
        branch: str | None,
        session_id: str | None,
        integration: str | None,
        at: datetime,
    ) -> None: ...

    def cited_on_branch(self, scope: str, branch: str) -> list[int]: ...

    def cited_in_session(self, session_id: str) -> list[int]: ...

    def cites_in(self, scopes: Sequence[str] | None) -> list[tuple[int, str | None, datetime]]: ...

    def events_of_kind(self, kinds: Sequence[str], scopes: Sequence[str] | None) -> list[Event]: ...

    def add_act(self, act: NewAct) -> int: ...

    def get_act(self, act_id: int) -> ActRow | None: ...

    def acts_in(self, scope: str, kinds: Sequence[str], limit: int) -> list[ActRow]: ...

    def mark_act_undone(self, act_id: int, at: datetime) -> None: ...

    def idle_memories(self, scopes: Sequence[str], before: datetime) -> list[Memory]: ...

    def current_memories(
        self,
        scopes: Sequence[str],
        *,
        types: Sequence[str] | None = None,
        statuses: Sequence[str] = ("active",),
        limit: int = 2000,
    ) -> list[Memory]: ...

    def index_health(self, scopes: Sequence[str] | None) -> dict[str, Any]: ...

    def upsert_proposal(
        self,
        scope: str,
        kind: str,
        key: str,
        memory_ids: Sequence[int],
        payload: Mapping[str, Any],
        at: datetime,
    ) -> ProposalRow: ...

    def get_proposal(self, proposal_id: int) -> ProposalRow | None: ...

    def proposals(self, scope: str, statuses: Sequence[str]) -> list[ProposalRow]: ...

    def set_proposal_status(self, proposal_id: int, status: str, at: datetime | None) -> None: ...


class LessonStore(Protocol):
    """Lessons on tool calls (migration 0005): citations by the paths a call touches, lessons
    given per session, per-scope mute rules, and what agent sessions did.

    `citations_on_paths` reads the citations of current memories (active or resting) in
    `scopes` whose path is one of `exact`, lies under one of `under`, or holds glob characters
    (the caller matches those). `add_given_lessons` ignores rows already recorded. `add_mute`
    returns the existing rule when the same one exists (and False).
    """

    def citations_on_paths(
        self, scopes: Sequence[str], exact: Sequence[str], under: Sequence[str]
    ) -> list[CitationRow]: ...

    def add_given_lessons(self, rows: Sequence[GivenLesson]) -> None: ...

    def given_lessons(self, session_key: str) -> list[GivenLesson]: ...

    def forget_given_lessons(self, session_key: str) -> int: ...

    def add_mute(
        self, scope: str, kind: str, value: str, at: datetime, integration: str | None
    ) -> tuple[MuteRule, bool]: ...

    def mute_rules(self, scopes: Sequence[str]) -> list[MuteRule]: ...

    def remove_mute(self, scope: str, kind: str, value: str) -> bool: ...

    def touch_lesson_session(
        self, session_key: str, scope: str | None, at: datetime, *, changed: bool
    ) -> None: ...

    def lesson_session(self, session_key: str) -> LessonSession | None: ...

    def mark_reminded(self, session_key: str, at: datetime) -> None: ...


class ContextStore(Protocol):
    """Session neighbours (migration 0004): each memory's place among the memories of its scope
    and session, the window vector built from its neighbours, and its lexical `context`.

    `session_windows` gives, for each memory written in a session, the ids of the memories of
    the same scope and session at most `reach` places before and after it in write order,
    itself included, ascending; a memory without a session is its own window. `put_window`
    stores a memory's window vector (computed by `cairn.neighbours` from the memories' own
    vectors, never by a model). `window_similarities` is cosine against window vectors - a
    memory without one counts with its own vector - for the best `k` memories the filter admits
    plus every id in `include` (whatever the filter says). `set_lexical_context` replaces only
    the `context` field of a memory's lexical entry. `occurred_times` is a light read of
    `occurred_at` for many candidates (the date lift needs no more of them).
    """

    def session_windows(
        self, memory_ids: Sequence[int], reach: int
    ) -> dict[int, tuple[int, ...]]: ...

    def put_window(self, memory_id: int, identity: str, vector: Vector) -> None: ...

    def delete_window(self, memory_id: int) -> None: ...

    def window_similarities(
        self, filt: MemoryFilter, identity: str, vector: Vector, k: int, include: Sequence[int]
    ) -> dict[int, float]: ...

    def set_lexical_context(self, memory_id: int, context: str) -> None: ...

    def occurred_times(self, memory_ids: Sequence[int]) -> dict[int, datetime]: ...


class PageStore(Protocol):
    """The pages index (migration 0004): documentation files of a scope and their chunks.

    `sync_page_file` records a file's new fingerprint and replaces its chunks in one
    transaction; a chunk whose digest is unchanged keeps its id (and so its `doc_` ref).
    """

    def page_files(self, scope: str) -> dict[str, PageFile]: ...

    def sync_page_file(self, scope: str, file: PageFile, chunks: Sequence[PageChunk]) -> None: ...

    def drop_page_files(self, scope: str, paths: Sequence[str]) -> None: ...

    def pages_in(self, scope: str) -> list[Page]: ...

    def get_pages(self, ids: Sequence[int]) -> list[Page]: ...


class CopyStore(Protocol):
    """Whole-store copy (export/import, `cairn migrate`): the tables of `cairn.store.tables`
    as rows in its backend-neutral encoding.

    `table_names()` lists the copied tables this store's schema holds, in copy order.
    `dump_table()` yields a table's rows in key order, those after the key `after` only when
    given, at most `limit`. `load_rows()` inserts rows with their ids as given, in one
    transaction (joining the caller's), moving id sequences past them and rebuilding what is
    derived per row (memory tags, the lexical index's own structures); a row that collides
    with one already stored raises `Conflict`. `finish_load()` builds what is cheaper to build
    once (PostgreSQL's HNSW indexes) and resets caches. `sequences()` gives each id sequence's
    high-water mark and `advance_sequences()` moves this store's sequences to at least those.
    `get_meta()` / `set_meta()` read and write the store's own key/value notes (`store_id`,
    migration checkpoints), which are never copied; `set_meta(key, None)` deletes one.
    """

    def table_names(self) -> list[str]: ...

    def count_rows(self, table: str) -> int: ...

    def dump_table(
        self, table: str, *, after: Sequence[Any] | None = None, limit: int | None = None
    ) -> Iterator[dict[str, Any]]: ...

    def load_rows(self, table: str, rows: Sequence[Mapping[str, Any]]) -> None: ...

    def finish_load(self) -> None: ...

    def sequences(self) -> dict[str, int]: ...

    def advance_sequences(self, positions: Mapping[str, int]) -> None: ...

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str | None) -> None: ...


class EraseStore(Protocol):
    """Purge (issue 12): what a backend does so that no byte of a purged memory remains.

    The core blanks the memory rows, redacts their events and refreshes their neighbours; then,
    still in the purge transaction, `erase_memories` deletes every other row that holds the
    memories' text or an image of it (own and window vectors, lexical entries, tag rows,
    citations, tidy proposals naming them) and whatever the backend's index keeps of deleted
    entries. After the commit, `erase_freed` removes the bytes the deleted and rewritten rows
    left on disk (SQLite: zeroed pages, an emptied write-ahead log; PostgreSQL: VACUUM); it
    raises `StoreBusy` when another connection keeps it from finishing.
    """

    def erase_memories(self, memory_ids: Sequence[int]) -> None: ...

    def erase_freed(self) -> None: ...


class Store(
    SessionStore, CodeStore, LessonStore, ContextStore, PageStore, CopyStore, EraseStore, Protocol
):
    @property
    def location(self) -> str: ...

    @property
    def backend(self) -> str: ...

    def close(self) -> None: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def maintain(self) -> None:
        """Keep the indexes healthy (consolidation): SQLite merges the FTS5 index's segments
        (`optimize`) and refreshes the planner's statistics; PostgreSQL runs `ANALYZE`."""
        ...

    # events
    def add_event(self, event: NewEvent) -> int: ...

    def get_events(self, ids: Sequence[int]) -> list[Event]: ...

    def events_for_memories(
        self, memory_ids: Sequence[int], *, limit: int
    ) -> dict[int, list[Event]]:
        """Each memory's newest `limit` events, newest first; a memory without any is absent."""
        ...

    def redact_events(self, memory_id: int, *, note: str) -> int: ...

    def iter_events(self) -> Iterator[Event]: ...

    # memories
    def add_memory(self, memory: NewMemory) -> int: ...

    def get_memories(self, ids: Sequence[int]) -> list[Memory]: ...

    def find_current_by_hash(self, scope: str, content_hash: str) -> Memory | None: ...

    def update_memory(self, memory_id: int, changes: Mapping[str, Any]) -> None: ...

    def increment(self, memory_id: int, counter: str, by: int = 1) -> None: ...

    def touch(self, memory_ids: Sequence[int], at: datetime) -> None:
        """Count one access of each memory (access_count + 1, last_accessed_at = at)."""
        ...

    def filter_ids(self, filt: MemoryFilter, ids: Sequence[int]) -> set[int]: ...

    def iter_memories(self) -> Iterator[Memory]: ...

    def count_by(self, column: str, scopes: Sequence[str] | None) -> dict[str, int]: ...

    # vectors
    def put_vector(self, memory_id: int, identity: str, vector: Vector) -> None: ...

    def delete_vector(self, memory_id: int) -> None: ...

    def get_vectors(self, ids: Sequence[int], identity: str) -> dict[int, Vector]: ...

    def nearest(
        self, filt: MemoryFilter, identity: str, vector: Vector, k: int
    ) -> list[tuple[int, float]]: ...

    def vector_identities(self) -> dict[str, int]: ...

    def stale_vectors(
        self, scopes: Sequence[str] | None, identity: str, limit: int
    ) -> tuple[int, list[int]]:
        """Memories with content (every status but purged) whose vector is missing or was
        written by another embedder than `identity`: how many, and the first `limit` ids
        (ascending). `cairn reindex` re-embeds them."""
        ...

    # lexical
    def put_lexical(self, memory_id: int, doc: LexicalDoc) -> None: ...

    def delete_lexical(self, memory_id: int) -> None: ...

    def lexical_candidates(
        self, filt: MemoryFilter, terms: Sequence[str], limit: int
    ) -> list[LexicalRow]: ...

    def lexical_stats(self, filt: MemoryFilter, terms: Sequence[str]) -> LexicalStats: ...

    # whole-store copy (export/import, migrate)
    def import_memory(self, memory: Memory) -> None: ...

    def import_event(self, event: Event) -> None: ...

    def iter_vectors(self) -> Iterator[tuple[int, str, Vector]]: ...

    def size_bytes(self) -> int: ...
