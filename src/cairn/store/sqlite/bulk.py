"""The SQLite side of `cairn.store.bulk`: one transaction, `executemany` per table.

Ids are assigned here, above both the highest id and AUTOINCREMENT's high-water mark, so a
memory's event, vector and lexical rows can be written in the same pass; SQLite moves the
high-water mark itself when an explicit id passes it. The ids only grow, so the dense caches
append the new rows instead of reloading.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from cairn.models import NewMemory
from cairn.store.sql.rows import encode_value
from cairn.store.sqlite import lexical
from cairn.store.sqlite.dialect import SQLITE
from cairn.timeutil import to_micros

if TYPE_CHECKING:
    from cairn.store.bulk import BulkMemory
    from cairn.store.sqlite.store import SqliteStore


_FIELDS = tuple(f.name for f in fields(NewMemory))
_PLAIN = frozenset(_FIELDS) - {"tags", "diff_files", "pinned", "written_at", "occurred_at"}


def _encoded(memory: NewMemory, *, source_event_id: int) -> list[Any]:
    """`new_memory_params` in column order, without its per-field dispatch (a bulk load spent a
    third of its time there); empty lists are the common case and skip the JSON encoder."""
    out: list[Any] = []
    for name in _FIELDS:
        value = getattr(memory, name)
        if name == "source_event_id":
            value = source_event_id
        elif name not in _PLAIN:
            value = "[]" if value == () else encode_value(SQLITE, name, value)
        out.append(value)
    return out


def _next_id(conn: sqlite3.Connection, table: str) -> int:
    row = conn.execute(
        f"SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = '{table}'), 0), "
        f"coalesce((SELECT max(id) FROM {table}), 0))"
    ).fetchone()
    return int(row[0]) + 1


def bulk_add(store: SqliteStore, identity: str, items: Sequence[BulkMemory]) -> list[int]:
    with store._db.transaction() as conn:
        first_memory, first_event = _next_id(conn, "memories"), _next_id(conn, "events")
        ids = list(range(first_memory, first_memory + len(items)))
        conn.executemany(
            f"INSERT INTO memories (id, {', '.join(_FIELDS)}) "
            f"VALUES (?, {', '.join('?' for _ in _FIELDS)})",
            [
                (ids[n], *_encoded(item.memory, source_event_id=first_event + n))
                for n, item in enumerate(items)
            ],
        )
        conn.executemany(
            "INSERT INTO events (id, kind, scope, session_id, at, integration, memory_id, "
            "payload) VALUES (?, 'remember', ?, NULL, ?, ?, ?, ?)",
            [
                (first_event + n, it.memory.scope, to_micros(it.memory.written_at),
                 it.memory.integration, ids[n], SQLITE.json(dict(it.event)))
                for n, it in enumerate(items)
            ],
        )  # fmt: skip
        conn.executemany(
            "INSERT INTO vectors (memory_id, identity, dims, vector) VALUES (?, ?, ?, ?)",
            [
                (ids[n], identity, int(it.vector.shape[0]), SQLITE.vector(it.vector))
                for n, it in enumerate(items)
            ],
        )
        lexical.write_entries(conn, [(ids[n], it.lexical) for n, it in enumerate(items)])
        conn.executemany(
            "INSERT OR IGNORE INTO memory_tags (memory_id, tag) VALUES (?, ?)",
            [(ids[n], tag) for n, it in enumerate(items) for tag in it.memory.tags],
        )
    return ids
