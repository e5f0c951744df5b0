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
  with the query, and the per-scope statistics BM25 needs; `lexical_pool()` gives a recall
  both, and a wider filter's document count, in one call. Text analysis (folding, stemming)
  happens in `cairn.ranking.lexical` before anything reaches the backend, so every backend
  indexes exactly the same terms.

- `dump_table()` / `load_rows()`: a whole-store copy (export/import, `cairn migrate`) moves
  every table listed in `cairn.store.tables` as rows in one backend-neutral encoding.

Times cross this seam as timezone-aware UTC datetimes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol

from cairn.embeddings.base import Vector
from cairn.models import Event, Memory, NewEvent, NewMemory
from cairn.store.parts import (
    CodeStore,
    CopyStore,
    EraseStore,
    LessonStore,
    PageStore,
    SessionStore,
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

# The most memories a list counts before it says "at least" (a count scans what it counts).
COUNT_LIMIT = 10_000

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

    @property
    def scopes_and_statuses_only(self) -> bool:
        """Whether the filter is scopes and statuses alone (current memories only): what the
        counts both backends keep per (scope, status, open) answer exactly."""
        return (self.as_of, self.types, self.tags, self.since, self.until) == (None,) * 5


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
class Resembling:
    """What a new claim may restate: the current memory with its very content (`same`), else
    the closest memories at least as similar as asked, most similar first, with their cosines."""

    same: Memory | None
    near: tuple[tuple[Memory, float], ...] = ()


# The event that made a new memory, once the memory's id is known.
EventFor = Callable[[int], NewEvent]
# Relations from a new memory: (the other memory's id, the relation's kind).
Links = Sequence[tuple[int, str]]


@dataclass(frozen=True, slots=True)
class NearSearch:
    """Deduplication's search: the `k` memories whose own vectors from embedder `identity` are
    closest to `vector()`, kept when their cosine is at least `at_least`. `vector` is called
    only when the search runs (a claim restated word for word needs none), so the model may
    still be computing it when the search is asked for."""

    identity: str
    vector: Callable[[], Vector]
    k: int
    at_least: float


@dataclass(frozen=True, slots=True)
class Indexed:
    """What makes a new memory searchable: its vector from embedder `identity` and its lexical
    document, written with the memory."""

    identity: str
    vector: Vector
    doc: LexicalDoc


@dataclass(frozen=True, slots=True)
class LexicalStats:
    """BM25 statistics over the memories a filter admits."""

    doc_count: int
    document_frequency: Mapping[str, int]
    average_length: Mapping[str, float]  # per field, in terms

    @classmethod
    def counted(cls, averages: Sequence[Any], frequency: Mapping[str, int]) -> LexicalStats:
        """From (documents, each `LEXICAL_FIELDS` field's average length or None) and counts."""
        lengths = zip(LEXICAL_FIELDS, averages[1:], strict=True)
        return cls(int(averages[0]), frequency, {name: float(v or 0.0) for name, v in lengths})


@dataclass(frozen=True, slots=True)
class LexicalPool:
    """A query's keyword candidates, the statistics that rank them (None when nothing matched
    and the backend did not count them), and the document count of a wider filter (`sized`,
    the gate's rarity), read as one call so a backend may check its counters once."""

    rows: list[LexicalRow]
    stats: LexicalStats | None
    sized: int


@dataclass(frozen=True, slots=True)
class WindowMatches:
    """A window search's cosines, and the window vectors they were computed from and the
    memories' own vectors where the backend read them anyway (PostgreSQL, whose server computes
    the cosines): scoring the same memories against a second query vector, or reading their own
    vectors, then costs no round trip. A backend that scores in memory (SQLite) leaves both
    empty; the caller asks it again."""

    cosines: dict[int, float]
    vectors: dict[int, Vector]
    own: dict[int, Vector]


class ContextStore(Protocol):
    """Session neighbours (migration 0004): each memory's place among the memories of its scope
    and session, the window vector built from its neighbours, and its lexical `context`.

    `session_windows` gives, for each memory written in a session, the ids of the memories of
    the same scope and session at most `reach` places before and after it in write order,
    itself included, ascending; a memory without a session is its own window. `put_window`
    stores a memory's window vector (computed by `cairn.neighbours` from the memories' own
    vectors, never by a model). `window_similarities` is cosine against window vectors - a
    memory without one counts with its own vector - for the best `k` memories the filter admits
    plus every id in `include` (whatever the filter says); `window_matches` is the same search
    with the window and own vectors the backend read. `set_lexical_context` replaces only
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

    def window_matches(
        self, filt: MemoryFilter, identity: str, vector: Vector, k: int, include: Sequence[int]
    ) -> WindowMatches: ...

    def set_lexical_context(self, memory_id: int, context: str) -> None: ...

    def occurred_times(self, memory_ids: Sequence[int]) -> dict[int, datetime]: ...


class Store(
    SessionStore, CodeStore, LessonStore, ContextStore, PageStore, CopyStore, EraseStore, Protocol
):
    @property
    def location(self) -> str: ...

    @property
    def backend(self) -> str: ...

    @property
    def concurrent_reads(self) -> bool:
        """Whether a read on another thread, now, sees what this thread would and costs no
        more: recall then runs its dense search beside its keyword search."""
        ...

    @property
    def remote(self) -> bool:
        """Whether every statement waits on a server: remember then embeds a claim while its
        write transaction opens and looks the content up."""
        ...

    def close(self) -> None: ...

    def transaction(self, *, durable: bool = True) -> AbstractContextManager[None]:
        """One write transaction; nested blocks join it, and the outermost says whether it is
        durable. `durable=False`: a crash may drop this commit whole (PostgreSQL skips the WAL
        flush wait; SQLite's WAL commits with `synchronous = NORMAL` never wait for it), for
        writes that hold no user data."""
        ...

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

    def add_memory_with_event(
        self, memory: NewMemory, event: EventFor, indexed: Indexed | None = None, links: Links = ()
    ) -> tuple[int, int]:
        """Add a memory and the event that made it (`event(memory_id)`), the memory's
        `source_event_id` naming that event, its vector and lexical document when `indexed`
        is given, and a relation from it to each (memory id, kind) of `links`, dated its
        `written_at`; returns (memory id, event id)."""
        ...

    def get_memories(self, ids: Sequence[int]) -> list[Memory]: ...

    def find_current_by_hash(self, scope: str, content_hash: str) -> Memory | None: ...

    def resembling(self, scope: str, content_hash: str, search: NearSearch) -> Resembling:
        """The current memory of `scope` with this content hash; when there is none, its
        active or resting memories that `search` finds (deduplication's reads, in one go)."""
        ...

    def update_memory(self, memory_id: int, changes: Mapping[str, Any]) -> None: ...

    def increment(self, memory_id: int, counter: str, by: int = 1) -> None: ...

    def touch(self, memory_ids: Sequence[int], at: datetime) -> None:
        """Count one access of each memory (access_count + 1, last_accessed_at = at)."""
        ...

    def filter_ids(self, filt: MemoryFilter, ids: Sequence[int]) -> set[int]: ...

    def iter_memories(self) -> Iterator[Memory]: ...

    def count_by(self, column: str, scopes: Sequence[str] | None) -> dict[str, int]: ...

    # browsing (the app's lists)
    def page_memories(
        self, filt: MemoryFilter, *, before_id: int | None, limit: int, cited_only: bool = False
    ) -> list[Memory]:
        """Up to `limit` memories the filter admits, newest id first, ids below `before_id`
        (keyset paging); `cited_only` keeps those with a `source_ref`."""
        ...

    def count_memories(
        self, filt: MemoryFilter, *, cited_only: bool = False, at_most: int = COUNT_LIMIT
    ) -> int:
        """How many memories `page_memories` would page through, counted up to `at_most`
        (a count is a scan: past that, the list says "at least")."""
        ...

    def memory_days(self, scopes: Sequence[str] | None) -> list[tuple[date, str, int]]:
        """Memories written per UTC day and type (every version, every status but purged),
        oldest day first."""
        ...

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

    def lexical_pool(
        self, filt: MemoryFilter, terms: Sequence[str], limit: int, sized: MemoryFilter
    ) -> LexicalPool: ...

    # whole-store copy (export/import, migrate)
    def import_memory(self, memory: Memory) -> None: ...

    def import_event(self, event: Event) -> None: ...

    def iter_vectors(self) -> Iterator[tuple[int, str, Vector]]: ...

    def size_bytes(self) -> int: ...
