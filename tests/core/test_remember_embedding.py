"""Where a claim is embedded (`remember.start_vector`, `claim_vector`). On a store whose every
statement waits on a server (`Store.remote`: PostgreSQL) the model runs on the worker thread
while the call is checked and the write transaction opens and looks the content up: a
word-for-word restatement never waits for it, a model that fails there stores nothing, and a
refused call reports its own error. An embedded store (SQLite) embeds on the calling thread,
after the checks and before its transaction."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from cairn import Cairn, core
from cairn.config import Settings
from cairn.embeddings.base import Matrix
from cairn.embeddings.hashing import HashingEmbedder
from cairn.errors import EmbedderUnavailable, Refused, UnknownType
from cairn.remember import Claim
from clocks import FakeClock

SCOPE = "project:acme/api"
CLAIM = "The session store lives in PostgreSQL, not Redis."
AWS_KEY = "AKIA" + "QX7PLM2RT4VB9NWE"  # built, so no scanner flags this file


class GatedEmbedder(HashingEmbedder):
    """Notes the thread each embedding runs on, waits while `gate` is closed, and raises while
    `failing` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: list[str] = []
        self.gate = threading.Event()
        self.gate.set()
        self.failing = False
        self.started = threading.Event()

    def embed_many(self, texts: Sequence[str]) -> Matrix:
        self.threads.append(threading.current_thread().name)
        self.started.set()
        if not self.gate.wait(timeout=60):
            raise AssertionError("the gate was never opened")
        if self.failing:
            raise EmbedderUnavailable("the model could not run (test)")
        return super().embed_many(texts)


@pytest.fixture
def gated() -> GatedEmbedder:
    return GatedEmbedder()


@pytest.fixture
def opened(
    store_location: str, settings: Settings, gated: GatedEmbedder, tmp_path: Path
) -> Iterator[Cairn]:
    with Cairn.open(
        store_location, settings=settings, embedder=gated, clock=FakeClock(), cwd=tmp_path
    ) as mem:
        yield mem


def test_a_claim_is_embedded_beside_its_transaction_only_when_statements_wait_on_a_server(
    opened: Cairn, gated: GatedEmbedder
) -> None:
    first = opened.remember(CLAIM, type="fact", scope=SCOPE)
    assert first.disposition == "created"
    beside = opened.store.remote
    assert beside == (opened.store.backend == "postgres")
    assert gated.threads[-1].startswith("cairn-embed") == beside
    assert (gated.threads[-1] == threading.current_thread().name) != beside
    # Same vector, same decisions: the near-duplicate with another value links to the first.
    second = opened.remember(CLAIM.replace("PostgreSQL", "MySQL"), type="fact", scope=SCOPE)
    assert second.disposition == "created" and second.may_update == first.memory_id
    given = opened.remember("Caller-embedded claim.", type="fact", scope=SCOPE, embedding=[1.0])
    assert given.disposition == "created" and len(gated.threads) == 2  # no model call for it


@pytest.mark.postgres
@pytest.mark.parametrize("store_location", ["postgres"], indirect=True)
def test_a_restatement_never_waits_for_its_embedding(opened: Cairn, gated: GatedEmbedder) -> None:
    created = opened.remember(CLAIM, type="fact", scope=SCOPE)
    gated.gate.clear()  # every embedding from now on waits until the test opens the gate
    try:
        again = opened.remember(CLAIM, type="fact", scope=SCOPE)
    finally:
        gated.gate.set()
    assert again.disposition == "matched" and again.memory_id == created.memory_id


@pytest.mark.postgres
@pytest.mark.parametrize("store_location", ["postgres"], indirect=True)
def test_a_model_failing_on_the_worker_stores_nothing_and_frees_the_store(
    opened: Cairn, gated: GatedEmbedder
) -> None:
    opened.remember(CLAIM, type="fact", scope=SCOPE)
    before = _rows(opened)
    gated.failing = True
    with pytest.raises(EmbedderUnavailable, match="could not run"):
        opened.remember("Deploys go through the staging cluster.", type="fact", scope=SCOPE)
    assert gated.threads[-1].startswith("cairn-embed")
    assert _rows(opened) == before  # no memory, no event
    gated.failing = False
    after = opened.remember("Deploys go through the staging cluster.", type="fact", scope=SCOPE)
    assert after.disposition == "created"  # the write lock was released with the rollback


@pytest.mark.postgres
@pytest.mark.parametrize("store_location", ["postgres"], indirect=True)
def test_the_model_starts_before_the_checks_and_a_refused_call_reports_its_own_error(
    opened: Cairn, gated: GatedEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    checking = core.build_claim

    def checked_after_the_model_started(*args: Any, **kwargs: Any) -> Claim:
        assert gated.started.wait(timeout=60), "the model did not start beside the checks"
        return checking(*args, **kwargs)

    monkeypatch.setattr(core, "build_claim", checked_after_the_model_started)
    assert opened.remember(CLAIM, type="fact", scope=SCOPE).disposition == "created"
    gated.failing = True  # whatever the model does, the checks decide a refused call
    with pytest.raises(UnknownType):
        opened.remember("Deploys go through staging.", type="opinion", scope=SCOPE)
    with pytest.raises(Refused):
        opened.remember(f"The deploy key is {AWS_KEY}.", type="fact", scope=SCOPE)
    assert _rows(opened) == (1, 1)


def _rows(mem: Cairn) -> tuple[int, int]:
    return sum(1 for _ in mem.store.iter_memories()), sum(1 for _ in mem.store.iter_events())
