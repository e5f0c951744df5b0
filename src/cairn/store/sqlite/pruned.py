"""Exact nearest neighbours over a large dense cache, scanning a 64-column projection first.

A product over the whole float32 matrix reads 1.5 KB per memory: 150 MB per query at 100k,
1.5 GB at 1M, and recall runs two of them (the second after feedback). Measured here on 100k
vectors mixed the way `cairn bench scale` mixes its pool (from 2,000 random directions), an HNSW
graph (`usearch` 2.26, i8) took 368 s to build with 2 threads at load 6 and its best 300 held
82 % of the exact top 100; sign bits (hamming, then rescoring the best 4,000) held 83 % of the
exact top 10. Neither is exact, and a graph would be rebuilt after every purge (`remove` leaves
the node's vector in the saved file).

So the search stays exact and reads less instead. The cache's vectors are split, once per cache,
into their projection on the `DIMS` directions that carry most of their energy (an orthonormal
basis from the second moment of a sample of rows) and the residual, whose norm is kept per row.
For a query q and a row x, with p the projections and r the residuals,

    q . x = q_p . x_p + q_r . x_r  <=  q_p . x_p + |q_r| |x_r|

so one product over the projection (a sixth of the bytes) ranks the rows approximately and
bounds every row's true score. The best `4 k` by projection are scored exactly; every other row
whose bound reaches the k-th exact score is scored too; no row left out can beat the answer.
The answer is therefore the exact one, whatever the basis: a basis fitted on older rows only
loosens the bound (more rows rescored), never changes a result.

The scan itself is split in two, because at 1M rows it reads 256 MB and is bound by memory
bandwidth (16-18 ms a query here, twice a recall): the projection is held as its leading half
of the columns (`head`, the directions of most energy) and the rest (`tail`). The scan reads
only the head, whose bound is the same inequality with the head's residual (|x - x_head|^2 =
|x_r|^2 + |x_tail|^2); the rows that bound lets through (1-16k of a million in the bench's
queries) have the tail's term added back from a gather of their tail rows, which gives them the
whole projection's bound, and only the rows that still reach the k-th score are scored
exactly. Both steps only ever drop rows whose bound is below a score already found.

Everything here is derived from the cache's rows (`cairn.store.sqlite.vectors`), kept in step
with them (appends, window rewrites) and saved with them in `<store>-dense/`, so it follows the
same rules: a new epoch reloads and refits it, a purge deletes the folder.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from cairn.store.sqlite.matrix import Matrix

PRUNE_MIN = 50_000  # rows; below this the full product costs under a few ms
DIMS = 64
_SAMPLE = 20_000  # rows the basis is fitted on
_FIRST = 256  # at least this many rows are scored exactly before the bound is applied
_SAMPLED = 16_384  # rows of a large scan sampled to place its first threshold
_SLACK = 1e-4  # float32 rounding of the bound, so a row exactly at the k-th score is kept

Floats = npt.NDArray[np.float32]


class Pruned:
    """The projection of every row (and of every window vector), split into its leading `head`
    columns and the rest (`tail`), with the residual norms of each."""

    def __init__(
        self, basis: Floats, head: Matrix, tail: Matrix, residuals: tuple[Floats, Floats], n: int
    ) -> None:
        self.basis = basis  # dims x DIMS, orthonormal columns, by descending energy
        self.split = head_columns(int(basis.shape[1]))
        self.head, self.tail = head, tail
        # Per row: what the whole projection leaves out, and what the head leaves out.
        self.residual, self.head_residual = residuals  # capacity >= n
        self.n = n
        self.window_reduced = np.zeros((0, basis.shape[1]), np.float32)
        self.window_residual = np.zeros((0, 2), np.float32)

    @classmethod
    def fitted(cls, matrix: Matrix) -> Pruned:
        """A basis fitted on a sample of `matrix`'s rows, and every row projected on it."""
        rng = np.random.default_rng(0)  # the same rows give the same basis in every process
        size = min(_SAMPLE, matrix.n)
        sample = matrix.take(np.sort(rng.choice(matrix.n, size, replace=False)))
        moment = sample.astype(np.float64).T @ sample.astype(np.float64)
        values, vectors = np.linalg.eigh(moment)
        keep = np.argsort(-values)[: min(DIMS, matrix.dims)]
        basis = np.ascontiguousarray(vectors[:, keep], np.float32)
        pruned = cls(basis, Matrix(), Matrix(), (_floats(0), _floats(0)), 0)
        for chunk in matrix.chunks():
            pruned.append(chunk)
        return pruned

    @classmethod
    def restored(
        cls, basis: Floats, head: Floats, tail: Floats, residual: Floats, head_residual: Floats
    ) -> Pruned:
        n = int(head.shape[0])
        residuals = (np.array(residual, np.float32), np.array(head_residual, np.float32))
        return cls(basis, Matrix.of(head), Matrix.of(tail), residuals, n)

    def project(self, rows: Floats) -> tuple[Floats, Floats]:
        """Rows' projections, and per row the norms of what the whole projection and its head
        leave out (computed from the differences, not from |x|^2 - |x_p|^2, whose cancellation
        would loosen no bound but could tighten one below the truth)."""
        reduced: Floats = np.ascontiguousarray(rows @ self.basis, np.float32)
        rest = rows - reduced @ self.basis.T
        residual = np.einsum("ij,ij->i", rest, rest).astype(np.float64)
        tail = reduced[:, self.split :].astype(np.float64)
        # |x - head part|^2 = |rest|^2 + |tail part|^2: orthogonal pieces, a sum of squares.
        head_residual = residual + np.einsum("ij,ij->i", tail, tail)
        return reduced, np.sqrt(np.stack([residual, head_residual], axis=1)).astype(np.float32)

    def append(self, rows: Floats) -> None:
        for start in range(0, rows.shape[0], 65_536):  # bounded temporaries on a full load
            reduced, residuals = self.project(np.asarray(rows[start : start + 65_536], np.float32))
            self.head.append(np.ascontiguousarray(reduced[:, : self.split]))
            self.tail.append(np.ascontiguousarray(reduced[:, self.split :]))
            end = self.n + residuals.shape[0]
            if end > self.residual.shape[0]:
                capacity = max(end, 2 * self.residual.shape[0])
                self.residual = _grown(self.residual, capacity, self.n)
                self.head_residual = _grown(self.head_residual, capacity, self.n)
            self.residual[self.n : end] = residuals[:, 0]
            self.head_residual[self.n : end] = residuals[:, 1]
            self.n = end

    def set_windows(self, rows: npt.NDArray[np.intp], vectors: Floats, capacity: int) -> None:
        """Project window vectors now held at `rows` of the cache's window array."""
        if self.window_reduced.shape[0] < capacity:
            reduced = np.zeros((capacity, self.basis.shape[1]), np.float32)
            reduced[: self.window_reduced.shape[0]] = self.window_reduced
            residual = np.zeros((capacity, 2), np.float32)
            residual[: self.window_residual.shape[0]] = self.window_residual
            self.window_reduced, self.window_residual = reduced, residual
        if rows.size:
            self.window_reduced[rows], self.window_residual[rows] = self.project(vectors)

    def bounds(self, query: Floats, windows: Windows | None) -> Bounds:
        """Every row's approximate score from the head of the projection and the most its true
        score can exceed it by; `windows` (cache positions, window rows) replaces rows by their
        window. `Bounds.refine` tightens the bound of chosen rows with the tail."""
        projected: Floats = np.ascontiguousarray(query @ self.basis, np.float32)
        head_query = np.ascontiguousarray(projected[: self.split])
        rest = query - projected @ self.basis.T
        query_residual = float(np.sqrt(rest @ rest))
        head_rest = query - head_query @ self.basis[:, : self.split].T
        head_query_residual = float(np.sqrt(head_rest @ head_rest))
        approx = self.head.product(head_query)
        slack: Floats = self.head_residual[: self.n] * np.float32(head_query_residual)
        if windows is not None and windows[0].size:
            positions, rows = windows
            approx[positions] = self.window_reduced[rows, : self.split] @ head_query
            slack[positions] = self.window_residual[rows, 1] * np.float32(head_query_residual)
        slack += np.float32(_SLACK)
        return Bounds(self, approx, slack, projected, query_residual, windows)

    def to_save(self) -> dict[str, Any]:
        return {
            "basis": self.basis,
            "head": self.head,
            "tail": self.tail,
            "residual": self.residual[: self.n],
            "head_residual": self.head_residual[: self.n],
        }


