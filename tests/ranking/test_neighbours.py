"""Session neighbours: lexical context and window vectors kept up to date on every write."""

from __future__ import annotations

import io

import numpy as np
import pytest

from cairn import Cairn
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.ranking.fusion import RECIPE, window_vector
from cairn.ranking.lexical import analyze
from cairn.store.base import MemoryFilter
from clocks import FakeClock

SCOPE = "user:chat"
TURNS = [
    "Joanna: I made coconut milk ice cream yesterday.",
    "Nate: Oh nice, how did it turn out?",
    "Joanna: Super good, rich and creamy!",
    "Nate: I went hiking in the hills this morning.",
    "Joanna: Lucky you, the weather was perfect.",
    "Nate: Next week I am trying a new trail.",
]


def converse(mem: Cairn, turns: list[str] = TURNS) -> tuple[str, list[int]]:
    session = mem.activate("chat with Nate", scope=SCOPE).session_id
    ids = []
    for text in turns:
        ref = mem.remember(text, type="fact", session_id=session, dedup=False).memory_id
        ids.append(int(ref.removeprefix("mem_")))
    return session, ids


def context_of(mem: Cairn, memory_id: int, word: str) -> str:
    rows = mem.store.lexical_candidates(MemoryFilter(scopes=(SCOPE,)), analyze(word), 50)
    return next((row.doc.context for row in rows if row.memory_id == memory_id), "")


def test_windows_are_the_neighbours_of_the_same_session_in_write_order(mem: Cairn) -> None:
    _, ids = converse(mem)
    windows = mem.store.session_windows(ids, 2)
    assert windows[ids[0]] == tuple(ids[:3])
    assert windows[ids[3]] == tuple(ids[1:6])
    assert windows[ids[5]] == tuple(ids[3:6])


def test_other_sessions_and_sessionless_memories_are_not_neighbours(mem: Cairn) -> None:
    _, first = converse(mem, TURNS[:3])
    alone = int(mem.remember("Nate: unrelated aside.", type="fact", scope=SCOPE).memory_id[4:])
    _, second = converse(mem, TURNS[3:])
    windows = mem.store.session_windows([first[-1], second[0], alone], 2)
    assert windows[first[-1]] == tuple(first)
    assert windows[second[0]] == tuple(second)
    assert windows[alone] == (alone,)
    assert context_of(mem, alone, "unrelated") == ""


def test_context_holds_the_neighbours_text_and_grows_as_they_arrive(mem: Cairn) -> None:
    session = mem.activate("chat", scope=SCOPE).session_id
    first = mem.remember(TURNS[0], type="fact", session_id=session).memory_id
    first_id = int(first[4:])
    assert context_of(mem, first_id, "coconut") == ""
    mem.remember(TURNS[1], type="fact", session_id=session)
    mem.remember(TURNS[2], type="fact", session_id=session)
    context = context_of(mem, first_id, "coconut").split()
    assert "creami" in context and "turn" in context  # both later turns, stemmed
    assert "coconut" not in context  # its own text is not its context


def test_a_reply_is_found_through_its_neighbours(mem: Cairn) -> None:
    _, ids = converse(mem)
    hits = mem.recall(
        "What did Joanna think of the coconut ice cream?", scope=SCOPE, explain=True, cut=False
    ).hits
    reply = next(h for h in hits if h.ref == f"mem_{ids[2]}")
    assert reply.explain is not None and reply.explain["lexical"] > 0
    assert ids[2] in [int(h.ref[4:]) for h in hits[:3]]


def test_window_vectors_mix_own_and_neighbour_vectors(mem: Cairn) -> None:
    _, ids = converse(mem)
    identity = mem.embedder.identity
    own = mem.store.get_vectors(ids, identity)
    query = own[ids[1]]
    found = mem.store.window_similarities(MemoryFilter(scopes=(SCOPE,)), identity, query, 0, ids)
    expected = window_vector(own[ids[2]], [own[i] for i in ids[0:2] + ids[3:5]], 3.0)
    assert found[ids[2]] == pytest.approx(float(expected @ query), abs=1e-5)
    # The window of turn 2 holds turn 1 itself, so it is closer to turn 1 than turn 2 alone is.
    assert found[ids[2]] > float(own[ids[2]] @ query)


def test_window_search_returns_the_best_k_plus_the_ids_asked_for(mem: Cairn) -> None:
    _, ids = converse(mem)
    identity = mem.embedder.identity
    query = mem.embedder.embed_many(["hiking in the hills"])[0]
    filt = MemoryFilter(scopes=(SCOPE,))
    top = mem.store.window_similarities(filt, identity, query, 2, [ids[0]])
    assert len(top) == 3 and ids[0] in top
    ranked = sorted(
        mem.store.window_similarities(filt, identity, query, 6, []).items(), key=lambda kv: -kv[1]
    )
    assert set(top) == {ids[0], ranked[0][0], ranked[1][0]}


def test_purge_takes_the_text_and_vector_out_of_the_neighbours(mem: Cairn) -> None:
    _, ids = converse(mem)
    identity = mem.embedder.identity
    mem.purge(f"mem_{ids[0]}", scope=SCOPE)
    assert "coconut" not in context_of(mem, ids[1], "turn").split()
    own = mem.store.get_vectors(ids, identity)
    query = mem.embedder.embed_many(["probe"])[0]
    found = mem.store.window_similarities(MemoryFilter(scopes=(SCOPE,)), identity, query, 0, ids)
    expected = window_vector(own[ids[1]], [own[ids[2]], own[ids[3]]], RECIPE.window_self_weight)
    assert found[ids[1]] == pytest.approx(float(expected @ query), abs=1e-5)
    assert ids[0] not in found


def test_a_correction_is_indexed_with_its_session(mem: Cairn) -> None:
    _, ids = converse(mem, TURNS[:3])
    new = mem.correct(
        f"mem_{ids[2]}", "Joanna: Super good, rich and smooth!", reason="typo", scope=SCOPE
    )
    new_id = int(new.memory_id[4:])
    assert mem.store.session_windows([new_id], 2)[new_id] == (ids[1], ids[2], new_id)
    assert "coconut" not in context_of(mem, new_id, "smooth").split()
    assert "turn" in context_of(mem, new_id, "smooth").split()


def test_import_rebuilds_context_and_windows(mem: Cairn, tmp_path, clock: FakeClock) -> None:  # type: ignore[no-untyped-def]
    _, ids = converse(mem)
    out = io.StringIO()
    mem.export(out)
    settings = Settings(home=tmp_path / "copy", embedder="hashing")
    with Cairn.open(
        str(tmp_path / "copy.db"), settings=settings, embedder=HashingEmbedder(), clock=clock
    ) as copy:
        copy.import_(out.getvalue().splitlines())
        assert context_of(copy, ids[0], "coconut") == context_of(mem, ids[0], "coconut")
        identity = copy.embedder.identity
        query = copy.embedder.embed_many(["ice cream"])[0]
        filt = MemoryFilter(scopes=(SCOPE,))
        before = mem.store.window_similarities(filt, identity, query, 0, ids)
        after = copy.store.window_similarities(filt, identity, query, 0, ids)
        assert np.allclose([before[i] for i in ids], [after[i] for i in ids], atol=1e-5)
