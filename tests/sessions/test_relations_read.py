"""A read of the relations around some memories answers as the store would for any ids."""

from __future__ import annotations

from itertools import chain, combinations

from cairn import Cairn
from cairn.refs import parse_memory_refs
from cairn.sessions.relations import MAY_UPDATE, RELATES_TO, VERSION, read_relations
from storekit import T0

SCOPE = "project:example/api"


def _subsets(ids: list[int]) -> list[tuple[int, ...]]:
    return list(chain.from_iterable(combinations(ids, n) for n in range(len(ids) + 1)))


def test_a_read_answers_as_the_store_would_for_any_ids(mem: Cairn) -> None:
    """Every set of ids asked of every earlier read: the read's relations touching them, and
    the store's for ids it did not cover, each relation once, are the store's own answer."""
    ids = [
        parse_memory_refs([mem.remember(f"claim {n}", type="fact", scope=SCOPE).memory_id])[0]
        for n in range(5)
    ]
    store = mem.store
    edges = [(0, 1, RELATES_TO), (1, 2, MAY_UPDATE), (3, 1, VERSION), (4, 0, RELATES_TO)]
    with store.transaction():
        for a, b, kind in edges:
            store.add_relation(ids[a], ids[b], kind, T0)
    for covered in _subsets(ids):
        read = read_relations(store, list(covered))
        for asked in _subsets(ids):
            found = read.of(store, list(asked))
            assert sorted(found, key=repr) == sorted(store.relations_of(list(asked)), key=repr)
            assert len(found) == len(set(found))
