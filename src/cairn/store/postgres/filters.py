"""`MemoryFilter` as a SQL condition over `memories m`, with named parameters.

Named (`%(f_scopes)s`) rather than positional parameters, so one statement can repeat the
condition (lexical ranking counts the filtered set and ranks inside it) with one parameter set.
The semantics are the SQLite backend's, clause for clause.
"""

from __future__ import annotations

from typing import Any

from cairn.store.base import MemoryFilter
from cairn.timeutil import as_utc


def filter_sql(filt: MemoryFilter) -> tuple[str, dict[str, Any]]:
    clauses = ["m.scope = ANY(%(f_scopes)s::text[])"]
    params: dict[str, Any] = {"f_scopes": list(filt.scopes)}
    if filt.as_of is None:
        clauses.append("m.status = ANY(%(f_statuses)s::text[]) AND m.until IS NULL")
        params["f_statuses"] = list(filt.statuses)
    else:
        clauses.append(
            "m.status <> 'purged' AND m.written_at <= %(f_as_of)s "
            "AND (m.until IS NULL OR m.until > %(f_as_of)s)"
        )
        params["f_as_of"] = as_utc(filt.as_of)
    if filt.types is not None:
        clauses.append("m.type = ANY(%(f_types)s::text[])")
        params["f_types"] = list(filt.types)
    if filt.tags is not None:
        clauses.append(
            "EXISTS (SELECT 1 FROM memory_tags t "
            "WHERE t.memory_id = m.id AND t.tag = ANY(%(f_tags)s::text[]))"
        )
        params["f_tags"] = list(filt.tags)
    if filt.since is not None:
        clauses.append("m.occurred_at >= %(f_since)s")
        params["f_since"] = as_utc(filt.since)
    if filt.until is not None:
        clauses.append("m.occurred_at <= %(f_until)s")
        params["f_until"] = as_utc(filt.until)
    return " AND ".join(clauses), params
