"""A float32 matrix that grows by whole chunks, so adding rows never copies the rows it holds.

The dense cache of a 1M store is 1.5 GB of vectors. Growing one array by doubling would, at
each growth, hold the old and the new array at once (3 GB and more, and a pause to copy); a list
of fixed-size chunks only ever allocates the next chunk. A matrix mapped from disk is one
read-only chunk; rows appended after it go into new chunks. The product with a query runs chunk
by chunk, which costs nothing measurable against one product over the whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

CHUNK_ROWS = 65_536


class Matrix:
    def __init__(self, dims: int = 0) -> None:
        self.dims = dims
        self.n = 0
        self._chunks: list[npt.NDArray[np.float32]] = []
        self._used: list[int] = []
        self._starts = np.zeros(0, np.int64)

    @classmethod
    def of(cls, array: npt.NDArray[np.float32]) -> Matrix:
        """A matrix whose first (read-only) chunk is `array`, e.g. a file mapped in memory."""
        matrix = cls(int(array.shape[1]))
        matrix._add_chunk(array, int(array.shape[0]))
        matrix.n = int(array.shape[0])
        return matrix

    def _add_chunk(self, chunk: npt.NDArray[np.float32], used: int) -> None:
        self._starts = np.append(self._starts, self.n)
        self._chunks.append(chunk)
        self._used.append(used)

    def append(self, rows: npt.NDArray[np.float32]) -> None:
        if self.n == 0 and not self._chunks:
            self.dims = int(rows.shape[1])
        if rows.shape[1] != self.dims:
            raise ValueError(f"vectors of one embedder differ in dimensions ({rows.shape[1]})")
        done = 0
        while done < rows.shape[0]:
            if not self._chunks or self._used[-1] == self._chunks[-1].shape[0]:
                self._add_chunk(np.zeros((CHUNK_ROWS, self.dims), np.float32), 0)
            chunk, used = self._chunks[-1], self._used[-1]
            take = min(chunk.shape[0] - used, rows.shape[0] - done)
            chunk[used : used + take] = rows[done : done + take]
            self._used[-1] = used + take
            done += take
            self.n += take

    def product(self, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Every row's dot product with `query`."""
        if not self._chunks:
            return np.zeros(0, np.float32)
        parts = [chunk[:used] @ query for chunk, used in zip(self._chunks, self._used, strict=True)]
        scores: npt.NDArray[np.float32] = parts[0] if len(parts) == 1 else np.concatenate(parts)
        return scores

    def take(self, positions: npt.NDArray[np.intp]) -> npt.NDArray[np.float32]:
        """The rows at `positions` (any order), as a new array."""
        out = np.empty((positions.shape[0], self.dims), np.float32)
        if positions.shape[0] == 0:
            return out
        owner = np.searchsorted(self._starts, positions, side="right") - 1
        for index in np.unique(owner).tolist():
            mine = np.flatnonzero(owner == index)
            out[mine] = self._chunks[index][positions[mine] - self._starts[index]]
        return out

    def chunks(self) -> Iterator[npt.NDArray[np.float32]]:
        for chunk, used in zip(self._chunks, self._used, strict=True):
            yield chunk[:used]

    def write_npy(self, out: BinaryIO) -> None:
        """The whole matrix as one `.npy` file, written chunk by chunk (no full copy)."""
        header: dict[str, Any] = {
            "descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)),
            "fortran_order": False,
            "shape": (self.n, self.dims),
        }
        np.lib.format.write_array_header_1_0(out, header)
        for chunk in self.chunks():
            out.write(np.ascontiguousarray(chunk, dtype="<f4").tobytes())
