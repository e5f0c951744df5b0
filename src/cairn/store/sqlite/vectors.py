"""Dense search for the SQLite backend: a numpy matrix per (scopes, embedder) kept in memory.

Measured here, a plain float32 matrix product beats sqlite-vec's `vec0` by an order of
magnitude (6.9 ms vs 80 ms for 100k x 384, nearest 10) and needs no extension loading, which
the stdlib sqlite3 on these machines cannot do anyway. The matrix is the cache; SQLite stays the
truth:

- rows inserted since the last look are appended incrementally (`memory_id > last_seen`);
- any other change to vectors or to the columns the filter reads (status, until, type, ...)
  bumps the store's `epoch`, and a cache that sees a new epoch reloads in full.

Other processes' commits are picked up the same way, because both checks read the file.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from cairn.embeddings.base import Vector
from cairn.store.base import MemoryFilter
from cairn.store.sqlite.sql import marks
from cairn.timeutil import to_micros

_NONE = np.iinfo(np.int64).max  # "no until": believed forever


@dataclass
class _Block:
    epoch: str = ""
    last_id: int = 0
    ids: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    matrix: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    # Status and type as small integer codes: comparing numpy object arrays of strings costs
    # milliseconds per recall at 10k rows, integer codes microseconds.
    status: npt.NDArray[np.int16] = field(default_factory=lambda: np.zeros(0, np.int16))
    mtype: npt.NDArray[np.int16] = field(default_factory=lambda: np.zeros(0, np.int16))
    written: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    occurred: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    until: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))


class VectorIndex:
    def __init__(self) -> None:
        self._blocks: dict[tuple[tuple[str, ...], str], _Block] = {}
        self._lock = threading.Lock()

    def nearest(
        self,
        conn: sqlite3.Connection,
        filt: MemoryFilter,
        identity: str,
        vector: Vector,
        k: int,
        allowed: set[int] | None,
    ) -> list[tuple[int, float]]:
        with self._lock:
            block = self._refresh(conn, tuple(sorted(filt.scopes)), identity)
            if block.ids.size == 0 or k <= 0:
                return []
            mask = _mask(block, filt)
            if allowed is not None:
                mask &= np.isin(block.ids, np.fromiter(allowed, np.int64, len(allowed)))
            index = np.flatnonzero(mask)
            if index.size == 0:
                return []
            scores = block.matrix[index] @ vector.astype(np.float32)
            top = _top_k(scores, k)
            return [(int(block.ids[index[i]]), float(scores[i])) for i in top]

    def _refresh(self, conn: sqlite3.Connection, scopes: tuple[str, ...], identity: str) -> _Block:
        key = (scopes, identity)
        epoch = conn.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()[0]
        block = self._blocks.get(key)
        if block is None or block.epoch != epoch:
            block = _Block(epoch=epoch)
            self._blocks[key] = block
        rows = conn.execute(
            "SELECT m.id, v.vector, m.status, m.type, m.written_at, m.occurred_at, m.until "
            # CROSS JOIN pins vectors as the outer loop, so only rows past `last_id` are read
            # (the planner otherwise walks every memory of the scope on each call).
            "FROM vectors v CROSS JOIN memories m ON m.id = v.memory_id "
            f"WHERE v.identity = ? AND v.memory_id > ? AND m.scope IN ({marks(scopes)}) "
            "ORDER BY v.memory_id",
            (identity, block.last_id, *scopes),
        ).fetchall()
        if rows:
            _append(block, rows)
        return block


def _append(block: _Block, rows: list[tuple[object, ...]]) -> None:
    ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
    matrix = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])  # type: ignore[call-overload]
    block.ids = np.concatenate([block.ids, ids])
    block.matrix = matrix if block.matrix.size == 0 else np.vstack([block.matrix, matrix])
    block.status = np.concatenate([block.status, _codes(r[2] for r in rows)])
    block.mtype = np.concatenate([block.mtype, _codes(r[3] for r in rows)])
    block.written = np.concatenate([block.written, np.array([r[4] for r in rows], np.int64)])
    block.occurred = np.concatenate([block.occurred, np.array([r[5] for r in rows], np.int64)])
    untils = np.array([_NONE if r[6] is None else r[6] for r in rows], np.int64)
    block.until = np.concatenate([block.until, untils])
    block.last_id = int(ids[-1])


def _mask(block: _Block, filt: MemoryFilter) -> npt.NDArray[np.bool_]:
    mask: npt.NDArray[np.bool_]
    if filt.as_of is None:
        mask = np.isin(block.status, _codes(filt.statuses)) & (block.until == _NONE)
    else:
        moment = to_micros(filt.as_of)
        purged = _code("purged")
        mask = (block.status != purged) & (block.written <= moment) & (block.until > moment)
    if filt.types is not None:
        mask &= np.isin(block.mtype, _codes(filt.types))
    if filt.since is not None:
        mask &= block.occurred >= to_micros(filt.since)
    if filt.until is not None:
        mask &= block.occurred <= to_micros(filt.until)
    return mask


_CODES: dict[str, int] = {}
_CODES_LOCK = threading.Lock()


def _code(name: object) -> int:
    """A process-wide small integer for a status or type name (stable within the process)."""
    key = str(name)
    code = _CODES.get(key)
    if code is None:
        with _CODES_LOCK:
            code = _CODES.setdefault(key, len(_CODES))
    return code


def _codes(names: Iterable[object]) -> npt.NDArray[np.int16]:
    return np.fromiter((_code(n) for n in names), np.int16)


def _top_k(scores: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.intp]:
    if scores.size <= k:
        return np.argsort(-scores, kind="stable")
    part = np.argpartition(-scores, k - 1)[:k]
    return part[np.argsort(-scores[part], kind="stable")]
