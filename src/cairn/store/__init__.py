"""Store factory: the one place that picks a backend from a location."""

from __future__ import annotations

from cairn.store.base import LexicalDoc, LexicalRow, LexicalStats, MemoryFilter, Store

__all__ = ["LexicalDoc", "LexicalRow", "LexicalStats", "MemoryFilter", "Store", "open_store"]


def open_store(location: str, *, busy_timeout_ms: int = 30_000) -> Store:
    """A SQLite file path (or `sqlite:///path`), or a `postgresql://` URL."""
    if location.startswith(("postgresql://", "postgres://")):
        from cairn.store.postgres import PostgresStore

        return PostgresStore(location, busy_timeout_ms=busy_timeout_ms)
    if location.startswith("sqlite:///"):
        location = location[len("sqlite:///") - 1 :]
    from cairn.store.sqlite.store import SqliteStore

    return SqliteStore(location, busy_timeout_ms=busy_timeout_ms)
