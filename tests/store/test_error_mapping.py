"""Driver errors become cairn's error kinds by their codes, not their wording."""

from __future__ import annotations

import sqlite3

import psycopg.errors
import pytest

from cairn.errors import (
    CairnError,
    Conflict,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreFull,
    StoreReadOnly,
)
from cairn.store.postgres.errors import translate as translate_pg
from cairn.store.postgres.options import PoolOptions
from cairn.store.sqlite.errors import translate as translate_sqlite


def _sqlite_error(code: int, text: str = "some wording this version uses") -> sqlite3.Error:
    exc = sqlite3.OperationalError(text)
    exc.sqlite_errorcode = code  # type: ignore[attr-defined]
    return exc


@pytest.mark.parametrize(
    ("code", "kind", "says"),
    [
        (sqlite3.SQLITE_FULL, StoreFull, "full"),
        (sqlite3.SQLITE_IOERR_WRITE, StoreError, "I/O error"),
        (sqlite3.SQLITE_READONLY, StoreReadOnly, "read-only"),
        (sqlite3.SQLITE_READONLY_DIRECTORY, StoreReadOnly, "read-only"),
        (sqlite3.SQLITE_CORRUPT, StoreCorrupt, "cairn check"),
        (sqlite3.SQLITE_CORRUPT_INDEX, StoreCorrupt, "cairn check"),
        (sqlite3.SQLITE_NOTADB, StoreCorrupt, "not a SQLite database"),
        (sqlite3.SQLITE_BUSY, StoreBusy, "retry"),
        (sqlite3.SQLITE_CANTOPEN, StoreError, "cannot open"),
        (sqlite3.SQLITE_CONSTRAINT_UNIQUE, Conflict, "collides"),
    ],
)
def test_sqlite_codes(code: int, kind: type[CairnError], says: str) -> None:
    error = translate_sqlite(_sqlite_error(code), "/data/memory.db")
    assert type(error) is kind
    assert says in error.message and "/data/memory.db" in error.message


def test_sqlite_wording_is_the_fallback_without_a_code() -> None:
    assert isinstance(
        translate_sqlite(sqlite3.OperationalError("database or disk is full"), "m"), StoreFull
    )
    assert type(translate_sqlite(sqlite3.ProgrammingError("closed"), "m")) is StoreError


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (psycopg.errors.DiskFull("could not extend file"), StoreFull),
        (psycopg.errors.ReadOnlySqlTransaction("read-only transaction"), StoreReadOnly),
        (psycopg.errors.DataCorrupted("invalid page in block 7"), StoreCorrupt),
        (psycopg.errors.IndexCorrupted("index is corrupted"), StoreCorrupt),
        (psycopg.errors.LockNotAvailable("lock timeout"), StoreBusy),
    ],
)
def test_postgres_errors(exc: Exception, kind: type[CairnError]) -> None:
    error = translate_pg(exc, "postgresql://db/cairn", PoolOptions())
    assert type(error) is kind and "postgresql://db/cairn" in error.message
