"""The PostgreSQL backend (`postgresql://` URLs): see `store.py` and its sibling modules."""

from __future__ import annotations

from cairn.store.postgres.options import PoolOptions
from cairn.store.postgres.store import PostgresStore

__all__ = ["PoolOptions", "PostgresStore"]
