"""stats: what is in the store, at a glance."""

from __future__ import annotations

from typing import Any

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
