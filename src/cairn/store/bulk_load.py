"""`bulk_add`: the backend's bulk path for `cairn.store.bulk.BulkMemory` items (see there)."""

from __future__ import annotations

from collections.abc import Sequence

from cairn.errors import InvalidInput
from cairn.store.base import Store
from cairn.store.bulk import BulkMemory


def bulk_add(store: Store, identity: str, items: Sequence[BulkMemory]) -> list[int]:
    """Insert `items` in one transaction; returns their new ids, in order."""
    for index, item in enumerate(items):
        if item.memory.session_id is not None:
            raise InvalidInput(
                f"item {index} belongs to session {item.memory.session_id!r}; a bulk load "
                "cannot index session neighbours, so remember session memories one by one."
            )
    if not items:
        return []
    if store.backend == "postgres":
        from cairn.store.postgres import bulk as postgres
        from cairn.store.postgres.store import PostgresStore

        if not isinstance(store, PostgresStore):
            raise InvalidInput("a bulk load needs a PostgresStore; remember one by one.")
        return postgres.bulk_add(store, identity, items)
    from cairn.store.sqlite import bulk as sqlite
    from cairn.store.sqlite.store import SqliteStore

    if not isinstance(store, SqliteStore):
        raise InvalidInput(f"no bulk load for the {store.backend} backend; remember one by one.")
    return sqlite.bulk_add(store, identity, items)
