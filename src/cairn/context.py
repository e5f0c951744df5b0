"""What every operation of the core needs: the store, settings, clock and (lazily) the embedder.

The embedder is built on first use, so commands that never embed (`show`, `export`, `stats`)
never pay for loading a model. Query texts are embedded through `embed_query`, which keeps the
last few vectors: one recall embeds its phrasings for memories and again for procedures, and
agents repeat questions; embeddings are deterministic, so a cached vector is the same vector.

`start_query_embedding` embeds on a worker thread: a recall reads its keyword candidates while
the model runs. Both wait outside the GIL (onnxruntime and SQLite release it), so the query
embedding (about a third of a recall) mostly disappears behind the lexical search.
`start_query_search` goes one step further where the store allows it (PostgreSQL): the worker
also runs the dense search once the vector is there, on a server process of its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from cairn.config import Settings
from cairn.embeddings.base import Embedder, Vector
from cairn.lru import Lru
from cairn.store.base import Store
from cairn.timeutil import Clock

T = TypeVar("T")
QUERY_CACHE_SIZE = 256
# Recalls served at once (an HTTP or MCP server's threads) embed their queries at once too;
# threads are started only as concurrent recalls need them.
EMBED_WORKERS = 4


@dataclass(frozen=True)
class PendingVector:
    """A query vector being computed (or already known); `result()` waits for it."""

    text: str
    _done: Vector | None
    _future: Future[Vector] | None
    _remember: Callable[[str, Vector], None]

    def result(self) -> Vector:
        if self._done is not None:
            return self._done
        assert self._future is not None
        vector = self._future.result()  # re-raises the embedder's error, e.g. a missing model
        self._remember(self.text, vector)
        return vector


@dataclass(frozen=True)
class QuerySearch(Generic[T]):
    """A query being embedded and then searched on the worker thread: `vector()` waits for the
    embedding only, `result()` for the search too. Both re-raise the embedder's error."""

    _vector: Future[Vector]
    _search: Future[T]

    def vector(self) -> Vector:
        return self._vector.result()

    def searched(self) -> bool:
        return self._search.done()

    def result(self) -> tuple[Vector, T]:
        return self._vector.result(), self._search.result()


@dataclass
class Context:
    store: Store
    settings: Settings
    clock: Clock
    embedder_factory: Callable[[], Embedder]
    integration: str
    integration_version: str | None = None
    _embedder: Embedder | None = field(default=None, init=False)
    _queries: Lru[str, Vector] = field(default_factory=lambda: Lru(QUERY_CACHE_SIZE), init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _worker: ThreadPoolExecutor | None = field(default=None, init=False)

    @property
    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                self._embedder = self.embedder_factory()
            return self._embedder

    def embed_query(self, text: str) -> Vector:
        """The vector of a query text, from a small most-recently-used cache when it is there.

        Computed on the calling thread: the caller waits for it anyway, a hand-off to the
        worker would only add a thread's wake-up, and a caller that is itself a worker (a read
        run beside a recall) must not wait for a task of its own pool."""
        cached = self._queries.get(text)
        if cached is not None:
            return cached
        vector: Vector = self.embedder.embed_many([text])[0]
        self._remember(text, vector)
        return vector

    def start_query_embedding(self, text: str) -> PendingVector:
        """Begin embedding a query text on the worker thread, unless its vector is cached."""
        cached = self._queries.get(text)
        if cached is not None:
            return PendingVector(text, cached, None, self._remember)
        return PendingVector(text, None, self.start_embedding(text), self._remember)

    def start_embedding(self, text: str) -> Future[Vector]:
        """Begin embedding a text on the worker thread, uncached (a claim is embedded once)."""
        embedder = self.embedder
        return self._executor().submit(lambda: embedder.embed_many([text])[0])

    def start_query_search(self, text: str, search: Callable[[Vector], T]) -> QuerySearch[T]:
        """Embed a query text and run `search` on its vector, both on the worker thread.

        One task does both, so a worker never waits for another task of the same pool (four
        concurrent recalls could otherwise hold every worker waiting for embeddings queued
        behind them). The vector is handed out as soon as it exists, so the caller can read
        with it while the search still runs. `search` runs on the worker thread: only a store
        whose `concurrent_reads` says so may be read there."""
        vector_ready: Future[Vector] = Future()

        def run() -> T:
            try:
                vector = self.embed_query(text)
            except BaseException as err:
                vector_ready.set_exception(err)
                raise
            vector_ready.set_result(vector)
            return search(vector)

        return QuerySearch(vector_ready, self._executor().submit(run))

    def start_read(self, read: Callable[[], T]) -> Future[T]:
        """Run `read` on the worker thread while the caller goes on; only for a store whose
        `concurrent_reads` says so (the read runs on a server connection of its own)."""
        return self._executor().submit(read)

    def close(self) -> None:
        """Stop the embedding worker; a later query starts a new one."""
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.shutdown(wait=True)

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._worker is None:
                self._worker = ThreadPoolExecutor(EMBED_WORKERS, thread_name_prefix="cairn-embed")
            return self._worker

    def _remember(self, text: str, vector: Vector) -> None:
        vector.setflags(write=False)  # shared between callers: nobody may change it
        self._queries.put(text, vector)
