"""The feature parts of the `Store` Protocol (sessions, code, lessons, context, pages, copy,
erase); `cairn.store.base.Store` joins them with the memory rows, vectors and lexical index."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from cairn.embeddings.base import Vector
from cairn.models import Contribution, Event, Memory
from cairn.records.code import ActRow, BranchGoal, BriefSession, CitationRow, NewAct, ProposalRow
from cairn.records.lessons import GivenLesson, LessonSession, MuteRule
from cairn.records.pages import Page, PageChunk, PageFile
from cairn.records.sessions import (
    Episode,
    NewEpisode,
    NewProcedure,
    Procedure,
    Relation,
    Retrieval,
    Session,
    StoredAssessment,
)


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
