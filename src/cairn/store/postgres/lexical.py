"""Lexical candidates and BM25 statistics for the PostgreSQL backend: tsvector + GIN.

Analysis happens once, in `cairn.ranking.lexical` (folding, stemming), for every backend. The
SQLite backend hands the analysed terms to FTS5, which only splits them on spaces. Here they are
written straight into tsvector *literals* (`'term':1A,7A 'other':2A ...`) - the equivalent of
`to_tsvector('simple', ...)` with the parser taken out: no text-search parser, dictionary or
database locale can split, lowercase or drop a term, so PostgreSQL indexes exactly the terms
SQLite indexes. Queries are tsquery literals built the same way (`'a' | 'b'`).

- Each field gets a weight class (content A, tags B, source_ref C, reason and context D);
  positions run across fields in that order. PostgreSQL caps positions at 16383 and keeps 256
  per term, which only affects `ts_rank`, never matching.
- A tsvector lexeme holds at most 2046 bytes; a longer term (a pasted key or blob) is indexed
  as `~` plus its SHA-256, on both the document and the query side, so it still matches itself.
- Per-field lengths in terms are stored beside the vector for BM25's length normalisation.

Candidate order. `lexical_candidates` returns the best `limit` documents sharing a term with
the query; the ranking layer then scores them with BM25F. Like FTS5's `bm25()`, the order must
prefer rare terms, or documents full of a common word would crowd out the one that holds the
rare word. Documents are ordered by the sum over query terms of idf(term) x ts_rank(doc, term)
with `ts_rank`'s field weights (1.0, 0.7, 0.5, 0.3, as in the ranking layer) and length
normalisation 1. The idf for this ordering is the one the ranking layer will use, from the
statistics over the filter that `StatsCache` keeps between writes (FTS5 uses whole-table counts
instead; counting them here cost about 7 ms a recall, and would rank by a different rarity).

Bounded work on large stores. `ts_rank` runs once per matching row, and a query of common words
matches a third of a 100k store (measured: most of a 194 ms recall). So, as on SQLite, when the
terms' document frequencies add up past `EXACT_MATCHES` on a store of `LARGE_STORE` documents,
only the rows `cairn.store.lexical_bound` deems worth ranking are ranked (a rare term, or several
of the common ones: a tsquery the GIN index answers); a short pool reruns the exact query.

Strictest first. Common words that travel together (a two-word name, a stock phrase) defeat
the bound's independence: on the bench's vocabulary at 100k, "at least 2 of 5" admitted 13,100
rows of a five-word query (GIN scan, heap reads and five `ts_rank`s each: most of a recall),
while asking for all five found the 100 rows holding them in 1 ms. So the bounds asking for
every common term, then for all but one, run first (a rare term still admits a row alone), and
the planned bound only when both come out short of `limit` (`lexical_bound.stricter`). The
price is the bound's own, a step further: a row missing a common word is left out when `limit`
rows miss fewer, although a much shorter row could have outranked them.

Ranked first. When the filter admits at least half of the store's entries (one project, or a
project and `global`), the pool is ranked on `lexical` alone to a depth of twice the pool
divided by that share, and only those rows are joined with `memories` for the filter (at 100k
the join of every ranked row was about a third of the pool query). That is exact: when at least
`limit` of the deep rows pass the filter, no row below them can pass and outrank them (one total
order, score then id); so is stopping when fewer rows than the depth matched at all (every
match was ranked, which a short all-words tier usually is); otherwise the joined query runs.
Every returned row passed the filter.

Statistics. For a filter of scopes and statuses alone (every recall's default), the document
count, field lengths and per-term document frequencies are sums over the per-(scope, status,
open) counts that migration 0010's triggers keep in `lexical_groups` and `lexical_terms`: a few
index reads. Any other filter (types, tags, dates, `as_of`) joins the matching entries with
`memories` and counts them: at 100k memories that took 114 ms for the averages and 70-140 ms for
a query's frequencies, paid again after every write.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

from cairn.store import lexical_bound
from cairn.store.base import (
    LEXICAL_FIELDS,
    LexicalDoc,
    LexicalPool,
    LexicalRow,
    LexicalStats,
    MemoryFilter,
)
from cairn.store.postgres.connection import Conn
from cairn.store.postgres.filters import filter_sql
from cairn.store.stats_cache import GenerationCache

MAX_LEXEME_BYTES = 2046
EXACT_MATCHES = lexical_bound.EXACT_MATCHES
LARGE_STORE = lexical_bound.LARGE_STORE
STATS_CACHE_MAX = 4096  # (filter, term) entries; more and the cache starts afresh
# Four classes for five fields: the neighbours' text (`context`) shares reason's class, so it
# orders candidates as a minor field; BM25F scores it with its own weight later.
_WEIGHT_CLASS = {"content": "A", "tags": "B", "source_ref": "C", "reason": "D", "context": "D"}
# ts_rank's weights in its order {D, C, B, A}; the ranking layer's field weights.
_RANK_WEIGHTS = [0.3, 0.5, 0.7, 1.0]
_FROM = "FROM lexical l JOIN memories m ON m.id = l.memory_id"
_TEXT_OF = "{0}.content, {0}.tags, {0}.source_ref, {0}.reason, {0}.context"
# Rank before joining the filter when it admits at least this share of the store's entries,
# looking this many times deeper than the pool (divided by the share) - see "Ranked first".
RANK_FIRST_SHARE = 0.5
RANK_FIRST_DEPTH = 2


def lexeme(term: str) -> str:
    if len(term.encode("utf-8")) <= MAX_LEXEME_BYTES:
        return term
    return "~" + hashlib.sha256(term.encode("utf-8")).hexdigest()


def _quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(doc: LexicalDoc) -> str:
    """The document as a tsvector literal: every term, its positions and field weight."""
    positions: dict[str, list[str]] = {}
    position = 0
    for name in LEXICAL_FIELDS:
        weight = _WEIGHT_CLASS[name]
        for term in doc.field(name).split():
            position += 1
            positions.setdefault(lexeme(term), []).append(f"{min(position, 16383)}{weight}")
    return " ".join(f"{_quote(lex)}:{','.join(marks)}" for lex, marks in positions.items())


def term_query(term: str) -> str:
    return _quote(lexeme(term))


def any_query(terms: Sequence[str]) -> str:
    return " | ".join(term_query(term) for term in terms)


# A lexical row's columns after its memory_id, and the named parameters `entry_params` fills.
ENTRY_COLUMNS = (
    "content, tags, source_ref, reason, context, doc,"
    " len_content, len_tags, len_source_ref, len_reason, len_context"
)
ENTRY_VALUES = (
    "%(content)s, %(tags)s, %(source_ref)s, %(reason)s, %(context)s,"
    " %(doc)s::tsvector, %(len_content)s, %(len_tags)s, %(len_source_ref)s,"
    " %(len_reason)s, %(len_context)s"
)


def entry_params(doc: LexicalDoc) -> dict[str, Any]:
    """The values of `ENTRY_VALUES`: each field's terms, the document, each field's length."""
    fields = {name: doc.field(name) for name in LEXICAL_FIELDS}
    lengths = {f"len_{name}": len(text.split()) for name, text in fields.items()}
    return {"doc": tsvector_literal(doc), **fields, **lengths}


def put_lexical(conn: Conn, memory_id: int, doc: LexicalDoc) -> None:
    conn.execute(
        f"INSERT INTO lexical (memory_id, {ENTRY_COLUMNS}) VALUES (%(id)s, {ENTRY_VALUES})"
        " ON CONFLICT (memory_id) DO UPDATE SET content = EXCLUDED.content,"
        " tags = EXCLUDED.tags, source_ref = EXCLUDED.source_ref, reason = EXCLUDED.reason,"
        " context = EXCLUDED.context, doc = EXCLUDED.doc, len_content = EXCLUDED.len_content,"
        " len_tags = EXCLUDED.len_tags, len_source_ref = EXCLUDED.len_source_ref,"
        " len_reason = EXCLUDED.len_reason, len_context = EXCLUDED.len_context",
        {"id": memory_id, **entry_params(doc)},
    )


def set_context(conn: Conn, memory_id: int, context: str) -> None:
    """Replace the `context` field (and the document vector that holds it) of one entry."""
    row = conn.execute(
        "SELECT content, tags, source_ref, reason FROM lexical WHERE memory_id = %s FOR UPDATE",
        (memory_id,),
    ).fetchone()
    if row is not None:
        content, tags, source_ref, reason = row
        put_lexical(conn, memory_id, LexicalDoc(content, tags, source_ref, reason, context))


def delete_lexical(conn: Conn, memory_id: int) -> None:
    conn.execute("DELETE FROM lexical WHERE memory_id = %s", (memory_id,))


def _distinct(terms: Sequence[str]) -> list[str]:
    return [term for term in dict.fromkeys(terms) if term]


def _term_params(terms: list[str]) -> dict[str, Any]:
    params: dict[str, Any] = {f"q{i}": term_query(term) for i, term in enumerate(terms)}
    params["q_any"] = any_query(terms)
    return params


def bounded_tiers(terms: Sequence[str], stats: LexicalStats) -> list[str]:
    """The tsqueries to try in turn, strictest first (see "Strictest first"); none to rank
    every match."""
    bound = lexical_bound.plan(
        terms, stats.document_frequency, stats.doc_count, EXACT_MATCHES, LARGE_STORE
    )
    if bound is None:
        return []
    bounds = [*lexical_bound.stricter(bound), bound]
    return [lexical_bound.render(b, term_query, " & ", " | ") for b in bounds]


def lexical_candidates(
    conn: Conn,
    filt: MemoryFilter,
    terms: Sequence[str],
    limit: int,
    stats: LexicalStats,
    total: int = 0,
) -> list[LexicalRow]:
    """The best `limit` documents of the filter holding a query term (see "Candidate order");
    `total` is the number of lexical entries in the store (see "Ranked first")."""
    wanted = _distinct(terms)
    if not wanted or limit <= 0 or not filt.scopes:
        return []
    share = stats.doc_count / total if total > 0 else 0.0
    return lexical_bound.tiered_or_exact(
        lambda bounded: _ranked(conn, filt, wanted, limit, stats, bounded, share),
        bounded_tiers(wanted, stats),
        limit,
    )


def _ranked(
    conn: Conn,
    filt: MemoryFilter,
    wanted: list[str],
    limit: int,
    stats: LexicalStats,
    bounded: str | None,
    share: float = 0.0,
) -> list[LexicalRow]:
    """The pool's query: every row holding a term, or only those matching `bounded`; ranked
    before the filter's join when the filter admits most of the store (see "Ranked first")."""
    where, params = filter_sql(filt)
    params.update(_term_params(wanted), limit=limit, weights=_RANK_WEIGHTS)
    count = stats.doc_count
    for i, term in enumerate(wanted):
        found = stats.document_frequency.get(term, 0)
        params[f"idf{i}"] = math.log(1.0 + (count - found + 0.5) / (found + 0.5))
    score = " + ".join(
        f"%(idf{i})s::float8 * ts_rank(%(weights)s::float4[], l.doc, %(q{i})s::tsquery, 1)"
        for i in range(len(wanted))
    )
    if bounded is not None:
        params["q_any"] = bounded  # every row ranked is still ranked with all the terms
    if share >= RANK_FIRST_SHARE:
        params["depth"] = math.ceil(RANK_FIRST_DEPTH * limit / share)
        rows = conn.execute(
            f"WITH t AS MATERIALIZED (SELECT l.memory_id, {_TEXT_OF.format('l')},"
            f" ({score}) AS score FROM lexical l WHERE l.doc @@ %(q_any)s::tsquery"
            " ORDER BY score DESC, l.memory_id LIMIT %(depth)s),"
            f" kept AS (SELECT t.memory_id, {_TEXT_OF.format('t')}, t.score FROM t"
            f" JOIN memories m ON m.id = t.memory_id WHERE {where}"
            " ORDER BY t.score DESC, t.memory_id LIMIT %(limit)s)"
            f" SELECT k.memory_id, {_TEXT_OF.format('k')}, (SELECT count(*) FROM t)"
            " FROM (SELECT 1) one LEFT JOIN kept k ON true ORDER BY k.score DESC, k.memory_id",
            params,
        ).fetchall()
        # One row of nulls when none passed. Fewer ranked rows than the depth: every match
        # was ranked, so the joined query would return these same rows (a short bounded
        # tier, a query of rare words).
        ranked = int(rows[0][-1]) if rows else params["depth"]
        kept = [
            LexicalRow(int(row[0]), LexicalDoc(*row[1:-1])) for row in rows if row[0] is not None
        ]
        if len(kept) >= limit or ranked < params["depth"]:
            return kept
    rows = conn.execute(
        f"SELECT l.memory_id, {_TEXT_OF.format('l')}"
        f" {_FROM} WHERE l.doc @@ %(q_any)s::tsquery AND {where}"
        f" ORDER BY ({score}) DESC, l.memory_id LIMIT %(limit)s",
        params,
    ).fetchall()
    return [LexicalRow(int(row[0]), LexicalDoc(*row[1:])) for row in rows]


