"""stats: what is in the store, how healthy its citations and index are, how recall serves."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cairn.models import ReindexNotice
from cairn.page_source import IGNORED, REASONS
from cairn.store.base import Store

if TYPE_CHECKING:
    from cairn.pages import Refreshed

MAX_SKIPPED_LISTED = 50


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


def page_stats(root: Path | None, refreshed: Refreshed | None, chunks: int) -> dict[str, Any]:
    """The pages of the scope's checkout: files indexed, and files skipped by reason.

    `skipped_files` names each skipped file but the git-ignored ones (at most
    `MAX_SKIPPED_LISTED`) by its path inside the checkout, never where a symlink points; a
    file held back for a secret gives the kinds of secret found, never the secret.
    """
    counts = dict.fromkeys(REASONS, 0)
    listed: list[dict[str, Any]] = []
    if refreshed is not None:
        counts[IGNORED] = refreshed.ignored
        for skip in refreshed.skipped:
            counts[skip.reason] = counts.get(skip.reason, 0) + 1
            entry: dict[str, Any] = {"path": skip.path, "reason": skip.reason}
            if skip.kinds:
                entry["kinds"] = list(skip.kinds)
            listed.append(entry)
    return {
        "root": str(root) if root is not None else None,
        "files_indexed": len(refreshed.files) if refreshed is not None else 0,
        "chunks": chunks,
        "skipped": counts,
        "skipped_files": listed[:MAX_SKIPPED_LISTED],
        "listing_failed": refreshed.listing_failed if refreshed is not None else False,
    }


def page_lines(pages: Mapping[str, Any] | None) -> list[str]:
    """`page_stats` as text: one summary line, then one line per skipped file named."""
    if not pages:
        return []
    skipped = ", ".join(f"{k}={v}" for k, v in pages.get("skipped", {}).items() if v)
    failed = " (git could not say what is ignored: nothing indexed)"
    failed = failed if pages.get("listing_failed") else ""
    lines = [
        f"pages: files={pages.get('files_indexed', 0)}, chunks={pages.get('chunks', 0)}, "
        f"skipped: {skipped or '-'}{failed}"
    ]
    for entry in pages.get("skipped_files", []):
        kinds = f" ({', '.join(entry['kinds'])})" if entry.get("kinds") else ""
        lines.append(f"  skipped {entry['path']}: {entry['reason']}{kinds}")
    return lines


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
