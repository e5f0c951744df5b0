"""The purge part of the `Store` contract (`EraseStore`), on SQLite and PostgreSQL: what
`erase_memories` deletes, what it leaves to other memories, and when `erase_freed` may run."""

from __future__ import annotations

import pytest

from cairn.errors import StoreError
from cairn.records.code import CitationRow
from cairn.store.base import Store
from storekit import IDENTITY, SCOPE, active, at, doc, new_memory, unit


def citation(memory_id: int) -> CitationRow:
    return CitationRow(
        memory_id=memory_id, scope=SCOPE, kind="lines", path="src/app.py", symbol=None,
        commit=None, root="/work/app", start_line=3, end_line=5, digest="d" * 64,
        line_hashes=("a1",), before=(), after=(), file_hash="f" * 64, created_at=at(0),
    )  # fmt: skip


def write(store: Store, content: str, tags: tuple[str, ...], direction: float) -> int:
    memory_id = store.add_memory(new_memory(content=content, tags=tags))
    store.put_vector(memory_id, IDENTITY, unit(1.0, direction))
    store.put_window(memory_id, IDENTITY, unit(direction, 1.0))
    store.put_lexical(memory_id, doc(content, tags=" ".join(tags)))
    store.put_citation(citation(memory_id))
    return memory_id


def test_erase_memories_deletes_every_derived_row_and_nothing_else(store: Store) -> None:
    gone = write(store, "cobalt harbour", ("harbourtag",), 0.1)
    kept = write(store, "amber harbour", ("keptag",), 0.9)
    quoting = store.upsert_proposal(SCOPE, "merge", "merge:a", [kept, gone],
                                    {"merged_text": "cobalt harbour"}, at(1))  # fmt: skip
    unrelated = store.upsert_proposal(SCOPE, "retire", "retire:b", [kept], {}, at(1))
    with store.transaction():
        store.update_memory(gone, {"tags": (), "status": "purged"})
        store.erase_memories([gone, gone])
    assert set(store.get_vectors([gone, kept], IDENTITY)) == {kept}
    assert [row.memory_id for row in store.lexical_candidates(active(), ["harbour"], 10)] == [kept]
    assert store.lexical_candidates(active(), ["cobalt"], 10) == []
    assert set(store.get_citations([gone, kept])) == {kept}
    assert store.get_proposal(quoting.id) is None
    assert store.get_proposal(unrelated.id) == unrelated
    similar = store.window_similarities(active(), IDENTITY, unit(0.1, 1.0), 5, [gone, kept])
    assert set(similar) == {kept}
    store.erase_memories([])  # nothing to erase is not an error
    store.erase_freed()


def test_erase_freed_refuses_to_run_inside_a_transaction(store: Store) -> None:
    with pytest.raises(StoreError, match="after the purge commits"), store.transaction():
        store.erase_freed()