class StatsCache:
    """BM25 statistics per (filter, term), kept until the store's `lexgen` moves.

    Even read from the kept counts (see "Statistics"), a statistic costs a round trip, and the
    same words recur across recalls; the joined counts of other filters cost far more. Triggers
    (migration 0007) move meta `lexgen` on with every change to the lexical index, memory tags,
    or a memory column a filter reads, in any process; a cache that reads another value starts
    afresh. The value is read before the counts, so a write landing in between leaves newer
    counts under the older value, never the reverse.
    """

    def __init__(self, size: int = STATS_CACHE_MAX) -> None:
        self._cache = GenerationCache(size)

    def stats(self, conn: Conn, filt: MemoryFilter, terms: Sequence[str]) -> LexicalStats:
        return self.stats_and_total(conn, filt, terms)[0]

    def stats_and_total(
        self, conn: Conn, filt: MemoryFilter, terms: Sequence[str]
    ) -> tuple[LexicalStats, int]:
        """The filter's statistics, and the number of lexical entries in the whole store."""
        return self.counted(conn, self.entries(conn), filt, terms)

    def entries(self, conn: Conn) -> dict[Any, Any]:
        """The statistics counted under the store's current `lexgen` (one read)."""
        row = conn.execute("SELECT value FROM meta WHERE key = 'lexgen'").fetchone()
        return self._cache.current(str(row[0]) if row else None)

    def entries_counting(
        self, conn: Conn, filt: MemoryFilter, terms: Sequence[str]
    ) -> dict[Any, Any]:
        """`entries`, holding the filter's counts of `terms` too, read in the same statement
        when the kept counts answer the filter (scopes and statuses): a recall's keyword half
        then costs one round trip fewer whenever a word is new to the cache, and the value and
        the counts come from one snapshot."""
        wanted = _distinct(terms)
        if not wanted or not filt.scopes_and_statuses_only:
            return self.entries(conn)
        lexemes = {lexeme(term): term for term in wanted}
        rows = conn.execute(
            _LEXGEN_AND_FREQUENCIES, {**_group_params(filt), "terms": list(lexemes)}
        ).fetchall()
        value = rows[0][0] if rows else None
        items = self._cache.current(None if value is None else str(value))
        counts = _per_term(wanted, lexemes, [(lex, n) for _, lex, n in rows if lex is not None])
        for term, count in counts.items():
            items.setdefault((filt, term), count)
        return items

    def counted(
        self, conn: Conn, items: dict[Any, Any], filt: MemoryFilter, terms: Sequence[str]
    ) -> tuple[LexicalStats, int]:
        """`stats_and_total` from `entries` read before, counting only what they lack."""
        total = items.get(None)
        if total is None:
            found = conn.execute("SELECT coalesce(sum(docs), 0) FROM lexical_groups").fetchone()
            total = items[None] = int(found[0]) if found else 0
        wanted = _distinct(terms)
        averages = items.get((filt, None))
        if averages is None:
            averages = items[(filt, None)] = _averages(conn, filt)
        missing = [term for term in wanted if (filt, term) not in items]
        if missing:
            items.update(((filt, t), n) for t, n in _frequencies(conn, filt, missing).items())
        frequency = {term: int(items[(filt, term)]) for term in wanted}
        return LexicalStats.counted(averages, frequency), int(total)