Windows = tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]


class Bounds:
    """One query's head bound over every row, and the tail's tightening of chosen rows."""

    def __init__(
        self,
        pruned: Pruned,
        approx: Floats,
        slack: Floats,
        projected: Floats,
        query_residual: float,
        windows: Windows | None,
    ) -> None:
        self.approx, self.slack = approx, slack
        self._pruned, self._projected, self._residual = pruned, projected, query_residual
        self._windows = windows

    def refine(self, positions: npt.NDArray[np.intp]) -> Floats:
        """The whole projection's bound of the rows at `positions` (the head's approximate
        score plus the tail's, and the smaller residual)."""
        pruned, split = self._pruned, self._pruned.split
        tail_query = np.ascontiguousarray(self._projected[split:])
        approx = self.approx[positions] + pruned.tail.take(positions) @ tail_query
        slack = pruned.residual[positions] * np.float32(self._residual)
        if self._windows is not None and self._windows[0].size:
            order = np.argsort(self._windows[0])
            held, rows = self._windows[0][order], self._windows[1][order]
            found = np.minimum(np.searchsorted(held, positions), held.shape[0] - 1)
            hit = np.flatnonzero(held[found] == positions)
            window = rows[found[hit]]
            approx[hit] = pruned.window_reduced[window] @ self._projected
            slack[hit] = pruned.window_residual[window, 0] * np.float32(self._residual)
        bound: Floats = approx + slack + np.float32(_SLACK)
        return bound


