"""Possible updates: a claim stored beside a near-duplicate that carries other values.

`remember` does not boost a near-duplicate whose values differ (`cairn.values`): it stores the
new claim and links it to the older one with a `may_update` relation (newer → older). Until
someone decides — `tidy` proposes an `update`, and accepting it makes the older version
`replaced` by the newer — both stay current, and:

- `get_memory` shows the link on both (`may_update`, `may_be_updated_by`);
- recall ranks the newer claim above the older one (bringing it in when only the older one
  matched), and marks each of them `conflicts_with` the other, so an agent never reads one
  value without seeing that another was written later.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from cairn.context import Context
from cairn.models import Memory
from cairn.ranking.recall import Scored
from cairn.sessions.relations import MAY_UPDATE, RelationsRead, relations_of
from cairn.store.base import MemoryFilter, Store


@dataclass(frozen=True, slots=True)
class Links:
    """`may_update` relations around some memories, both ways."""

    older: dict[int, list[int]] = field(default_factory=dict)  # id -> ids it may update
    newer: dict[int, list[int]] = field(default_factory=dict)  # id -> ids that may update it

    def partners(self, memory_id: int) -> list[int]:
        return [*self.newer.get(memory_id, []), *self.older.get(memory_id, [])]


def links_of(store: Store, ids: Sequence[int], read: RelationsRead | None = None) -> Links:
    links = Links()
    if not ids:
        return links
    for relation in relations_of(store, ids, read):
        if relation.kind != MAY_UPDATE:
            continue
        links.older.setdefault(relation.from_id, []).append(relation.to_id)
        links.newer.setdefault(relation.to_id, []).append(relation.from_id)
    for found in (*links.older.values(), *links.newer.values()):
        found.sort()
    return links


def newer_first(
    ctx: Context,
    ranked: Sequence[Scored],
    filt: MemoryFilter,
    limit: int,
    read: RelationsRead | None = None,
) -> tuple[list[Scored], dict[int, tuple[str, ...]]]:
    """Ranked memories with every newer claim above the older one it may update.

    A newer claim that did not match on its own comes in just above its older one, with the
    older one's score. Returns the new order (at most `limit`) and, for each memory in it, the
    refs of the current memories it conflicts with. Pairs outside `filt` (a retired or already
    replaced side, a later write under `as_of`) are no conflict.
    """
    by_id = {s.memory.id: s for s in ranked}
    links = links_of(ctx.store, list(by_id), read)
    if not links.older:  # the common case: no hit has a possible update
        return list(ranked), {}
    involved = set(by_id) | {p for i in by_id for p in links.partners(i)}
    current = ctx.store.filter_ids(filt, sorted(involved))
    order = list(ranked)
    pairs = sorted(
        (new, old)
        for old in by_id
        for new in links.newer.get(old, [])
        if new in current and old in current
    )
    missing = sorted({new for new, _ in pairs if new not in by_id})
    loaded = {m.id: m for m in ctx.store.get_memories(missing)}
    for _ in range(len(pairs) + 1):  # a chain of updates settles in as many passes
        moved = False
        for new, old in pairs:
            ids = [s.memory.id for s in order]
            if new in ids and ids.index(new) < ids.index(old):
                continue
            order = _above(order, new, old, loaded)
            moved = True
        if not moved:
            break
    order = order[:limit]
    conflicts = {
        s.memory.id: tuple(f"mem_{p}" for p in links.partners(s.memory.id) if p in current)
        for s in order
    }
    return order, {k: v for k, v in conflicts.items() if v}


def _above(order: list[Scored], new: int, old: int, loaded: dict[int, Memory]) -> list[Scored]:
    """`order` with the newer claim moved (or brought in) just above the older one."""
    older = next(s for s in order if s.memory.id == old)
    present = [s for s in order if s.memory.id == new]
    if present:
        newer = present[0]
    else:
        memory = loaded.get(new)
        if memory is None:
            return order
        newer = Scored(memory, older.score, older.weak, {})
    newer = replace(
        newer,
        score=max(newer.score, older.score),
        # explain: the score the newer claim was lifted to, its older claim's
        parts={**newer.parts, "older_claim_score": older.score},
    )
    rest = [s for s in order if s.memory.id != new]
    at = next(i for i, s in enumerate(rest) if s.memory.id == old)
    return [*rest[:at], newer, *rest[at:]]
