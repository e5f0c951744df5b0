"""Associations: memories that relate to others, and the `associated` pathway of recall.

`remember(..., relates_to=[refs])` records a `relates_to` relation; `correct` records a
`version` relation between the old and new version and carries the old version's relations
over to the new one, so what pointed at a claim keeps pointing at its current wording (a
`may_update` relation, from a claim stored beside a near-duplicate with other values, is
`cairn.updates`' business). A recall returns, beside its direct hits, the current memories
related to them (`pathway="associated"`, scored at half their direct hit's score, never counted
toward `limit`). They pass the same filter as direct hits, which is what keeps them inside the
caller's scope.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from cairn.context import Context
from cairn.errors import InvalidInput, InvalidRef
from cairn.evidence import visible_memory_ids
from cairn.models import Memory
from cairn.records.sessions import Relation
from cairn.scope import visible_scopes
from cairn.store.base import MemoryFilter, Store

RELATES_TO = "relates_to"
VERSION = "version"
MAY_UPDATE = "may_update"  # from a newer claim to an older near-duplicate with other values
ASSOCIATION_DECAY = 0.5
MAX_RELATES_TO = 20
_MAX_HOPS = 50


@dataclass(frozen=True, slots=True)
class Associated:
    memory: Memory
    via: Memory  # the direct hit it was reached from
    score: float


@dataclass(frozen=True, slots=True)
class RelationsRead:
    """The relations touching some memories, read once: a recall's update links and its
    associations both ask about its hits, and one read serves both."""

    ids: frozenset[int]
    relations: tuple[Relation, ...]

    def of(self, store: Store, ids: Sequence[int]) -> list[Relation]:
        """`store.relations_of(ids)`, reading only the ids this read did not cover."""
        wanted = set(ids)
        known = [r for r in self.relations if r.from_id in wanted or r.to_id in wanted]
        extra = sorted(wanted - self.ids)
        if not extra:
            return known
        return list(dict.fromkeys([*known, *store.relations_of(extra)]))


def read_relations(store: Store, ids: Sequence[int]) -> RelationsRead:
    unique = list(dict.fromkeys(ids))
    return RelationsRead(frozenset(unique), tuple(store.relations_of(unique) if unique else ()))


def relations_of(store: Store, ids: Sequence[int], read: RelationsRead | None) -> list[Relation]:
    return read.of(store, ids) if read is not None else list(store.relations_of(list(ids)))


def check_relations(ctx: Context, refs: object, scope: str) -> tuple[int, ...]:
    """The memory ids `relates_to` names; each must exist and be visible from `scope`."""
    if refs is None:
        return ()
    ref_list = [refs] if isinstance(refs, str) else refs
    if not isinstance(ref_list, Sequence) or not all(isinstance(r, str) for r in ref_list):
        raise InvalidInput("relates_to must be a list of memory refs such as ['mem_12'].")
    if len(ref_list) > MAX_RELATES_TO:
        raise InvalidInput(
            f"relates_to names {len(ref_list)} memories; relate to at most {MAX_RELATES_TO}."
        )
    ids, missing = visible_memory_ids(ctx.store, ref_list, scope)
    if missing:
        raise InvalidRef(
            f"relates_to names memories that do not exist in scope {scope}: "
            f"{', '.join(missing)}. Relate only to refs that recall or remember returned here."
        )
    return tuple(dict.fromkeys(ids))


def relate(store: Store, memory_id: int, targets: Sequence[int], at: datetime) -> None:
    for target in targets:
        if target != memory_id:
            store.add_relation(memory_id, target, RELATES_TO, at)


def relate_versions(store: Store, old_id: int, new_id: int, at: datetime) -> None:
    """Link a correction to what it replaced and give it the old version's associations."""
    store.add_relation(new_id, old_id, VERSION, at)
    for relation in store.relations_of([old_id]):
        if relation.kind != RELATES_TO:
            continue
        other = relation.to_id if relation.from_id == old_id else relation.from_id
        if other != new_id:
            store.add_relation(new_id, other, RELATES_TO, at)


def associated(
    ctx: Context,
    direct: Sequence[tuple[Memory, float]],
    filt: MemoryFilter,
    limit: int,
    read: RelationsRead | None = None,
) -> list[Associated]:
    """Current memories related to the direct hits, best-attached first, at most `limit`.

    `read`: relations already read around (some of) the hits."""
    if not direct or limit <= 0:
        return []
    rank = {memory.id: i for i, (memory, _) in enumerate(direct)}
    by_id = {memory.id: (memory, score) for memory, score in direct}
    reached: dict[int, tuple[int, int]] = {}  # target id -> (rank of its direct hit, hit id)
    for relation in relations_of(ctx.store, list(by_id), read):
        if relation.kind != RELATES_TO:
            continue
        for source, target in (
            (relation.from_id, relation.to_id),
            (relation.to_id, relation.from_id),
        ):
            if source in by_id and target not in by_id:
                best = reached.get(target)
                if best is None or rank[source] < best[0]:
                    reached[target] = (rank[source], source)
    if not reached:  # the common case: no hit has a relation
        return []
    current = _current_versions(ctx, list(reached), filt.as_of)
    allowed = ctx.store.filter_ids(filt, list({m.id for m in current.values()}))
    out: dict[int, Associated] = {}
    for target, (_, source) in sorted(reached.items(), key=lambda kv: (kv[1][0], kv[0])):
        memory = current.get(target)
        if memory is None or memory.id not in allowed or memory.id in by_id or memory.id in out:
            continue
        via, score = by_id[source]
        out[memory.id] = Associated(memory, via, score * ASSOCIATION_DECAY)
    return list(out.values())[:limit]


def _current_versions(
    ctx: Context, ids: Sequence[int], as_of: datetime | None
) -> dict[int, Memory]:
    """For each id, the version believed now (or at `as_of`): follow `replaced_by` forward."""
    found = {m.id: m for m in ctx.store.get_memories(list(ids))}
    out: dict[int, Memory] = {}
    for memory_id, memory in found.items():
        for _ in range(_MAX_HOPS):
            if memory.replaced_by is None:
                break
            newer = ctx.store.get_memories([memory.replaced_by])
            if not newer or (as_of is not None and newer[0].written_at > as_of):
                break
            memory = newer[0]
        out[memory_id] = memory
    return out


def visible_filter(scope: str) -> MemoryFilter:
    return MemoryFilter(scopes=visible_scopes(scope))
