"""SQLite connections: one per thread, WAL, a busy timeout, explicit `BEGIN IMMEDIATE`.

Python's sqlite3 module opens transactions implicitly and lazily, which lets two writers both
read before either writes (the classic lost update in a dedup check). We run the connection in
autocommit mode and open every write transaction ourselves with `BEGIN IMMEDIATE`, which takes
the write lock up front; the busy timeout makes the second writer wait instead of failing.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import UTC, datetime
from pathlib import Path

from cairn.errors import StoreError, StoreForeign, StoreReadOnly
from cairn.store.migrations import apply_migrations
from cairn.store.sql.dialect import Run
from cairn.store.sql.transactions import ThreadTransactions
from cairn.store.sqlite.dialect import SQLITE
from cairn.store.sqlite.errors import primary_code, translate

# Every change to the lexical index bumps `lexgen`, so cached BM25 statistics go stale at once.
BUMP_LEXGEN = (
    "INSERT INTO meta (key, value) VALUES ('lexgen', '1') "
    "ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)"
)
# A change the dense caches cannot patch bumps `epoch` (they reload); a rewritten window row
# bumps `window_rev` (they patch the rows past it).
_BUMP = "UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = "
BUMP_EPOCH = _BUMP + "'epoch'"
BUMP_WINDOW_REV = _BUMP + "'window_rev'"
# A lexical change the postings pool cannot lay over its snapshot (a purge, whose words must
# leave it; a whole-store load) bumps `lexepoch`: the pool rebuilds. Every other lexical write
# reaches it through `lexical_log`, and a status change none at all.
BUMP_LEXEPOCH = (
    "INSERT INTO meta (key, value) VALUES ('lexepoch', '1') "
    "ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)"
)


class Connections(ThreadTransactions[sqlite3.Connection]):
    _begin = "BEGIN IMMEDIATE"
    # SQLite discards the transaction when the connection closes in any case.
    _lost = sqlite3.Error

    def __init__(self, path: str, *, busy_timeout_ms: int) -> None:
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def get(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open()
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def _open(self) -> sqlite3.Connection:
        with self.translated():
            conn = sqlite3.connect(
                self.path,
                isolation_level=None,
                check_same_thread=False,
                timeout=self.busy_timeout_ms / 1000,
            )
            try:
                conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
                conn.execute("PRAGMA foreign_keys = ON")
                # Zero what deletes and rewrites free, so a purged memory's text leaves no trace
                # in free space within pages or on the freelist (cairn.store.sqlite.erase).
                conn.execute("PRAGMA secure_delete = ON")
                if not self._all:
                    # Before WAL mode, which would rewrite another program's file header.
                    _refuse_foreign(conn, self.path)
                if self.path != ":memory:":
                    _enter_wal(conn, self.busy_timeout_ms)
                    conn.execute("PRAGMA synchronous = NORMAL")
            except BaseException:
                conn.close()
                raise
        return conn

    def connection(self) -> AbstractContextManager[sqlite3.Connection]:
        """The thread's connection, for reads (inside a transaction, the transaction's); their
        errors are translated at the core's boundary (`cairn.guard`)."""
        return nullcontext(self.get())

    @contextmanager
    def translated(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc

    def _pending(self, conn: sqlite3.Connection) -> bool:
        # SQLite rolls back by itself on some errors (SQLITE_FULL, SQLITE_IOERR, ...).
        return conn.in_transaction

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()


def _enter_wal(conn: sqlite3.Connection, busy_timeout_ms: int) -> None:
    """Switch the file to WAL, waiting out other processes as the busy timeout promises.

    Switching takes an exclusive lock, and while another connection holds a lock it would wait
    on (another program's write, or a process racing to switch the same new file) SQLite
    answers SQLITE_BUSY at once instead of calling the busy handler. So this waits itself, with
    a doubling sleep, until the busy timeout; once the file is in WAL the statement only
    confirms it.
    """
    deadline = time.monotonic() + busy_timeout_ms / 1000
    pause = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if primary_code(exc) != sqlite3.SQLITE_BUSY or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def migrate(connections: Connections) -> None:
    """Apply the numbered migrations this code ships that the file has not recorded yet."""

    def run_script(run: Run, script: str) -> None:
        for statement in _statements(script):
            run.conn.execute(statement)

    apply_migrations(
        "cairn.store.sqlite",
        connections.transaction,
        SQLITE,
        display=connections.path,
        table="CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
        run_script=run_script,
        stamp=lambda: datetime.now(UTC).isoformat(),
    )


def _refuse_foreign(conn: sqlite3.Connection, path: str) -> None:
    """Refuse a database that holds tables but not cairn's: it belongs to another program."""
    names = {str(row[0]) for row in conn.execute("SELECT name FROM sqlite_master")}
    if names and "schema_migrations" not in names:
        shown = ", ".join(sorted(names)[:3])
        raise StoreForeign(
            f"{path} is a SQLite database of another application (it holds {shown}, and no "
            "cairn schema); cairn leaves it alone. Point --store, CAIRN_HOME or CAIRN_URL at a "
            "new file."
        )


def _statements(sql: str) -> list[str]:
    """Split a migration into statements (executescript would commit our transaction)."""
    statements: list[str] = []
    buffer = ""
    for line in sql.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements


def ensure_parent(path: str) -> None:
    if path == ":memory:" or path.startswith("file:"):
        return
    parent = Path(path).expanduser().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except PermissionError as exc:
        raise StoreReadOnly(
            f"cannot create the directory {parent} for the store ({exc.strerror}); create it "
            "yourself, or point --store, CAIRN_HOME or CAIRN_URL at a writable location."
        ) from exc
    except OSError as exc:
        raise StoreError(
            f"cannot create the directory {parent} for the store ({exc.strerror}); point "
            "--store, CAIRN_HOME or CAIRN_URL at a writable location."
        ) from exc