def lexical_pool(
    conn: Conn,
    cache: StatsCache,
    filt: MemoryFilter,
    terms: Sequence[str],
    limit: int,
    sized: MemoryFilter,
) -> LexicalPool:
    """A recall's keyword half with one `lexgen` read instead of three (one per call): under
    load each statement costs a scheduling round. The three reads see one generation of the
    counts, as if a write landing between them had landed after."""
    items = cache.entries_counting(conn, filt, terms)
    size = cache.counted(conn, items, sized, ())[0].doc_count
    if not terms:
        return LexicalPool([], None, size)
    stats, total = cache.counted(conn, items, filt, terms)
    rows = lexical_candidates(conn, filt, terms, limit, stats, total)
    return LexicalPool(rows, stats if rows else None, size)


def _group_params(filt: MemoryFilter) -> dict[str, Any]:
    return {"f_scopes": list(filt.scopes), "f_statuses": list(filt.statuses)}


def _averages(conn: Conn, filt: MemoryFilter) -> tuple[float, ...]:
    if filt.scopes_and_statuses_only:
        row = conn.execute(_GROUP_AVERAGES, _group_params(filt)).fetchone()
    else:
        where, params = filter_sql(filt)
        averages = ", ".join(f"avg(l.len_{name})::float8" for name in LEXICAL_FIELDS)
        row = conn.execute(f"SELECT count(*), {averages} {_FROM} WHERE {where}", params).fetchone()
    values = row or (0, *([None] * len(LEXICAL_FIELDS)))
    return (float(values[0]), *(float(v or 0.0) for v in values[1:]))


