"""Store fixtures: the same tests run on a SQLite file and on a fresh PostgreSQL database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn.store.base import Store
from cairn.store.sqlite.store import SqliteStore


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh, empty store on each backend; PostgreSQL is only started when a test needs it."""
    opened: Store
    if request.param == "sqlite":
        opened = SqliteStore(str(tmp_path / "memory.db"))
    else:
        from cairn.store.postgres import PostgresStore

        opened = PostgresStore(request.getfixturevalue("postgres_database_url"))
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def pg_store(postgres_database_url: str) -> Iterator[Store]:
    from cairn.store.postgres import PostgresStore

    opened = PostgresStore(postgres_database_url)
    try:
        yield opened
    finally:
        opened.close()
