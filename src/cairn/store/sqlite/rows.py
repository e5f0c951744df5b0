"""Row <-> record conversion for the SQLite backend."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any

from cairn.models import Event, Memory, NewMemory
from cairn.timeutil import from_micros, to_micros

MEMORY_COLUMNS = (
    "id, scope, type, content, summary, durability, weight, tags, reason, source_ref, pinned, "
    "branch, session_id, source_event_id, diff_text, diff_files, error_trace, integration, "
    "content_hash, written_at, occurred_at, until, replaces, replaced_by, status, confirmed, "
    "cited, contradicted, evidence, last_cited_at, access_count, last_accessed_at"
)
EVENT_COLUMNS = "id, kind, scope, session_id, at, integration, memory_id, payload"

_TIME_FIELDS = frozenset(
    {"until", "last_cited_at", "last_accessed_at", "written_at", "occurred_at"}
)
_JSON_FIELDS = frozenset({"tags", "evidence", "diff_files"})


def _opt_time(value: int | None) -> Any:
    return None if value is None else from_micros(value)


def _json_list(text: str) -> tuple[Any, ...]:
    # Most memories have no tags or diff files; a recall reads dozens of rows, so skip the parse.
    return () if text == "[]" else tuple(json.loads(text))


def _json_dict(text: str) -> dict[str, Any]:
    return {} if text == "{}" else dict(json.loads(text))


# Column names are the `Memory` field names; `encode_value` is the inverse of this table.
_MEMORY_FIELDS = tuple(name.strip() for name in MEMORY_COLUMNS.split(","))
_DECODE: dict[str, Callable[[Any], Any]] = {
    "tags": _json_list,
    "diff_files": _json_list,
    "evidence": _json_dict,
    "pinned": bool,
    "written_at": from_micros,
    "occurred_at": from_micros,
    "until": _opt_time,
    "last_cited_at": _opt_time,
    "last_accessed_at": _opt_time,
}


def memory_from_row(row: sqlite3.Row | tuple[Any, ...]) -> Memory:
    """A memory from a row of `MEMORY_COLUMNS`, each column decoded the way it is stored."""
    return Memory(
        **{
            name: _DECODE[name](value) if name in _DECODE else value
            for name, value in zip(_MEMORY_FIELDS, row, strict=True)
        }
    )


def new_memory_params(m: NewMemory) -> dict[str, Any]:
    """The INSERT parameters of a new memory: each field encoded as its column stores it."""
    return {f.name: encode_value(f.name, getattr(m, f.name)) for f in fields(NewMemory)}


def full_memory_params(m: Memory) -> dict[str, Any]:
    """Every column of a stored memory, id included (whole-store copy)."""
    names = [name.strip() for name in MEMORY_COLUMNS.split(",")]
    return {name: encode_value(name, getattr(m, name)) for name in names}


def encode_value(column: str, value: Any) -> Any:
    """Encode one column's value the way the schema stores it."""
    if value is None:
        return None
    if column in _TIME_FIELDS:
        return to_micros(value)
    if column in _JSON_FIELDS:
        return json.dumps(list(value) if column != "evidence" else dict(value), ensure_ascii=False)
    if column == "pinned":
        return int(value)
    return value


def event_from_row(row: tuple[Any, ...]) -> Event:
    eid, kind, scope, session_id, at, integration, memory_id, payload = row
    return Event(
        id=eid,
        kind=kind,
        scope=scope,
        session_id=session_id,
        at=from_micros(at),
        integration=integration,
        memory_id=memory_id,
        payload=json.loads(payload),
    )


def dump_payload(payload: Mapping[str, Any]) -> str:
    return json.dumps(dict(payload), ensure_ascii=False, sort_keys=True, default=str)
