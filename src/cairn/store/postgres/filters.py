"""`MemoryFilter` as a SQL condition over `memories m`, with named parameters.

Named (`%(f_scopes)s`) rather than positional parameters, so one statement can repeat the
condition (lexical ranking counts the filtered set and ranks inside it) with one parameter set.
The semantics are the SQLite backend's, clause for clause.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from cairn.store.base import MemoryFilter
from cairn.timeutil import as_utc

# Each clause by the one parameter it reads; a clause applies when its parameter is given.
_CLAUSES = {
    "f_scopes": "m.scope = ANY(%(f_scopes)s::text[])",
    "f_statuses": "m.status = ANY(%(f_statuses)s::text[]) AND m.until IS NULL",
    "f_as_of": "m.status <> 'purged' AND m.written_at <= %(f_as_of)s "
    "AND (m.until IS NULL OR m.until > %(f_as_of)s)",
    "f_types": "m.type = ANY(%(f_types)s::text[])",
    "f_tags": "EXISTS (SELECT 1 FROM memory_tags t "
    "WHERE t.memory_id = m.id AND t.tag = ANY(%(f_tags)s::text[]))",
    "f_since": "m.occurred_at >= %(f_since)s",
    "f_until": "m.occurred_at <= %(f_until)s",
}


def filter_sql(filt: MemoryFilter) -> tuple[str, dict[str, Any]]:
    given = {
        "f_scopes": list(filt.scopes),
        # Current memories by status, or what was current at `as_of`.
        "f_statuses": list(filt.statuses) if filt.as_of is None else None,
        "f_as_of": _utc(filt.as_of),
        "f_types": _listed(filt.types),
        "f_tags": _listed(filt.tags),
        "f_since": _utc(filt.since),
        "f_until": _utc(filt.until),
    }
    params = {name: value for name, value in given.items() if value is not None}
    return " AND ".join(_CLAUSES[name] for name in params), params


def _listed(values: Sequence[str] | None) -> list[str] | None:
    return None if values is None else list(values)


def _utc(moment: datetime | None) -> datetime | None:
    return None if moment is None else as_utc(moment)
