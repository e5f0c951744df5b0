"""Lexical entries and candidates for the SQLite backend: FTS5, with the work bounded on large
stores.

The pool is the `limit` best matches by FTS5's `bm25()` with the ranking layer's field weights
(content, tags, source_ref, reason, context), so a word found only among a memory's neighbours
does not crowd out memories holding it themselves. FTS5 reads a doclist cheaply, but `bm25()`
runs once per matching row: a query of five common words matches a third of a 100k store, and
ranking those rows cost 30-80 ms here where counting them cost 3-5 ms.

So on a store of `POSTINGS_MIN` documents or more the pool is ranked in numpy from postings
read out of FTS5 (`cairn.store.sqlite.postings_index`): the same `bm25()` scores over every
match, in a few ms, the documents a filter refuses masked out before the cut
(`postings_filter`). Otherwise (a term that may not be one FTS5 token, a smaller store) the
rows ranked by FTS5 are bounded the way
`cairn.store.lexical_bound` plans (rows holding a rare query term, or several of the common
ones), and when the pool comes out short the exact query runs. Stores under `LARGE_STORE`
documents (every LoCoMo conversation) never take either path.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from cairn.store import lexical_bound
from cairn.store.base import LEXICAL_FIELDS, LexicalDoc, LexicalRow, MemoryFilter
from cairn.store.lexical_bound import plan, render
from cairn.store.sqlite.connection import BUMP_LEXGEN
from cairn.store.sqlite.dialect import SQLITE
from cairn.store.sqlite.postings_index import PostingsIndex
from cairn.store.sqlite.sql import filter_sql, match_expression

POOL_RANK = "bm25(lexical, 1.0, 0.7, 0.5, 0.3, 0.45)"
EXACT_MATCHES = lexical_bound.EXACT_MATCHES
LARGE_STORE = lexical_bound.LARGE_STORE
POSTINGS_MIN = LARGE_STORE  # documents; the postings pool serves stores this large


def write_entries(conn: sqlite3.Connection, docs: Sequence[tuple[int, LexicalDoc]]) -> None:
    """Index each (memory id, document), with the word counts of its fields that BM25 needs."""
    conn.execute(BUMP_LEXGEN)
    texts = [(memory_id, [doc.field(name) for name in LEXICAL_FIELDS]) for memory_id, doc in docs]
    conn.executemany(
        "INSERT INTO lexical (rowid, content, tags, source_ref, reason, context) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(memory_id, *fields) for memory_id, fields in texts],
    )
    conn.executemany(
        "INSERT OR REPLACE INTO lexical_lengths "
        "(memory_id, content, tags, source_ref, reason, context) VALUES (?, ?, ?, ?, ?, ?)",
        [(memory_id, *(len(text.split()) for text in fields)) for memory_id, fields in texts],
    )


def candidates(
    conn: sqlite3.Connection,
    filt: MemoryFilter,
    terms: Sequence[str],
    limit: int,
    cache: dict[Any, Any],
    postings: PostingsIndex | None = None,
) -> list[LexicalRow]:
    distinct = list(dict.fromkeys(terms))
    if not distinct:
        return []
    everything = _admits_everything(conn, filt, cache)
    if postings is not None and _document_count(conn, cache) >= POSTINGS_MIN:
        ranked = postings.ranked(conn, distinct, limit, None if everything else filt)
        if ranked is not None:
            return _documents(conn, [memory_id for memory_id, _ in ranked])
    pruned = _pruned_expression(conn, distinct, cache)
    return lexical_bound.bounded_or_exact(
        lambda bounded: _query(conn, filt, distinct, limit, bounded, everything), pruned, limit
    )


def _query(
    conn: sqlite3.Connection,
    filt: MemoryFilter,
    terms: list[str],
    limit: int,
    pruned: str | None,
    everything: bool,
) -> list[LexicalRow]:
    where, params = filter_sql(filt)
    source = "lexical JOIN memories m ON m.id = lexical.rowid"
    if everything:  # no row to refuse: skip looking each match up in `memories`
        source, where, params = "lexical", "1", ()
    among, extra = "", []
    if pruned is not None:
        # `+` keeps the constraint away from FTS5, so the full query still drives the scan and
        # `bm25()` runs only on rows that pass it.
        among = " AND +lexical.rowid IN (SELECT rowid FROM lexical WHERE lexical MATCH ?)"
        extra = [pruned]
    # Rank ids alone, then read the text of the winners: sorting every match with its fields in
    # tow costs more than the second lookup.
    rows = conn.execute(
        "SELECT rowid, content, tags, source_ref, reason, context FROM lexical "
        f"WHERE rowid IN (SELECT lexical.rowid FROM {source} "
        f"WHERE lexical MATCH ?{among} AND {where} "
        f"ORDER BY {POOL_RANK} LIMIT ?)",
        (match_expression(terms), *extra, *params, limit),
    )
    return [LexicalRow(row[0], LexicalDoc(*row[1:])) for row in rows]


def _documents(conn: sqlite3.Connection, ids: list[int]) -> list[LexicalRow]:
    """The lexical documents of `ids`, in that order."""
    found: dict[int, LexicalDoc] = {}
    for chunk in SQLITE.chunks(ids):
        rows = conn.execute(
            "SELECT rowid, content, tags, source_ref, reason, context FROM lexical "
            f"WHERE rowid IN ({', '.join('?' for _ in chunk)})",
            chunk,
        )
        found.update((int(row[0]), LexicalDoc(*row[1:])) for row in rows)
    return [LexicalRow(memory_id, found[memory_id]) for memory_id in ids if memory_id in found]


def _pruned_expression(
    conn: sqlite3.Connection, terms: list[str], cache: dict[Any, Any]
) -> str | None:
    """The FTS5 expression of the rows worth ranking, or None when ranking all is cheap."""
    if len(terms) < 2:
        return None
    frequency = {term: _document_frequency(conn, term, cache) for term in terms}
    if sum(frequency.values()) <= EXACT_MATCHES:
        return None
    bound = plan(terms, frequency, _document_count(conn, cache), EXACT_MATCHES, LARGE_STORE)
    if bound is None:
        return None
    return render(bound, lambda term: match_expression([term]), " AND ", " OR ")


def _document_frequency(conn: sqlite3.Connection, term: str, cache: dict[Any, Any]) -> int:
    key = ("fts-df", term)
    found = cache.get(key)
    if found is None:
        found = int(
            conn.execute(
                "SELECT count(*) FROM lexical WHERE lexical MATCH ?", (match_expression([term]),)
            ).fetchone()[0]
        )
        cache[key] = found
    return int(found)


def _document_count(conn: sqlite3.Connection, cache: dict[Any, Any]) -> int:
    found = cache.get(("fts-docs",))
    if found is None:
        # Kept by triggers (migration 0009), so no scan of the length rows.
        found = int(conn.execute("SELECT docs FROM lexical_totals").fetchone()[0])
        cache[("fts-docs",)] = found
    return int(found)


_TOTALS = (
    "SELECT docs, CAST(content AS REAL) / docs, CAST(tags AS REAL) / docs, "
    "CAST(source_ref AS REAL) / docs, CAST(reason AS REAL) / docs, CAST(context AS REAL) / docs "
    "FROM lexical_totals"
)


# The averages of a filter of scopes and statuses, over the groups it admits (migration 0011).
_GROUP_SUMS = (
    "SELECT coalesce(sum(docs), 0), CAST(sum(content) AS REAL) / sum(docs), "
    "CAST(sum(tags) AS REAL) / sum(docs), CAST(sum(source_ref) AS REAL) / sum(docs), "
    "CAST(sum(reason) AS REAL) / sum(docs), CAST(sum(context) AS REAL) / sum(docs) "
    "FROM lexical_groups"
)


def _admitted_groups(filt: MemoryFilter) -> tuple[str, tuple[str, ...]]:
    """The (scope, status, open) groups a filter of scopes and statuses admits, as a WHERE over
    the tables the triggers keep per group (`memory_counts`, `lexical_groups`)."""
    scopes, statuses = filt.scopes, filt.statuses
    where = (
        f"scope IN ({', '.join('?' for _ in scopes)}) "
        f"AND status IN ({', '.join('?' for _ in statuses)}) AND open = 1"
    )
    return where, (*scopes, *statuses)


def _refuses_some(conn: sqlite3.Connection, filt: MemoryFilter) -> bool:
    """Whether the filter refuses any memory. A filter of scopes and statuses alone is read off
    the counts the triggers keep per (scope, status, open); any other walks the memories until
    it meets one it refuses (all of them, when it refuses none)."""
    if filt.scopes_and_statuses_only:
        groups, params = _admitted_groups(filt)
        return bool(
            conn.execute(
                f"SELECT EXISTS (SELECT 1 FROM memory_counts WHERE n > 0 AND NOT ({groups}))",
                params,
            ).fetchone()[0]
        )
    where, params = filter_sql(filt)
    return bool(
        conn.execute(
            f"SELECT EXISTS (SELECT 1 FROM memories m WHERE NOT coalesce(({where}), 0))", params
        ).fetchone()[0]
    )


def averages(conn: sqlite3.Connection, filt: MemoryFilter, cache: dict[Any, Any]) -> Any:
    """(documents the filter admits, average length of each field), cached per filter."""
    found = cache.get((filt, None))
    if found is None:
        where, params = filter_sql(filt)
        columns = (
            "count(*), avg(l.content), avg(l.tags), avg(l.source_ref), avg(l.reason), "
            "avg(l.context)"
        )
        # A fresh process pays this once per filter, and any process again after each write:
        # joining 100k rows costs 35 ms quiet and ~0.7 s under load, while the totals and the
        # per-group sums (migration 0011) are a few rows.
        refuses = _refuses_some(conn, filt)
        if refuses and filt.scopes_and_statuses_only:
            groups, group_params = _admitted_groups(filt)
            found = conn.execute(f"{_GROUP_SUMS} WHERE {groups}", group_params).fetchone()
        elif refuses:
            found = conn.execute(
                f"SELECT {columns} FROM lexical_lengths l JOIN memories m "
                f"ON m.id = l.memory_id WHERE {where}",
                params,
            ).fetchone()
        else:
            # Every lexical entry belongs to a memory row (purge keeps the row as a tombstone,
            # and a purged memory is one the filter refuses), so the totals are the filter's.
            found = conn.execute(_TOTALS).fetchone()
        if not found[0]:
            found = (0, None, None, None, None, None)  # what avg() over no row gives
        cache[(filt, None)] = found
    return found


def _admits_everything(conn: sqlite3.Connection, filt: MemoryFilter, cache: dict[Any, Any]) -> bool:
    """Whether every indexed document passes the filter (one project, nothing retired yet)."""
    return int(averages(conn, filt, cache)[0]) == _document_count(conn, cache)


def document_frequencies(
    conn: sqlite3.Connection,
    filt: MemoryFilter,
    terms: Sequence[str],
    cache: dict[Any, Any],
    postings: PostingsIndex | None = None,
) -> dict[str, int]:
    """Documents holding each term among those the filter admits, cached per (filter, term).

    On a large store the postings pool counts them (through the filter's mask when it refuses
    some document); on a smaller one FTS5 counts a term's doclist alone when the filter admits
    every document, and otherwise looks each match up in `memories`."""
    everything = _admits_everything(conn, filt, cache)
    where, params = filter_sql(filt)
    found: dict[str, int] = {}
    missing = [term for term in dict.fromkeys(terms) if (filt, term) not in cache]
    large = bool(missing) and _document_count(conn, cache) >= POSTINGS_MIN
    if postings is not None and large:
        counted = postings.frequencies(conn, missing, None if everything else filt)
        for term, held in (counted or {}).items():
            cache[(filt, term)] = held
    for term in dict.fromkeys(terms):
        count = cache.get((filt, term))
        if count is None:
            if everything:
                count = _document_frequency(conn, term, cache)
            else:
                count = conn.execute(
                    "SELECT count(*) FROM lexical JOIN memories m ON m.id = lexical.rowid "
                    f"WHERE lexical MATCH ? AND {where}",
                    (match_expression([term]), *params),
                ).fetchone()[0]
            cache[(filt, term)] = count
        found[term] = int(count)
    return found
