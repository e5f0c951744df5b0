"""Memory and event rows <-> records, on either SQL backend.

Column names are the `Memory` field names, in the same order (`tests/store/test_dialect.py`
holds them so), which lets a row become a `Memory` positionally. Each column is decoded the
way the dialect stores it; `encode_value` is the inverse. The decoders are built once per
dialect, since a recall reads dozens of rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from functools import cache
from typing import Any

from cairn.models import Event, Memory, NewEvent, NewMemory
from cairn.store.sql.dialect import Dialect
from cairn.store.sql.records import Columns

MEMORY_COLUMNS = (
    "id, scope, type, content, summary, durability, weight, tags, reason, source_ref, pinned, "
    "branch, session_id, source_event_id, diff_text, diff_files, error_trace, integration, "
    "content_hash, written_at, occurred_at, until, replaces, replaced_by, status, confirmed, "
    "cited, contradicted, evidence, last_cited_at, access_count, last_accessed_at"
)
EVENTS = Columns("events", Event)
NEW_EVENTS = Columns("events", NewEvent)
MEMORY_FIELDS = tuple(name.strip() for name in MEMORY_COLUMNS.split(","))

_TIME_FIELDS = frozenset(
    {"until", "last_cited_at", "last_accessed_at", "written_at", "occurred_at"}
)
_LIST_FIELDS = frozenset({"tags", "diff_files"})


@cache
def _decoders(d: Dialect) -> tuple[Callable[[Any], Any] | None, ...]:
    """One decoder per column of `MEMORY_COLUMNS` (None: stored as it is)."""

    def evidence(value: Any) -> dict[str, Any]:
        return {} if value == "{}" else dict(d.read_json(value))

    decode: dict[str, Callable[[Any], Any]] = {
        "tags": d.read_texts,
        "diff_files": d.read_texts,
        "evidence": evidence,
        "pinned": bool,
        "written_at": d.read_time,
        "occurred_at": d.read_time,
        "until": d.read_opt_time,
        "last_cited_at": d.read_opt_time,
        "last_accessed_at": d.read_opt_time,
    }
    return tuple(decode.get(name) for name in MEMORY_FIELDS)


def memory_from_row(d: Dialect, row: Any) -> Memory:
    """A memory from a row of `MEMORY_COLUMNS`, whose order is `Memory`'s field order."""
    return Memory(
        *[value if f is None else f(value) for f, value in zip(_decoders(d), row, strict=True)]
    )


def new_memory_params(d: Dialect, m: NewMemory) -> dict[str, Any]:
    """The INSERT parameters of a new memory: each field encoded as its column stores it."""
    return {f.name: encode_value(d, f.name, getattr(m, f.name)) for f in fields(NewMemory)}


def full_memory_params(d: Dialect, m: Memory) -> dict[str, Any]:
    """Every column of a stored memory, id included (whole-store copy)."""
    return {name: encode_value(d, name, getattr(m, name)) for name in MEMORY_FIELDS}


def encode_value(d: Dialect, column: str, value: Any) -> Any:
    """Encode one column's value the way the schema stores it."""
    if value is None:
        return None
    if column in _TIME_FIELDS:
        return d.time(value)
    if column in _LIST_FIELDS:
        return d.texts(value)
    if column == "evidence":
        return d.json(dict(value), sort=False)
    if column == "pinned":
        return d.flag(value)
    if column == "weight":
        return float(value)
    return value
