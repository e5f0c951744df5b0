"""SQL fragments the SQLite store builds its queries from: a `MemoryFilter` as a WHERE
clause, an FTS5 match expression, placeholder lists and id chunks."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from cairn.store.base import MemoryFilter
from cairn.timeutil import to_micros

T = TypeVar("T")

CHUNK = 500  # keeps `IN (...)` lists under SQLite's variable limit


def filter_sql(filt: MemoryFilter) -> tuple[str, tuple[Any, ...]]:
    clauses = [f"m.scope IN ({marks(list(filt.scopes))})"]
    params: list[Any] = list(filt.scopes)
    if filt.as_of is None:
        clauses.append(f"m.status IN ({marks(list(filt.statuses))}) AND m.until IS NULL")
        params.extend(filt.statuses)
    else:
        moment = to_micros(filt.as_of)
        clauses.append(
            "m.status != 'purged' AND m.written_at <= ? AND (m.until IS NULL OR m.until > ?)"
        )
        params.extend([moment, moment])
    if filt.types is not None:
        clauses.append(f"m.type IN ({marks(list(filt.types))})")
        params.extend(filt.types)
    if filt.tags is not None:
        clauses.append(
            f"m.id IN (SELECT memory_id FROM memory_tags WHERE tag IN ({marks(list(filt.tags))}))"
        )
        params.extend(filt.tags)
    if filt.since is not None:
        clauses.append("m.occurred_at >= ?")
        params.append(to_micros(filt.since))
    if filt.until is not None:
        clauses.append("m.occurred_at <= ?")
        params.append(to_micros(filt.until))
    return " AND ".join(clauses), tuple(params)


def match_expression(terms: Sequence[str]) -> str:
    # Terms are analysed words; quoting keeps FTS5 from reading any of them as operators.
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in dict.fromkeys(terms))


def marks(values: Sequence[object]) -> str:
    return ", ".join("?" for _ in values)


def chunks(ids: Sequence[T]) -> Iterator[list[T]]:
    items = list(ids)
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]
