"""Store fixtures: the same tests run on a SQLite file and on a fresh PostgreSQL database."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

if str(Path(__file__).parents[1]) not in sys.path:
    # --import-mode=importlib puts no test directory on sys.path; the shared PostgreSQL fixture
    # module lives in tests/ (the top-level conftest can import it the same way).
    sys.path.insert(0, str(Path(__file__).parents[1]))

from cairn.store.base import Store
from cairn.store.sqlite.store import SqliteStore
from postgres_fixture import postgres_database_url, postgres_url

__all__ = ["postgres_database_url", "postgres_url"]  # fixtures, re-exported for pytest


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
