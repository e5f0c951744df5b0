"""The Context's query vectors: embedded once, on a worker thread, errors passed to the caller."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from cairn.config import Settings
from cairn.context import EMBED_WORKERS, QUERY_CACHE_SIZE, Context
from cairn.embeddings.base import Matrix
from cairn.embeddings.hashing import HashingEmbedder
from cairn.errors import EmbedderUnavailable
from cairn.store import open_store
from clocks import FakeClock


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, noting each text it embeds and the thread it ran on."""

    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.seen: list[tuple[str, str]] = []
        self.fail = fail

    def embed_many(self, texts: Sequence[str]) -> Matrix:
        if self.fail:
            raise EmbedderUnavailable("the model file is missing; reinstall it.")
        self.seen.extend((text, threading.current_thread().name) for text in texts)
        return super().embed_many(texts)


@pytest.fixture
def embedder() -> CountingEmbedder:
    return CountingEmbedder()


@pytest.fixture
def ctx(tmp_path: Path, embedder: CountingEmbedder) -> Iterator[Context]:
    store = open_store(str(tmp_path / "c.db"))
    context = Context(store, Settings(home=tmp_path), FakeClock(), lambda: embedder, "test")
    yield context
    context.close()
    store.close()


def test_a_query_is_embedded_once_and_its_vector_is_shared_read_only(
    ctx: Context, embedder: CountingEmbedder
) -> None:
    first = ctx.embed_query("where do the deploy keys live")
    again = ctx.embed_query("where do the deploy keys live")
    assert again is first
    assert [text for text, _ in embedder.seen] == ["where do the deploy keys live"]
    assert np.array_equal(first, HashingEmbedder().embed_many(["where do the deploy keys live"])[0])
    with pytest.raises(ValueError):
        first[0] = 1.0


def test_the_embedding_runs_on_the_worker_while_the_caller_goes_on(
    ctx: Context, embedder: CountingEmbedder
) -> None:
    pending = ctx.start_query_embedding("rotate signing keys")
    vector = pending.result()
    assert embedder.seen == [("rotate signing keys", embedder.seen[0][1])]
    assert embedder.seen[0][1].startswith("cairn-embed")
    assert ctx.start_query_embedding("rotate signing keys").result() is vector
    assert len(embedder.seen) == 1


def test_a_query_waited_for_is_embedded_on_the_calling_thread(
    ctx: Context, embedder: CountingEmbedder
) -> None:
    """No hand-off to wait for, and a read run on a worker (procedures ranked beside a
    recall) never waits for a task of its own pool: with every worker taken by such a read,
    each still finishes."""
    ctx.embed_query("who owns the billing service")
    assert embedder.seen[0][1] == threading.current_thread().name
    gate = threading.Barrier(EMBED_WORKERS, timeout=10)

    def read(n: int) -> tuple[int, ...]:
        gate.wait()  # every worker busy at once
        return ctx.embed_query(f"read {n}").shape

    reads = [ctx.start_read(partial(read, n)) for n in range(EMBED_WORKERS)]
    assert [r.result(timeout=20) for r in reads] == [(384,)] * EMBED_WORKERS


def test_the_cache_keeps_only_the_most_recent_queries(
    ctx: Context, embedder: CountingEmbedder
) -> None:
    for n in range(QUERY_CACHE_SIZE + 1):
        ctx.embed_query(f"query {n}")
    ctx.embed_query(f"query {QUERY_CACHE_SIZE}")  # newest: still cached
    ctx.embed_query("query 0")  # oldest: pushed out, embedded again
    assert len(embedder.seen) == QUERY_CACHE_SIZE + 2


def test_an_embedder_error_reaches_the_caller_and_nothing_is_cached(tmp_path: Path) -> None:
    broken = CountingEmbedder(fail=True)
    store = open_store(str(tmp_path / "c.db"))
    ctx = Context(store, Settings(home=tmp_path), FakeClock(), lambda: broken, "test")
    try:
        pending = ctx.start_query_embedding("anything")
        with pytest.raises(EmbedderUnavailable, match="reinstall"):
            pending.result()
        broken.fail = False
        assert ctx.embed_query("anything").shape == (384,)
        assert broken.seen == [("anything", broken.seen[0][1])]
    finally:
        ctx.close()
        store.close()


def test_a_closed_context_starts_a_new_worker_when_asked_again(
    ctx: Context, embedder: CountingEmbedder
) -> None:
    ctx.embed_query("before")
    ctx.close()
    ctx.embed_query("after")
    assert [text for text, _ in embedder.seen] == ["before", "after"]


def test_concurrent_recalls_embed_their_queries_at_once(tmp_path: Path) -> None:
    # Two queries meet at a barrier inside the embedder: with one worker thread the second
    # would never start while the first waits, and the barrier would time out.
    barrier = threading.Barrier(2, timeout=10)

    class Meeting(HashingEmbedder):
        def embed_many(self, texts: Sequence[str]) -> Matrix:
            barrier.wait()
            return super().embed_many(texts)

    embedder = Meeting()
    store = open_store(str(tmp_path / "c.db"))
    ctx = Context(store, Settings(home=tmp_path), FakeClock(), lambda: embedder, "test")
    try:
        first, second = ctx.start_query_embedding("one"), ctx.start_query_embedding("two")
        assert first.result().shape == second.result().shape == (384,)
    finally:
        ctx.close()
        store.close()