def head_columns(dims: int) -> int:
    """How many leading columns of a projection the first scan reads: half, measured at 1M
    rows of 384 dimensions as 8 ms against 16-18 ms for all 64, while the rows the half's bound
    lets through (1-16k) cost a gather of their tail."""
    return (dims + 1) // 2


def exact_top(
    bounds: Bounds,
    mask: npt.NDArray[np.bool_],
    k: int,
    score: Any,
    budget: int,
) -> tuple[npt.NDArray[np.intp], Floats] | None:
    """Positions and exact scores of the best `k` rows `mask` admits, `score(positions)` giving
    exact scores; None when more than `budget` rows would need a closer look (a full product is
    then cheaper). The best rows by the head's approximate score are scored exactly; every
    other row whose head bound reaches the k-th of those scores has its bound tightened by the
    tail, and is scored if it still reaches it. `bounds`' arrays are overwritten."""
    approx, slack = bounds.approx, bounds.slack
    admitted = int(np.count_nonzero(mask))
    if admitted < approx.shape[0]:  # a pass over every row, saved when the filter admits all
        np.copyto(approx, np.float32(-np.inf), where=~mask)
    first_count = min(max(4 * k, _FIRST), admitted)
    if first_count == 0:
        return np.zeros(0, np.intp), _floats(0)
    first = np.sort(_best_rows(approx, first_count))  # by position: ties fall the same way
    first = first[np.isfinite(approx[first])]
    exact: Floats = score(first)
    wanted = min(k, exact.shape[0])
    kth = np.partition(exact, exact.shape[0] - wanted)[exact.shape[0] - wanted]
    bound = np.add(approx, slack, out=slack)
    bound[first] = -np.inf  # already scored exactly
    more = np.flatnonzero(bound >= kth)
    if more.size > budget:
        return None
    if more.size:
        more = more[bounds.refine(more) >= kth]
    if more.size:
        first = np.concatenate([first, more])
        exact = np.concatenate([exact, score(more)])
    return first, exact


def _best_rows(approx: Floats, count: int) -> npt.NDArray[np.intp]:
    """The positions of the `count` largest values of `approx` (any order). A partition of a
    million rows costs 3-5 ms; on a large array a threshold placed from a strided sample picks a
    few times `count` rows in one comparison pass, and only those are partitioned. Any `count`
    largest rows do: which of them the bound starts from never changes the answer."""
    n = approx.shape[0]
    if count >= n:
        return np.arange(n)
    step = n // _SAMPLED
    if step >= 8:
        sample = approx[::step]
        rank = min(sample.shape[0], 2 * (count // step) + 4)  # ~2x `count` rows expected above
        threshold = np.partition(sample, sample.shape[0] - rank)[sample.shape[0] - rank]
        if np.isfinite(threshold):
            chosen = np.flatnonzero(approx >= threshold)
            if chosen.shape[0] >= count:
                return chosen[np.argpartition(-approx[chosen], count - 1)[:count]]
    return np.argpartition(-approx, count - 1)[:count]


def _floats(size: int) -> Floats:
    return np.zeros(size, np.float32)


def _grown(array: Floats, capacity: int, used: int) -> Floats:
    grown = _floats(capacity)
    grown[:used] = array[:used]
    return grown
