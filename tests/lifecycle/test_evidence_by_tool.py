"""Evidence by tool: another client restating a claim confirms it; the writer repeating itself
is an echo; each client counts once per session (once a day outside sessions)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from cairn import Cairn
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder

SCOPE = "project:example/evidence"
CLAIM = "The API rate limit is 100 requests per minute"


@pytest.fixture
def client(
    store_location: str, settings: Settings, embedder: HashingEmbedder, clock: Any
) -> Iterator[Callable[[str], Cairn]]:
    handles: list[Cairn] = []

    def make(integration: str) -> Cairn:
        handle = Cairn.open(store_location, settings=settings, embedder=embedder, clock=clock,
                            integration=integration)  # fmt: skip
        handles.append(handle)
        return handle

    yield make
    for handle in handles:
        handle.close()


def evidence(mem: Cairn, ref: str) -> tuple[int, dict[str, Any]]:
    memory = mem.get_memory([ref], scope=SCOPE).records[0].memory
    return memory.confirmed, dict(memory.evidence.get("clients", {}))


def test_another_client_confirms_and_the_writer_echoes(
    client: Callable[[str], Cairn], clock: Any
) -> None:
    claude, cursor = client("claude-code"), client("cursor")
    ref = claude.remember(CLAIM, type="fact", scope=SCOPE).memory_id
    assert claude.remember(CLAIM, type="fact", scope=SCOPE).disposition == "matched"
    confirmed, clients = evidence(claude, ref)
    assert confirmed == 0 and clients["claude-code"] == {"restated": 1, "echo": 1}
    assert cursor.remember(CLAIM, type="fact", scope=SCOPE).memory_id == ref
    confirmed, clients = evidence(claude, ref)
    assert confirmed == 1 and clients["cursor"] == {"restated": 1, "confirmed": 1}
    # The same client again the same day counts once; the next day it counts again.
    cursor.remember(CLAIM, type="fact", scope=SCOPE)
    assert evidence(claude, ref)[0] == 1
    clock.advance(days=1)
    cursor.remember(CLAIM, type="fact", scope=SCOPE)
    confirmed, clients = evidence(claude, ref)
    assert confirmed == 2 and clients["cursor"]["restated"] == 3


def test_a_near_duplicate_counts_like_a_restatement(client: Callable[[str], Cairn]) -> None:
    claude, cursor = client("claude-code"), client("cursor")
    ref = claude.remember(CLAIM, type="fact", scope=SCOPE).memory_id
    boosted = cursor.remember(CLAIM + ".", type="fact", scope=SCOPE)
    assert boosted.disposition in ("boosted", "matched") and boosted.memory_id == ref
    assert evidence(claude, ref)[0] == 1


def test_used_cites_from_another_client_confirm_once_per_session(
    client: Callable[[str], Cairn],
) -> None:
    claude, cursor = client("claude-code"), client("cursor")
    ref = claude.remember(CLAIM, type="fact", scope=SCOPE).memory_id
    claude.remember("Throttled the sync job", type="fact", scope=SCOPE, used=[ref])
    assert evidence(claude, ref)[0] == 0
    session = cursor.activate("Tune the client", scope=SCOPE)
    for note in ("Client backs off at 100 rpm", "Batch size set to 50"):
        cursor.remember(note, type="fact", session_id=session.session_id, used=[ref])
    confirmed, clients = evidence(claude, ref)
    assert confirmed == 1 and clients["cursor"]["cited"] == 2
    other = cursor.activate("Another task", scope=SCOPE)
    cursor.remember("Added a retry budget", type="fact", session_id=other.session_id, used=[ref])
    assert evidence(claude, ref)[0] == 2
    record = claude.get_memory([ref], scope=SCOPE).records[0].memory
    assert record.cited == 4


def test_cairn_rereading_what_it_holds_never_counts(client: Callable[[str], Cairn]) -> None:
    claude, pages = client("claude-code"), client("cairn:pages")
    ref = claude.remember(CLAIM, type="fact", scope=SCOPE).memory_id
    pages.remember(CLAIM, type="fact", scope=SCOPE)
    pages.remember("Indexed the docs", type="fact", scope=SCOPE, used=[ref])
    confirmed, clients = evidence(claude, ref)
    assert confirmed == 0 and "cairn:pages" not in clients


def test_a_confirmation_restores_a_contradicted_memory(
    client: Callable[[str], Cairn],
) -> None:
    claude, cursor = client("claude-code"), client("cursor")
    ref = claude.remember(CLAIM, type="fact", scope=SCOPE).memory_id
    claude._ctx.store.add_cite(int(ref[4:]), scope=SCOPE, branch="spike", session_id=None,
                               integration="claude-code", at=claude._ctx.clock())  # fmt: skip
    claude.observe_discard("spike", scope=SCOPE)
    claude._ctx.store.add_cite(int(ref[4:]), scope=SCOPE, branch="spike2", session_id=None,
                               integration="claude-code", at=claude._ctx.clock())  # fmt: skip
    claude.observe_discard("spike2", scope=SCOPE)
    assert claude.get_memory([ref], scope=SCOPE).records[0].memory.status == "resting"
    cursor.remember(CLAIM, type="fact", scope=SCOPE)
    assert claude.get_memory([ref], scope=SCOPE).records[0].memory.status == "active"
