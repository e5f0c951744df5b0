"""The embedding seam: a small Protocol every model adapter satisfies.

An embedder never touches the store; the core stores each vector with the embedder's
`identity` so vectors from different models are never compared (DESIGN §5).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]
Matrix = npt.NDArray[np.float32]

# Embedders see at most this much of a text; the reference document embeds the first 2000 chars.
MAX_EMBED_CHARS = 2000


@runtime_checkable
class Embedder(Protocol):
    @property
    def identity(self) -> str:
        """Model name and dimensions, e.g. `all-MiniLM-L6-v2-int8/384`. Stored with every vector."""
        ...

    @property
    def dimensions(self) -> int: ...

    def embed_many(self, texts: Sequence[str]) -> Matrix:
        """One L2-normalised float32 row per text, shape (len(texts), dimensions)."""
        ...


def normalise_rows(matrix: Matrix) -> Matrix:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    result: Matrix = (matrix / norms).astype(np.float32, copy=False)
    return result


def fit_dimensions(vector: Sequence[float], dimensions: int) -> Vector:
    """Pad with zeros or truncate a pre-computed vector to the store's dimensions, then normalise.

    The reference document accepts vectors of any length this way; normalising keeps cosine
    comparable with the store's own vectors.
    """
    arr = np.asarray(list(vector), dtype=np.float32)
    if arr.ndim != 1:
        raise ValueError("an embedding must be a flat list of numbers")
    if arr.shape[0] >= dimensions:
        arr = arr[:dimensions]
    else:
        arr = np.concatenate([arr, np.zeros(dimensions - arr.shape[0], dtype=np.float32)])
    row: Vector = normalise_rows(arr.reshape(1, -1))[0]
    return row
