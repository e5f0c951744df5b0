"""A `MemoryFilter` as a condition over `memories m`, with `?` marks, on either SQL backend.

The backends' dense and lexical search build their own filters in their own styles
(`sqlite/sql.py`, `postgres/filters.py`); this one serves the shared queries, clause for
clause the same semantics.
"""

from __future__ import annotations

from typing import Any

from cairn.store.base import MemoryFilter
from cairn.store.sql.dialect import Dialect


def filter_sql(d: Dialect, filt: MemoryFilter) -> tuple[str, list[Any]]:
    in_scopes, params = d.among("m.scope", filt.scopes, "text")
    clauses = [in_scopes]
    if filt.as_of is None:
        with_status, more = d.among("m.status", filt.statuses, "text")
        clauses.append(f"{with_status} AND m.until IS NULL")
        params.extend(more)
    else:
        moment = d.time(filt.as_of)
        clauses.append(
            "m.status <> 'purged' AND m.written_at <= ? AND (m.until IS NULL OR m.until > ?)"
        )
        params.extend([moment, moment])
    if filt.types is not None:
        of_type, more = d.among("m.type", filt.types, "text")
        clauses.append(of_type)
        params.extend(more)
    if filt.tags is not None:
        tagged, more = d.among("tag", filt.tags, "text")
        clauses.append(f"m.id IN (SELECT memory_id FROM memory_tags WHERE {tagged})")
        params.extend(more)
    if filt.since is not None:
        clauses.append("m.occurred_at >= ?")
        params.append(d.time(filt.since))
    if filt.until is not None:
        clauses.append("m.occurred_at <= ?")
        params.append(d.time(filt.until))
    return " AND ".join(clauses), params
