"""stats: what is in the store, how healthy its citations and index are, how recall serves."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from cairn.models import ReindexNotice
from cairn.store.base import Store


def store_stats(store: Store, scopes: tuple[str, ...] | None) -> dict[str, Any]:
    scope_list = list(scopes) if scopes is not None else None
    by_status = store.count_by("status", scope_list)
    return {
        "memories": sum(by_status.values()),
        "by_type": store.count_by("type", scope_list),
        "by_status": by_status,
        "by_scope": store.count_by("scope", scope_list),
        "vectors": store.vector_identities(),
        "store": {
            "backend": store.backend,
            "location": store.location,
            "size_bytes": store.size_bytes(),
        },
    }


def citation_health(statuses: Iterable[str]) -> dict[str, int]:
    """How many current citations read same, changed, gone and unchecked."""
    counts = Counter(statuses)
    return {name: counts.get(name, 0) for name in ("same", "changed", "gone", "unchecked")}


def recall_rates(store: Store, scopes: tuple[str, ...] | None) -> dict[str, Any]:
    """How recall serves its callers, from the event log.

    - hit rate: recalls that returned at least one memory, of all recalls;
    - used rate: of those, recalls of which a returned memory was then used — marked `used`
      in feedback, or cited (`used` on remember) later in the same scope;
    - helped rate: of the recalls that got feedback, those where a memory `helped`.
    """
    scope_list = list(scopes) if scopes is not None else None
    recalls = store.events_of_kind(["recall"], scope_list)
    cites = store.cites_in(scope_list)
    feedback = store.events_of_kind(["feedback"], scope_list)
    assessed: dict[str, list[Mapping[str, Any]]] = {}
    for event in feedback:
        items = event.payload.get("assessments")
        if isinstance(items, list):
            key = str(event.payload.get("retrieval_id"))
            assessed.setdefault(key, []).extend(i for i in items if isinstance(i, Mapping))
    cited_at: dict[tuple[str | None, str], list[datetime]] = {}
    for memory_id, scope, at in cites:
        cited_at.setdefault((scope, f"mem_{memory_id}"), []).append(at)
    with_hits = used = helped = got_feedback = 0
    for recall in recalls:
        refs = [r for r in recall.payload.get("refs", []) if str(r).startswith("mem_")]
        if not refs:
            continue
        with_hits += 1
        items = assessed.get(f"ret_{recall.id}", [])
        got_feedback += bool(items)
        helped += any(i.get("effect") == "helped" for i in items)
        later_cite = any(
            at >= recall.at for ref in refs for at in cited_at.get((recall.scope, ref), [])
        )
        used += later_cite or any(i.get("used") is True for i in items)
    return {
        "recalls": len(recalls),
        "with_hits": with_hits,
        "hit_rate": _rate(with_hits, len(recalls)),
        "used_rate": _rate(used, with_hits),
        "helped_rate": _rate(helped, got_feedback),
        "with_feedback": got_feedback,
    }


STALE_REFS_SHOWN = 5


def index_freshness(
    store: Store, scopes: tuple[str, ...] | None, identity: str | None = None
) -> dict[str, Any]:
    """Whether every current memory is indexed (vector and lexical) under one embedder; with
    the current embedder's `identity`, also which memories wait for `cairn reindex`."""
    scope_list = list(scopes) if scopes is not None else None
    health = store.index_health(scope_list)
    fresh = (
        health["without_vector"] == 0
        and health["without_lexical"] == 0
        and len(health["vector_identities"]) <= 1
    )
    if identity is not None:
        waiting = reindex_waiting(store, scope_list, identity)
        health["embedder"] = identity
        health["needs_reindex"] = waiting
        fresh = fresh and waiting["count"] == 0
    health["fresh"] = fresh
    return health


def reindex_waiting(store: Store, scopes: list[str] | None, identity: str) -> dict[str, Any]:
    """How many memories another embedder wrote (or none did), their first refs, and the fix."""
    count, ids = store.stale_vectors(scopes, identity, STALE_REFS_SHOWN)
    return {
        "count": count,
        "refs": [f"mem_{memory_id}" for memory_id in ids],
        "fix": "run `cairn reindex` to embed them with the current embedder" if count else None,
    }


def _rate(part: int, whole: int) -> float | None:
    return None if whole == 0 else round(part / whole, 4)


def reindex_notice(store: Store, scopes: Sequence[str], identity: str) -> ReindexNotice | None:
    """The recall notice naming the memories `cairn reindex` would re-embed, if any."""
    waiting = reindex_waiting(store, list(scopes), identity)
    if not waiting["count"]:
        return None
    return ReindexNotice(
        waiting["count"],
        tuple(waiting["refs"]),
        f"{waiting['count']} memories were embedded by another embedder than {identity} and "
        "are ranked by keywords only; run `cairn reindex`.",
    )
