"""Opening a new SQLite store while another process holds the file waits, as the busy timeout
promises, instead of failing at once.

Several agents that start together race to switch a new file to WAL. SQLite answers that
switch with SQLITE_BUSY without calling the busy handler while another connection holds the
write lock, so one of the racers used to fail with "stayed locked past the busy timeout" after
waiting no time at all (CI saw it once in 4 processes opening one file). Here a plain
connection holds the write lock on a new file, which provokes the same answer every time.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from cairn.errors import StoreBusy
from cairn.store.sqlite.store import SqliteStore


@contextmanager
def write_lock_held(path: Path, seconds: float) -> Iterator[None]:
    """Another program's connection holds the new file's write lock for `seconds`."""
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    release = threading.Timer(seconds, other.execute, args=("ROLLBACK",))
    release.start()
    try:
        yield
    finally:
        release.join()
        other.close()


def journal_mode(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0])


def test_a_new_store_waits_for_the_writer_that_holds_its_file(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    with write_lock_held(path, 0.3):
        started = time.monotonic()
        store = SqliteStore(str(path), busy_timeout_ms=10_000)
        waited = time.monotonic() - started
    try:
        assert list(store.iter_memories()) == []
    finally:
        store.close()
    assert journal_mode(path) == "wal"
    # It waited for the lock rather than succeeding by luck before the lock was taken.
    assert waited >= 0.25


def test_a_writer_that_outlasts_the_busy_timeout_is_reported_as_busy(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    with write_lock_held(path, 1.0), pytest.raises(StoreBusy, match="CAIRN_BUSY_TIMEOUT_MS"):
        SqliteStore(str(path), busy_timeout_ms=100)
    # The lock gone, the same file opens: the failed attempt left nothing behind.
    store = SqliteStore(str(path), busy_timeout_ms=1_000)
    store.close()
    assert journal_mode(path) == "wal"