def _per_term(
    terms: Sequence[str], lexemes: dict[str, str], counted: Sequence[tuple[Any, ...]]
) -> dict[str, int]:
    """(lexeme, documents) rows of the kept counts as each term's count, 0 where none."""
    found = {lexemes[str(lex)]: int(n) for lex, n in counted}
    return {term: found.get(term, 0) for term in terms}


def _frequencies(conn: Conn, filt: MemoryFilter, terms: list[str]) -> dict[str, int]:
    if filt.scopes_and_statuses_only:
        lexemes = {lexeme(term): term for term in terms}
        rows = conn.execute(
            _GROUP_FREQUENCIES, {**_group_params(filt), "terms": list(lexemes)}
        ).fetchall()
        return _per_term(terms, lexemes, rows)
    where, params = filter_sql(filt)
    params.update(_term_params(terms))
    counts = ", ".join(
        f"count(*) FILTER (WHERE l.doc @@ %(q{i})s::tsquery)" for i in range(len(terms))
    )
    found_row = conn.execute(
        f"SELECT {counts} {_FROM} WHERE l.doc @@ %(q_any)s::tsquery AND {where}", params
    ).fetchone()
    return dict(zip(terms, (int(n) for n in found_row or (0,) * len(terms)), strict=True))


# A filter of scopes and statuses admits exactly the groups below (`filters.py`: the status
# clause also asks `until IS NULL`), so its statistics are sums of the counts migration 0010's
# triggers keep: a few index reads instead of joining every matching entry with `memories`.
_GROUPS = "scope = ANY(%(f_scopes)s::text[]) AND status = ANY(%(f_statuses)s::text[]) AND open"
_GROUP_AVERAGES = (
    "SELECT coalesce(sum(docs), 0), "
    + ", ".join(f"sum({name})::float8 / nullif(sum(docs), 0)" for name in LEXICAL_FIELDS)
    + f" FROM lexical_groups WHERE {_GROUPS}"
)
_GROUP_FREQUENCIES = (
    "SELECT term, sum(docs) FROM lexical_terms WHERE term = ANY(%(terms)s::text[])"
    f" AND {_GROUPS} GROUP BY term"
)
# The store's `lexgen` and the counts of some words under a filter of scopes and statuses, in
# one statement: one row with NULL counts when no word is there.
_LEXGEN_AND_FREQUENCIES = (
    "SELECT g.value, t.term, t.docs FROM (SELECT (SELECT value FROM meta WHERE key = 'lexgen')"
    f" AS value) g LEFT JOIN ({_GROUP_FREQUENCIES}) AS t(term, docs) ON true"
)
