"""What every operation of the core needs: the store, settings, clock and (lazily) the embedder.

The embedder is built on first use, so commands that never embed (`show`, `export`, `stats`)
never pay for loading a model. Query texts are embedded through `embed_query`, which keeps the
last few vectors: one recall embeds its phrasings for memories and again for procedures, and
agents repeat questions; embeddings are deterministic, so a cached vector is the same vector.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from cairn.config import Settings
from cairn.embeddings.base import Embedder, Vector
from cairn.store.base import Store
from cairn.timeutil import Clock

QUERY_CACHE_SIZE = 256


@dataclass
class Context:
    store: Store
    settings: Settings
    clock: Clock
    embedder_factory: Callable[[], Embedder]
    integration: str
    integration_version: str | None = None
    _embedder: Embedder | None = field(default=None, init=False)
    _queries: OrderedDict[str, Vector] = field(default_factory=OrderedDict, init=False)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self.embedder_factory()
        return self._embedder

    def embed_query(self, text: str) -> Vector:
        """The vector of a query text, from a small most-recently-used cache when it is there."""
        vector = self._queries.get(text)
        if vector is None:
            vector = self.embedder.embed_many([text])[0]
            vector.setflags(write=False)  # shared between callers: nobody may change it
            self._queries[text] = vector
            if len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
        else:
            self._queries.move_to_end(text)
        return vector
