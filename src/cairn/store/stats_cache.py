"""BM25 statistics per (filter, term), kept between recalls by both backends.

Counting a term's documents and averaging field lengths costs milliseconds a recall, and the
same words recur; the counts stay valid while the store's generation counters (moved by every
process's writes to the lexical index or to a column a filter reads) read the same.
"""

from __future__ import annotations

import threading
from typing import Any


class GenerationCache:
    """BM25 statistics kept while the store's generation counters, which every process's writes
    to the lexical index or a filtered column move, read the same; `size` entries at most."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._generation: object = None
        self._items: dict[Any, Any] = {}

    def current(self, generation: object) -> dict[Any, Any]:
        """The entries counted under `generation` (None: no counter to trust, nothing kept)."""
        with self._lock:
            if generation is None:
                return {}
            if generation != self._generation or len(self._items) > self._size:
                self._items = {}
                self._generation = generation
            return self._items
