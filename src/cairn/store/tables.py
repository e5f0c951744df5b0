"""What a whole-store copy carries: every table, described once, in backend-neutral terms.

Export/import (`cairn.exchange`) and `cairn migrate` move rows between stores through three
Store methods, `table_names()`, `dump_table()` and `load_rows()`, whose rows are plain dicts in
one encoding that both backends read and write and JSON can carry unchanged:

    int, real, text, bool   as themselves (None for NULL)
    time                    ISO 8601 in UTC with microseconds: "2026-08-01T12:00:00.000000+00:00"
    json                    the parsed value (objects, lists), never the stored text
    texts, ints             JSON lists (SQLite stores them as JSON text, PostgreSQL as arrays)
    vector                  base64 of the float32 bytes, so vectors round-trip bit-exactly

Adding a table to the copy is one entry in `TABLES`. Each backend maps the neutral kinds to its
own column types and knows the few tables stored differently (the lexical index; memory tags,
which are derived from `memories.tags`). Tables not listed are derived or private to a backend
(`memory_tags`, FTS5 shadow tables, `lexical_lengths`, `vector_indexes`, `meta`,
`schema_migrations`) and are rebuilt or kept by the target; `tests/store/test_copy_tables.py`
fails when a migration adds a table that is neither listed here nor in `NOT_COPIED`.

The lexical index is carried as its analysed documents (memory id plus the analysed text of
each field), not re-analysed from the memories: a document's `context` field comes from the
memory's session neighbours, and copying the documents keeps them exactly. The target rebuilds
its own index structures from them (FTS5 rows and lengths, tsvector + GIN), and PostgreSQL
builds its HNSW indexes once the vectors are in (`finish_load`).

Rows come out ordered by the table's key. A table's checksum is order-independent: the sum,
modulo 2**256, of the SHA-256 of every row's canonical JSON, so two stores that list rows in a
different order (text keys collate differently) still agree, and a duplicated row still counts.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from cairn.embeddings.base import Vector
from cairn.errors import InvalidInput
from cairn.store.base import LEXICAL_FIELDS

KINDS = frozenset({"int", "real", "text", "bool", "time", "json", "texts", "ints", "vector"})


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    kind: str


@dataclass(frozen=True, slots=True)
class Table:
    """One copied table: its columns, the key its rows are ordered and resumed by, and whether
    `id` comes from a sequence (PostgreSQL bigserial, SQLite AUTOINCREMENT)."""

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    serial: bool

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)

    def key_of(self, row: Mapping[str, Any]) -> list[Any]:
        return [row[name] for name in self.key]


def table(name: str, columns: str, *, key: str = "id", serial: bool = False) -> Table:
    """A table from `"name:kind name:kind ..."`; `key` names the ordering columns."""
    parsed = []
    for item in columns.split():
        column, _, kind = item.partition(":")
        if kind not in KINDS:
            raise ValueError(f"{name}.{column}: unknown kind {kind!r}")
        parsed.append(Column(column, kind))
    spec = Table(name, tuple(parsed), tuple(key.split()), serial)
    if not set(spec.key) <= set(spec.names):
        raise ValueError(f"{name}: key {spec.key} names unknown columns")
    return spec


_LEXICAL = "memory_id:int " + " ".join(f"{field}:text" for field in LEXICAL_FIELDS)

TABLES: tuple[Table, ...] = (
    table(
        "memories",
        "id:int scope:text type:text content:text summary:text durability:text weight:real "
        "tags:texts reason:text source_ref:text pinned:bool branch:text session_id:text "
        "source_event_id:int diff_text:text diff_files:texts error_trace:text integration:text "
        "content_hash:text written_at:time occurred_at:time until:time replaces:int "
        "replaced_by:int status:text confirmed:int cited:int contradicted:int evidence:json "
        "last_cited_at:time access_count:int last_accessed_at:time",
        serial=True,
    ),
    table(
        "events",
        "id:int kind:text scope:text session_id:text at:time integration:text memory_id:int "
        "payload:json",
        serial=True,
    ),
    table("vectors", "memory_id:int identity:text dims:int vector:vector", key="memory_id"),
    table("lexical", _LEXICAL, key="memory_id"),
    table(
        "sessions",
        "id:text scope:text task:text task_context:json status:text opened_at:time "
        "closed_at:time integration:text branch:text episode_id:int",
    ),
    table("retrievals", "id:int session_id:text at:time source:text refs:texts feedback_at:time"),
    table(
        "assessments",
        "retrieval_id:int ref:text session_id:text used:bool effect:text at:time",
        key="retrieval_id ref",
    ),
    table(
        "procedures",
        "id:int scope:text goal:text summary:text context:json steps:texts caveats:texts "
        "outcome:text outcome_summary:text session_id:text content_hash:text written_at:time "
        "updated_at:time used:int not_used:int helped:int no_effect:int harmed:int unknown:int",
        serial=True,
    ),
    table(
        "procedure_contributions",
        "id:int procedure_id:int session_id:text effect:text contribution:text outcome:text "
        "outcome_summary:text occurred_at:time",
        serial=True,
    ),
    table(
        "procedure_vectors",
        "procedure_id:int identity:text dims:int vector:vector",
        key="procedure_id",
    ),
    table(
        "episodes",
        "id:int session_id:text scope:text task:text outcome:text summary:text "
        "procedure_id:int started_at:time ended_at:time",
        serial=True,
    ),
    table("relations", "from_id:int to_id:int kind:text at:time", key="from_id to_id kind"),
    table(
        "citations",
        "memory_id:int scope:text kind:text path:text symbol:text commit_sha:text root:text "
        "start_line:int end_line:int digest:text fingerprint:json file_hash:text "
        "created_at:time",
        key="memory_id",
    ),
    table(
        "cites",
        "id:int memory_id:int scope:text branch:text session_id:text integration:text at:time",
        serial=True,
    ),
    table(
        "branch_goals",
        "id:int scope:text branch:text goal:text set_at:time integration:text session_id:text",
        serial=True,
    ),
    table(
        "acts",
        "id:int scope:text kind:text subject:text at:time integration:text effects:json "
        "detail:json undone_at:time",
        serial=True,
    ),
    table(
        "tidy_proposals",
        "id:int scope:text kind:text key:text memory_ids:ints payload:json status:text "
        "created_at:time decided_at:time",
        serial=True,
    ),
    table(
        "lessons_given",
        "session_key:text subject:text target:text kind:text scope:text at:time",
        key="session_key subject target kind",
    ),
    table(
        "lesson_mutes",
        "id:int scope:text kind:text value:text created_at:time integration:text",
        serial=True,
    ),
    table(
        "lesson_sessions",
        "session_key:text scope:text seen_at:time changed_at:time reminded_at:time",
        key="session_key",
    ),
    table("windows", "memory_id:int identity:text vector:vector", key="memory_id"),
    table(
        "page_files",
        "scope:text path:text mtime_ns:int size:int digest:text",
        key="scope path",
    ),
    table(
        "pages",
        "id:int scope:text path:text heading:text line_start:int line_end:int text:text "
        "digest:text",
        serial=True,
    ),
)

# Physical tables a copy leaves out: derived from copied rows, or private to one backend.
NOT_COPIED = frozenset(
    {
        "meta",
        "schema_migrations",
        "memory_tags",  # derived from memories.tags by load_rows
        "lexical_lengths",  # SQLite: derived from the lexical documents
        "lexical_totals",  # SQLite: kept by triggers on lexical_lengths
        "lexical_log",  # SQLite: kept by triggers on lexical_lengths
        "memory_counts",  # SQLite: kept by triggers on memories
        "lexical_groups",  # both: kept by triggers on the lexical rows and memories
        "lexical_terms",  # PostgreSQL: kept by triggers on lexical and memories
        "vector_indexes",  # PostgreSQL: HNSW indexes, built by finish_load
        "sqlite_sequence",  # SQLite: moved by explicit ids and advance_sequences
    }
)

_BY_NAME = {spec.name: spec for spec in TABLES}


def table_spec(name: str) -> Table:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise InvalidInput(
            f"{name!r} is not a table a copy carries; the tables are {', '.join(_BY_NAME)}."
        ) from None


# neutral values -----------------------------------------------------------------------------
def time_text(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def parse_time(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def vector_text(vector: Vector | Sequence[float]) -> str:
    return base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode("ascii")


def vector_blob(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)


# rows between the neutral encoding and a backend's values -----------------------------------
Converters = Mapping[str, Callable[[Any], Any]]


def neutral_row(spec: Table, values: Sequence[Any], convert: Converters) -> dict[str, Any]:
    """A stored row (values in column order) in the neutral encoding; `convert` maps a kind
    to the function that reads a non-NULL value of it (kinds without one pass unchanged)."""
    out: dict[str, Any] = {}
    for column, value in zip(spec.columns, values, strict=True):
        reader = convert.get(column.kind)
        out[column.name] = value if value is None or reader is None else reader(value)
    return out


def stored_values(spec: Table, row: Mapping[str, Any], convert: Converters) -> list[Any]:
    """A neutral row's values in column order, converted for storage; refuses rows of another
    shape and values that cannot be read, saying which."""
    if set(row) != set(spec.names):
        raise InvalidInput(
            f"a {spec.name} row has columns {sorted(row)}, expected {sorted(spec.names)}; "
            "it was written by another cairn version: export it again with this one."
        )
    values: list[Any] = []
    for column in spec.columns:
        value = row[column.name]
        writer = convert.get(column.kind)
        try:
            values.append(value if value is None or writer is None else writer(value))
        except (ValueError, TypeError, AttributeError) as exc:
            raise InvalidInput(
                f"a {spec.name} row holds an unreadable {column.name} ({exc}); the copy is "
                "damaged: export it again."
            ) from None
    return values


def keyset_pages(
    spec: Table,
    fetch: Callable[[Sequence[Any] | None, int], list[dict[str, Any]]],
    *,
    after: Sequence[Any] | None,
    limit: int | None,
    page: int,
) -> Iterator[dict[str, Any]]:
    """Rows after the key `after` (all when None), at most `limit`, fetched `page` at a time
    by `fetch(after, size)`, which returns rows in key order."""
    left = limit
    while left is None or left > 0:
        size = page if left is None else min(left, page)
        rows = fetch(after, size)
        yield from rows
        if len(rows) < size:
            return
        after = spec.key_of(rows[-1])
        left = None if left is None else left - len(rows)


# checksums ----------------------------------------------------------------------------------
_MODULUS = 2**256


def row_digest(row: Mapping[str, Any]) -> int:
    canonical = json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return int.from_bytes(hashlib.sha256(canonical.encode("utf-8")).digest(), "big")


@dataclass(frozen=True, slots=True)
class TableSum:
    """How many rows a table holds and their order-independent checksum."""

    rows: int
    checksum: str


def table_sum(rows: Iterable[Mapping[str, Any]]) -> TableSum:
    count, total = 0, 0
    for row in rows:
        count += 1
        total = (total + row_digest(row)) % _MODULUS
    return TableSum(count, f"{total:064x}")
