"""Session neighbours: each memory is also indexed with the memories written around it.

A memory's *neighbours* are the memories of the same scope and the same session (`session_id`)
written just before and just after it: up to `RECIPE.window_before` earlier and
`RECIPE.window_after` later, in write order (id order). Conversation turns, the steps of a
debugging session, a batch of findings: a memory written in a session is often only
understandable with what surrounds it ("Super good, rich and creamy!" is about the ice cream
named one turn earlier). Retrieval reads two things built from the neighbours
(cairn.ranking.fusion):

- the lexical `context` field: the neighbours' analysed content;
- the window vector: the normalised `3 * own + sum(neighbours' own vectors)`, built from stored
  vectors, so writing a memory never calls the model for its neighbours.

A memory written without a session has no neighbours: its context is empty and its window is
its own vector. Memories saved on their own, at different times, by different tools, are
separate claims, and reading one in the light of whichever happened to be written next would
only add noise; an agent that wants its memories read together passes the session it opened.

Every memory of the session keeps its place, whatever its status: a replaced or retired memory
was still said at that point. A purged memory is erased from its neighbours too: its text
leaves their context and its vector leaves their windows (`after_purge`).

Writes happen inside the caller's transaction, so a memory and its neighbours' refreshed
context and windows become visible together.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cairn.ranking.fusion import RECIPE, window_vector
from cairn.ranking.lexical import analyze
from cairn.store.base import Store

# A new memory changes the context and window of the memories up to this far before it.
_REACH = max(RECIPE.window_before, RECIPE.window_after)
_BATCH = 500


def after_write(store: Store, memory_id: int, identity: str) -> None:
    """Index a new memory with its neighbours and refresh the neighbours that now see it."""
    window = store.session_windows([memory_id], _REACH).get(memory_id, (memory_id,))
    if len(window) > 1:
        refresh(store, window, [identity])


def after_purge(store: Store, memory_ids: Sequence[int]) -> None:
    """Take purged memories' text and vectors out of their neighbours' context and windows.

    The memories are already marked purged; their own rows (vectors, windows, lexical entries)
    are the store's to delete (`erase_memories`)."""
    purged = set(memory_ids)
    windows = store.session_windows(list(purged), _REACH)
    affected = sorted({other for window in windows.values() for other in window} - purged)
    if affected:
        refresh(store, affected, list(store.vector_identities()))


def rebuild(store: Store, memory_ids: Iterable[int]) -> int:
    """Recompute context and windows for many memories (after an import); returns how many."""
    identities = list(store.vector_identities())
    ids = list(memory_ids)
    for start in range(0, len(ids), _BATCH):
        refresh(store, ids[start : start + _BATCH], identities)
    return len(ids)


def refresh(store: Store, memory_ids: Sequence[int], identities: Sequence[str]) -> None:
    """Recompute the lexical context and the window vectors of these memories."""
    windows = store.session_windows(memory_ids, _REACH)
    members = sorted({other for window in windows.values() for other in window})
    memories = {m.id: m for m in store.get_memories(members)}
    vectors = {identity: store.get_vectors(members, identity) for identity in identities}
    erased = {mid for mid, memory in memories.items() if memory.status == "purged"}
    for memory_id, window in windows.items():
        if memory_id in erased:
            continue  # a purged memory has no index entry left to refresh
        before, after = _split(window, memory_id)
        neighbours = [other for other in (*before, *after) if other not in erased]
        context = " ".join(
            " ".join(analyze(memories[other].content)) for other in neighbours if other in memories
        )
        store.set_lexical_context(memory_id, context)
        for identity, found in vectors.items():
            own = found.get(memory_id)
            if own is None:
                continue
            around = [found[other] for other in neighbours if other in found]
            if around:
                vector = window_vector(own, around, RECIPE.window_self_weight)
                store.put_window(memory_id, identity, vector)
            else:
                store.delete_window(memory_id)


def _split(window: Sequence[int], memory_id: int) -> tuple[list[int], list[int]]:
    """The neighbours before and after the memory, trimmed to the recipe's reach each way."""
    position = list(window).index(memory_id)
    before = list(window[:position])[-RECIPE.window_before :] if RECIPE.window_before else []
    after = list(window[position + 1 :])[: RECIPE.window_after]
    return before, after


def after_reembed(store: Store, memory_ids: Sequence[int], identity: str) -> None:
    """Rebuild the windows around memories that just got a vector from the current embedder.

    Their neighbours' windows change too (they now see the new vectors), so the whole reach
    around each memory is refreshed; a neighbour still waiting for its own vector keeps its
    place and is refreshed again when its batch comes."""
    windows = store.session_windows(memory_ids, _REACH)
    affected = sorted({other for window in windows.values() for other in window})
    if affected:
        refresh(store, affected, [identity])
