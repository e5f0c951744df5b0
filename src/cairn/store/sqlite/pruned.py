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
_SLACK = 1e-4  # float32 rounding of the bound, so a row exactly at the k-th score is kept

Floats = npt.NDArray[np.float32]


class Pruned:
    """The projection of every row (and of every window vector) and its residual norms."""

    def __init__(self, basis: Floats, reduced: Matrix, residual: Floats, n: int) -> None:
        self.basis = basis  # dims x DIMS, orthonormal columns
        self.reduced = reduced
        self.residual = residual  # capacity >= n
        self.n = n
        self.window_reduced = np.zeros((0, basis.shape[1]), np.float32)
        self.window_residual = np.zeros(0, np.float32)

    @classmethod
    def fitted(cls, matrix: Matrix) -> Pruned:
        """A basis fitted on a sample of `matrix`'s rows, and every row projected on it."""
        rng = np.random.default_rng(0)  # the same rows give the same basis in every process
        size = min(_SAMPLE, matrix.n)
        sample = matrix.take(np.sort(rng.choice(matrix.n, size, replace=False)))
        moment = sample.astype(np.float64).T @ sample.astype(np.float64)
        values, vectors = np.linalg.eigh(moment)
        keep = np.argsort(-values)[: min(DIMS, matrix.dims)]
        pruned = cls(np.ascontiguousarray(vectors[:, keep], np.float32), Matrix(), _floats(0), 0)
        for chunk in matrix.chunks():
            pruned.append(chunk)
        return pruned

    @classmethod
    def restored(cls, basis: Floats, reduced: Floats, residual: Floats) -> Pruned:
        n = int(reduced.shape[0])
        return cls(basis, Matrix.of(reduced), np.array(residual, np.float32), n)

    def project(self, rows: Floats) -> tuple[Floats, Floats]:
        """Rows' projections and the norms of what the projection leaves out (computed from
        the difference, not from |x|^2 - |x_p|^2, whose cancellation would loosen no bound
        but could tighten one below the truth)."""
        reduced: Floats = np.ascontiguousarray(rows @ self.basis, np.float32)
        rest = rows - reduced @ self.basis.T
        residual: Floats = np.sqrt(np.einsum("ij,ij->i", rest, rest)).astype(np.float32)
        return reduced, residual

    def append(self, rows: Floats) -> None:
        for start in range(0, rows.shape[0], 65_536):  # bounded temporaries on a full load
            reduced, residual = self.project(np.asarray(rows[start : start + 65_536], np.float32))
            self.reduced.append(reduced)
            end = self.n + residual.shape[0]
            if end > self.residual.shape[0]:
                grown = _floats(max(end, 2 * self.residual.shape[0]))
                grown[: self.n] = self.residual[: self.n]
                self.residual = grown
            self.residual[self.n : end] = residual
            self.n = end

    def set_windows(self, rows: npt.NDArray[np.intp], vectors: Floats, capacity: int) -> None:
        """Project window vectors now held at `rows` of the cache's window array."""
        if self.window_reduced.shape[0] < capacity:
            reduced = np.zeros((capacity, self.basis.shape[1]), np.float32)
            reduced[: self.window_reduced.shape[0]] = self.window_reduced
            residual = _floats(capacity)
            residual[: self.window_residual.shape[0]] = self.window_residual
            self.window_reduced, self.window_residual = reduced, residual
        if rows.size:
            self.window_reduced[rows], self.window_residual[rows] = self.project(vectors)

    def bounds(
        self,
        query: Floats,
        windows: tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]] | None,
    ) -> tuple[Floats, Floats]:
        """Every row's approximate score (projection only) and the most its true score can
        exceed it by; `windows` (cache positions, window rows) replaces rows by their window."""
        projected: Floats = np.ascontiguousarray(query @ self.basis, np.float32)
        rest = query - projected @ self.basis.T
        query_residual = float(np.sqrt(rest @ rest))
        approx = self.reduced.product(projected)
        slack: Floats = self.residual[: self.n] * np.float32(query_residual)
        if windows is not None and windows[0].size:
            positions, rows = windows
            approx[positions] = self.window_reduced[rows] @ projected
            slack[positions] = self.window_residual[rows] * np.float32(query_residual)
        return approx, slack + np.float32(_SLACK)

    def to_save(self) -> dict[str, Any]:
        return {"basis": self.basis, "reduced": self.reduced, "residual": self.residual[: self.n]}


def exact_top(
    approx: Floats,
    slack: Floats,
    mask: npt.NDArray[np.bool_],
    k: int,
    score: Any,
    budget: int,
) -> tuple[npt.NDArray[np.intp], Floats] | None:
    """Positions and exact scores of the best `k` rows `mask` admits, `score(positions)` giving
    exact scores; None when more than `budget` rows would need rescoring (a full product is
    then cheaper)."""
    approx = np.where(mask, approx, np.float32(-np.inf))
    admitted = int(np.count_nonzero(mask))
    first_count = min(max(4 * k, _FIRST), admitted)
    if first_count == 0:
        return np.zeros(0, np.intp), _floats(0)
    if first_count < approx.shape[0]:
        first = np.argpartition(-approx, first_count - 1)[:first_count]
    else:
        first = np.arange(approx.shape[0])
    first = first[np.isfinite(approx[first])]
    exact: Floats = score(first)
    wanted = min(k, exact.shape[0])
    kth = np.partition(exact, exact.shape[0] - wanted)[exact.shape[0] - wanted]
    bound = approx + slack
    bound[first] = -np.inf  # already scored exactly
    more = np.flatnonzero(bound >= kth)
    if more.size > budget:
        return None
    if more.size:
        first = np.concatenate([first, more])
        exact = np.concatenate([exact, score(more)])
    return first, exact


def _floats(size: int) -> Floats:
    return np.zeros(size, np.float32)
