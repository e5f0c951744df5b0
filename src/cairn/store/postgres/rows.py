"""Row <-> record conversion for the PostgreSQL backend.

psycopg hands back timestamptz values in the session zone (UTC, set per connection); they are
normalised to `datetime.UTC` so records compare and print exactly like the SQLite backend's.
JSON is written with the same `json.dumps` options as SQLite writes it, into `json` columns that
keep the text as written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any

from psycopg.types.json import Json

from cairn.models import Event, Memory, NewMemory
from cairn.timeutil import as_utc

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
_LIST_FIELDS = frozenset({"tags", "diff_files"})


def utc(value: datetime) -> datetime:
    """A timestamptz read back, as a `datetime.UTC` datetime."""
    return value.astimezone(UTC)


def opt_utc(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(UTC)


def opt_param(value: datetime | None) -> datetime | None:
    """A time to write (naive means UTC, as everywhere in cairn)."""
    return None if value is None else as_utc(value)


def memory_from_row(row: Sequence[Any]) -> Memory:
    (
        mid, scope, mtype, content, summary, durability, weight, tags, reason, source_ref,
        pinned, branch, session_id, source_event_id, diff_text, diff_files, error_trace,
        integration, content_hash, written_at, occurred_at, until, replaces, replaced_by,
        status, confirmed, cited, contradicted, evidence, last_cited_at, access_count,
        last_accessed_at,
    ) = row  # fmt: skip
    return Memory(
        id=mid,
        scope=scope,
        type=mtype,
        content=content,
        summary=summary,
        durability=durability,
        weight=weight,
        tags=tuple(tags),
        reason=reason,
        source_ref=source_ref,
        pinned=bool(pinned),
        branch=branch,
        session_id=session_id,
        source_event_id=source_event_id,
        diff_text=diff_text,
        diff_files=tuple(diff_files),
        error_trace=error_trace,
        integration=integration,
        content_hash=content_hash,
        written_at=utc(written_at),
        occurred_at=utc(occurred_at),
        until=opt_utc(until),
        replaces=replaces,
        replaced_by=replaced_by,
        status=status,
        confirmed=confirmed,
        cited=cited,
        contradicted=contradicted,
        evidence=dict(evidence),
        last_cited_at=opt_utc(last_cited_at),
        access_count=access_count,
        last_accessed_at=opt_utc(last_accessed_at),
    )


def new_memory_params(m: NewMemory) -> dict[str, Any]:
    """The INSERT parameters of a new memory: each field encoded as its column stores it."""
    return {f.name: encode_value(f.name, getattr(m, f.name)) for f in fields(NewMemory)}


def full_memory_params(m: Memory) -> dict[str, Any]:
    """Every column of a stored memory, id included (whole-store copy)."""
    params = {name: encode_value(name, getattr(m, name)) for name in _column_names()}
    params["id"] = m.id
    return params


def _column_names() -> list[str]:
    return [name.strip() for name in MEMORY_COLUMNS.split(",") if name.strip() != "id"]


def encode_value(column: str, value: Any) -> Any:
    """Encode one column's value the way the schema stores it."""
    if value is None:
        return None
    if column in _TIME_FIELDS:
        return as_utc(value)
    if column in _LIST_FIELDS:
        return list(value)
    if column == "evidence":
        return Json(dict(value), dumps=_dumps)
    if column == "pinned":
        return bool(value)
    if column == "weight":
        return float(value)
    return value


def marks(params: Mapping[str, Any]) -> str:
    """Named parameter marks (`%(name)s`) for an INSERT of `params`, in key order."""
    return ", ".join(f"%({name})s" for name in params)


def event_from_row(row: Sequence[Any]) -> Event:
    eid, kind, scope, session_id, at, integration, memory_id, payload = row
    return Event(
        id=eid,
        kind=kind,
        scope=scope,
        session_id=session_id,
        at=utc(at),
        integration=integration,
        memory_id=memory_id,
        payload=dict(payload),
    )


def payload_json(payload: Mapping[str, Any]) -> Json:
    return Json(dict(payload), dumps=_payload_dumps)


def json_value(value: Any) -> Json:
    """Any JSON value, encoded as the SQLite backend encodes it (sorted keys, str fallback)."""
    return Json(value, dumps=_payload_dumps)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _payload_dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
