"""The PostgreSQL side of `cairn.store.bulk`: COPY into each table, in one transaction.

Ids come from the tables' own sequences, drawn for the whole batch first. Vectors are written
without touching the HNSW index when the embedder has none yet: keeping a graph up to date row
by row costs far more than building it once, so a bulk fill builds it at the end
(`finish_bulk`), as a whole-store copy does.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING

from cairn.embeddings.base import Vector
from cairn.store.base import LEXICAL_FIELDS
from cairn.store.postgres import lexical
from cairn.store.postgres.connection import Conn
from cairn.store.postgres.dialect import POSTGRES
from cairn.store.postgres.vectors import build_missing_indexes, vector_bytes
from cairn.store.sql.rows import new_memory_params

if TYPE_CHECKING:
    from cairn.store.bulk import BulkMemory
    from cairn.store.postgres.store import PostgresStore


def _ids(conn: Conn, sequence: str, count: int) -> list[int]:
    rows = conn.execute(
        "SELECT nextval(%s::regclass) FROM generate_series(1, %s)", (sequence, count)
    ).fetchall()
    return [int(row[0]) for row in rows]


_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)


def vectors_copy_data(ids: Sequence[int], identity: str, vectors: Sequence[Vector]) -> bytes:
    """Rows of (memory_id, identity, dims, embedding) in COPY's binary format.

    pgvector's text form costs ~0.6 ms a vector to print in Python; its binary form (dims,
    a zero, then big-endian float4) is one numpy conversion."""
    name = identity.encode("utf-8")
    parts = [_COPY_HEADER]
    for memory_id, vector in zip(ids, vectors, strict=True):
        embedding = vector_bytes(vector)
        dims = int(vector.shape[0])
        parts.append(
            struct.pack(">hiqi", 4, 8, memory_id, len(name)) + name
            + struct.pack(">iii", 4, dims, len(embedding)) + embedding
        )  # fmt: skip
    parts.append(struct.pack(">h", -1))
    return b"".join(parts)


def bulk_add(store: PostgresStore, identity: str, items: Sequence[BulkMemory]) -> list[int]:
    with store._db.transaction() as conn:
        ids = _ids(conn, "memories_id_seq", len(items))
        events = _ids(conn, "events_id_seq", len(items))
        params = [new_memory_params(POSTGRES, item.memory) for item in items]
        columns = ["id", *params[0]]
        with conn.cursor().copy(f"COPY memories ({', '.join(columns)}) FROM STDIN") as copy:
            for n, row in enumerate(params):
                row["source_event_id"] = events[n]
                copy.write_row([ids[n], *(_plain(v) for v in row.values())])
        with conn.cursor().copy(
            "COPY events (id, kind, scope, at, integration, memory_id, payload) FROM STDIN"
        ) as copy:
            for n, item in enumerate(items):
                m = item.memory
                payload = json.dumps(dict(item.event), ensure_ascii=False, sort_keys=True)
                copy.write_row([events[n], "remember", m.scope, m.written_at, m.integration,
                                ids[n], payload])  # fmt: skip
        with conn.cursor().copy(
            "COPY vectors (memory_id, identity, dims, embedding) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.write(vectors_copy_data(ids, identity, [item.vector for item in items]))
        _lexical(conn, ids, items)
        with conn.cursor().copy("COPY memory_tags (memory_id, tag) FROM STDIN") as copy:
            for n, item in enumerate(items):
                for tag in dict.fromkeys(item.memory.tags):
                    copy.write_row([ids[n], tag])
    store._db.note_growth(len(items))
    return ids


def _plain(value: object) -> object:
    """COPY writes Python values as text; a Json wrapper becomes its JSON text."""
    dumped = getattr(value, "obj", None)
    return json.dumps(dumped) if dumped is not None else value


def _lexical(conn: Conn, ids: list[int], items: Sequence[BulkMemory]) -> None:
    names = list(LEXICAL_FIELDS)
    columns = ["memory_id", *names, "doc", *(f"len_{name}" for name in names)]
    with conn.cursor().copy(f"COPY lexical ({', '.join(columns)}) FROM STDIN") as copy:
        for n, item in enumerate(items):
            fields = [item.lexical.field(name) for name in names]
            copy.write_row([ids[n], *fields, lexical.tsvector_literal(item.lexical),
                            *(len(text.split()) for text in fields)])  # fmt: skip


def finish_bulk(store: PostgresStore) -> int:
    """Build the HNSW index of every embedder the bulk load left without one."""
    with store._db.transaction() as conn:
        return build_missing_indexes(conn)


def settle(store: PostgresStore) -> None:
    """Vacuum and analyse the tables a bulk load filled, as PostgreSQL's guide to populating a
    database advises: otherwise autovacuum does it within a minute or so, and whatever runs
    meanwhile shares the machine with it (`cairn bench scale` timed its recalls through it)."""
    with store._db.connection() as conn:  # autocommit: VACUUM runs outside a transaction
        conn.execute("VACUUM (ANALYZE) memories, memory_tags, events, vectors, lexical")
