"""Which documents of the postings pool (`cairn.store.sqlite.postings`) a recall's filter admits:
a mask over the pool's positions, so the pool ranks for a filter that refuses some documents
exactly what FTS5 ranks with the filter joined (`lexical._query`): the same whole-table
`bm25()` scores, the refused documents dropped before the cut.

The admitted ids are one query over `memories m` with the filter's WHERE (16-25 ms at 100k),
so the mask is kept per filter while the store's `epoch` and `lexgen` read the same: every write
to a column a filter reads moves one of them (`FILTERED_COLUMNS` and imports move `epoch`,
tags and every lexical write move `lexgen`, a purge both), in whichever process. They are read
in the snapshot the pool was brought up to, so the mask and the postings describe one state of
the store. When only `lexgen` moved (the same `epoch`, a filter naming no tags), no memory's
admission changed, so the kept mask is extended over the documents appended since, looked up by
id: a `remember` does not cost the next recall the whole query. Inside a caller's transaction
nothing is kept: a write there that rolls back would leave a set under counters that a later
commit reuses for other rows.

The generation counters are the cache's key, not the promise: the winners are checked against
`memories` in the same snapshot, and one the filter refuses (a writer that moved no counter)
throws the cached set away and ranks again from a fresh one, so no refused memory is returned.
"""

from __future__ import annotations

import sqlite3
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cairn.store.base import MemoryFilter
from cairn.store.sqlite.dialect import SQLITE
from cairn.store.sqlite.postings import Ints, Mask, Pool
from cairn.store.sqlite.sql import filter_sql

FILTERS_KEPT = 16  # filters whose masks are kept (few scopes a process): 100 kB each at 100k
_DENSE_SPAN = 8  # a lookup table over ids up to this many times the positions (else a search)


@dataclass(frozen=True, slots=True)
class _Kept:
    generation: tuple[str, str]
    pool: weakref.ref[Pool]  # the pool the mask was made for, and its positions then (a
    # pool only appends positions)
    positions: int
    mask: Mask


class Admissions:
    """The admitted ids and pool mask of each recent filter. The caller (`PostingsIndex`)
    serialises the calls and holds the snapshot they read."""

    def __init__(self) -> None:
        self._kept: dict[MemoryFilter, _Kept] = {}

    def top(
        self,
        conn: sqlite3.Connection,
        pool: Pool,
        filt: MemoryFilter,
        terms: Sequence[str],
        limit: int,
        *,
        keep: bool,
    ) -> list[tuple[int, float]]:
        """`pool.top` among the documents `filt` admits; `keep` False inside a caller's
        transaction."""
        found = pool.top(terms, limit, self.mask(conn, pool, filt, keep=keep))
        if not found or _all_admitted(conn, filt, [memory_id for memory_id, _ in found]):
            return found
        # A write moved no counter: this snapshot's own answer, and nothing kept from before.
        self._kept.pop(filt, None)
        return pool.top(terms, limit, self.mask(conn, pool, filt, keep=keep))

    def mask(self, conn: sqlite3.Connection, pool: Pool, filt: MemoryFilter, *, keep: bool) -> Mask:
        """Whether `filt` admits the document at each position of `pool`."""
        generation = _generation(conn)
        kept = self._kept.get(filt)
        positions = int(pool.ids.shape[0])
        if kept is not None and kept.pool() is pool and kept.positions <= positions:
            if kept.generation == generation and kept.positions == positions:
                return kept.mask
            if kept.generation[0] == generation[0] and filt.tags is None:
                # The same epoch: no memory's status, until, type or dates moved, so only the
                # documents appended since (a `remember` moves `lexgen`) need looking up.
                fresh = pool.ids[kept.positions :]
                extra = _mask_of(_admitted_among(conn, filt, fresh), fresh)
                mask = np.concatenate([kept.mask, extra])
                if keep:
                    self._keep(filt, _Kept(generation, weakref.ref(pool), positions, mask))
                return mask
        mask = _mask_of(_admitted(conn, filt), pool.ids)
        if keep:
            self._keep(filt, _Kept(generation, weakref.ref(pool), positions, mask))
        return mask

    def _keep(self, filt: MemoryFilter, kept: _Kept) -> None:
        if filt not in self._kept and len(self._kept) >= FILTERS_KEPT:
            self._kept.pop(next(iter(self._kept)))  # the oldest filter
        self._kept[filt] = kept


def _generation(conn: sqlite3.Connection) -> tuple[str, str]:
    meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('epoch', 'lexgen')"))
    return str(meta.get("epoch", "")), str(meta.get("lexgen", ""))


def _admitted(conn: sqlite3.Connection, filt: MemoryFilter) -> Ints:
    """The ids of the memories `filt` admits, ascending. One string of ids parses in C, where
    a row per id costs half as much again (30 ms against 20 at 100k)."""
    where, params = filter_sql(filt)
    text = conn.execute(
        f"SELECT group_concat(m.id) FROM memories m WHERE {where}", params
    ).fetchone()[0]
    if not text:
        return np.zeros(0, dtype=np.int64)
    return np.sort(np.fromstring(text, dtype=np.int64, sep=","))


def _admitted_among(conn: sqlite3.Connection, filt: MemoryFilter, ids: Ints) -> Ints:
    """Those of `ids` that `filt` admits, ascending."""
    where, params = filter_sql(filt)
    found: list[int] = []
    for chunk in SQLITE.chunks(ids.tolist()):
        found += [
            int(row[0])
            for row in conn.execute(
                f"SELECT m.id FROM memories m WHERE {where} "
                f"AND m.id IN ({', '.join('?' for _ in chunk)})",
                (*params, *chunk),
            )
        ]
    return np.sort(np.asarray(found, dtype=np.int64))


def _mask_of(admitted: Ints, positions: Ints) -> Mask:
    """Whether each of `positions` (memory ids) is among `admitted` (ascending)."""
    if not positions.size or not admitted.size:
        return np.zeros(positions.shape[0], dtype=bool)
    low = min(int(admitted[0]), int(positions.min()))
    high = max(int(admitted[-1]), int(positions.max()))
    if low >= 0 and high < _DENSE_SPAN * (positions.shape[0] + admitted.shape[0]) + 1_000_000:
        table = np.zeros(high + 1, dtype=bool)  # ids are a dense run from 1: O(n), no search
        table[admitted] = True
        found: Mask = table[positions]
        return found
    at = np.minimum(np.searchsorted(admitted, positions), admitted.shape[0] - 1)
    matched: Mask = admitted[at] == positions
    return matched


def _all_admitted(conn: sqlite3.Connection, filt: MemoryFilter, ids: list[int]) -> bool:
    """Whether `filt` admits every one of `ids`, read from `memories` itself."""
    wanted = np.asarray(sorted(set(ids)), dtype=np.int64)
    return int(_admitted_among(conn, filt, wanted).shape[0]) == int(wanted.shape[0])
