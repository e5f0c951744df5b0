"""`FallbackEmbedder`: a server embedder (Ollama) that falls back to the local model when the
server cannot be reached, instead of failing the write.

The switch is made once, at the first call that finds the server unreachable, with one warning
(logger `cairn`, which Python prints on stderr when nothing else is configured), and holds for
the rest of the process: every vector after it comes from the fallback model and carries that
model's identity (`identity` answers for the model in use), so vectors of two models are never
stored under one identity. `cairn reindex` re-embeds them with the configured model once the
server is back. A server that answers but with an error (a missing model, a bad reply) is a
configuration problem the user should see, so it still fails: only `EmbedderUnreachable`
triggers the fallback.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from cairn.embeddings.base import Embedder, Matrix
from cairn.errors import EmbedderUnreachable

LOG = logging.getLogger("cairn")
T = TypeVar("T")


class FallbackEmbedder:
    """`primary` while it can be reached; after the first time it cannot, `fallback()`."""

    def __init__(self, primary: Embedder, fallback: Callable[[], Embedder], name: str) -> None:
        self._primary = primary
        self._make_fallback = fallback
        self._name = name  # the fallback's name for the warning, e.g. "local"
        self._fallback: Embedder | None = None
        self._lock = threading.Lock()

    @property
    def falling_back(self) -> bool:
        return self._fallback is not None

    @property
    def identity(self) -> str:
        return self._call(lambda embedder: embedder.identity)

    @property
    def dimensions(self) -> int:
        return self._call(lambda embedder: embedder.dimensions)

    def embed_many(self, texts: Sequence[str]) -> Matrix:
        return self._call(lambda embedder: embedder.embed_many(texts))

    def _call(self, use: Callable[[Embedder], T]) -> T:
        fallback = self._fallback
        if fallback is not None:
            return use(fallback)
        try:
            return use(self._primary)
        except EmbedderUnreachable as exc:
            return use(self._switch(exc))

    def _switch(self, exc: EmbedderUnreachable) -> Embedder:
        with self._lock:
            if self._fallback is None:
                self._fallback = self._make_fallback()
                LOG.warning(
                    "cairn: %s; embedding with the %s model instead (its vectors carry its "
                    "identity; `cairn reindex` re-embeds them once the server is back)",
                    exc.message.rstrip("."), self._name,
                )  # fmt: skip
            return self._fallback
