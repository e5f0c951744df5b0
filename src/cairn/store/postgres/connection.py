"""PostgreSQL connections: a psycopg pool, one connection bound per thread inside a transaction,
and one advisory lock that serialises writers.

Reads outside a transaction borrow a pooled connection (autocommit) for one statement and give
it back, so readers never wait for writers (MVCC). `transaction()` borrows a connection, binds it
to the calling thread until the outermost block ends, and every store call that thread makes in
between joins it, exactly like the SQLite backend's thread-local connection.

Write serialisation. The core's read-check-write sequences (deduplication: "find by hash, else
nearest, else insert"; corrections: "read the chain, then replace") run inside `transaction()`
and must behave as under SQLite's `BEGIN IMMEDIATE`: no other writer may commit in between.
Every write transaction therefore starts with

    BEGIN; SET LOCAL lock_timeout = <busy_timeout_ms>; SELECT pg_advisory_xact_lock(<key>)

with one fixed key per database. The lock is released at COMMIT or ROLLBACK, waits at most the
busy timeout (then `StoreBusy`, retryable), and - since READ COMMITTED gives every statement a
fresh snapshot - each read after the lock sees everything committed before it. A lock per scope
was considered and rejected: `transaction()` does not know the scope when it starts, locks taken
lazily as scopes are touched can deadlock when two transactions touch two scopes in opposite
orders, and id-based sequences (corrections, tidy) would need their own scheme. PostgreSQL is
chosen for sharing one store between hosts, not for parallel writers; write transactions are a
few milliseconds long, so one lock costs little. Other clients of the same database are not
affected: advisory locks only conflict with the same key.

Nested `transaction()` blocks join the outer one without savepoints, as under SQLite. Unlike
SQLite, a failed SQL statement aborts the whole PostgreSQL transaction, so a caller must not
catch a `StoreError` inside a transaction and carry on writing; it is raised again at commit.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import psycopg
import psycopg.errors
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from cairn.errors import CairnError, StoreError
from cairn.store.migrations import apply_migrations
from cairn.store.postgres.dialect import POSTGRES
from cairn.store.postgres.errors import first_line, translate
from cairn.store.postgres.options import PoolOptions
from cairn.store.sql.transactions import ThreadTransactions, begun

Conn = psycopg.Connection[tuple[Any, ...]]

# One key per database for "a cairn writer is inside a transaction" (64-bit, from a fixed name).
WRITE_LOCK_KEY = int.from_bytes(hashlib.sha256(b"cairn:write").digest()[:8], "big", signed=True)
_CONNECT_TIMEOUT_S = 10
# Planner statistics: analyse the recall tables once this process has added this many memories,
# or this share of the table, whichever is more (autovacuum's own rule, without its delay).
ANALYZE_MIN_ROWS = 200
ANALYZE_GROWTH = 0.1
_ANALYZED_TABLES = "memories, memory_tags, vectors, windows, lexical, events"
_MIN_PGVECTOR = (0, 5)  # HNSW
_ITERATIVE_PGVECTOR = (0, 8)  # hnsw.iterative_scan


class Database(ThreadTransactions[Conn]):
    """A pool plus the thread binding and locking that make `transaction()` behave."""

    # A ROLLBACK failing so: the connection is gone, the pool discards it, the server rolled back.
    _lost = psycopg.OperationalError

    def __init__(self, conninfo: str, options: PoolOptions, *, display: str) -> None:
        self.display = display
        self.options = options
        self._conninfo = conninfo
        self._local = threading.local()
        lock_timeout = f"SET LOCAL lock_timeout = '{int(options.busy_timeout_ms)}ms'"
        lock = f"SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})"
        self._begin = f"BEGIN; {lock_timeout}; {lock}"
        # In the same round trip: the commit returns once its WAL record is written, without
        # waiting for the flush (measured at 100k: 0.5-0.7 ms of a quiet recall's commit, 4 ms
        # under load). Atomic all the same; see `transaction(durable=False)`.
        self._begin_lazy = f"BEGIN; {lock_timeout}; SET LOCAL synchronous_commit TO off; {lock}"
        with self.translated():
            self.pgvector = migrate(self._connect_once(), self._begin, display)
        self._session_sql = _session_settings(self.pgvector, options.hnsw_ef_search)
        self._growth_lock = threading.Lock()
        self._grown = 0  # memories added by this process since its last ANALYZE
        self._pool: ConnectionPool[Conn] = ConnectionPool(
            conninfo,
            min_size=options.pool_min_size,
            max_size=options.pool_max_size,
            timeout=options.pool_timeout,
            kwargs={"autocommit": True, "connect_timeout": _CONNECT_TIMEOUT_S},
            configure=self._configure,
            name=f"cairn {display}",
            open=True,
        )
        with self.connection() as conn:
            row = conn.execute(
                "SELECT greatest(reltuples, 0) FROM pg_class WHERE oid = 'memories'::regclass"
            ).fetchone()
        self._analyzed_rows = float(row[0]) if row else 0.0

    @property
    def iterative_scan(self) -> bool:
        return self.pgvector >= _ITERATIVE_PGVECTOR

    def _connect_once(self) -> Conn:
        try:
            return psycopg.connect(
                self._conninfo, autocommit=True, connect_timeout=_CONNECT_TIMEOUT_S
            )
        except psycopg.OperationalError as exc:
            raise StoreError(
                f"cannot connect to PostgreSQL at {self.display}: {first_line(exc)}. Check that "
                "the server is running and that the URL's host, port, user, password and "
                "database are right (CAIRN_URL)."
            ) from exc

    def _configure(self, conn: Conn) -> None:
        conn.execute(self._session_sql)

    # connections ---------------------------------------------------------------------------
    @contextmanager
    def connection(self) -> Iterator[Conn]:
        """The thread's transaction connection if it has one, else a pooled one (autocommit)."""
        bound: Conn | None = getattr(self._local, "tx", None)
        if bound is not None:
            with self.translated():
                yield bound
            return
        with self.translated(), self._pool.connection() as conn:
            yield conn

    @staticmethod
    def _pending(conn: Conn) -> bool:
        return not conn.closed and conn.info.transaction_status != TransactionStatus.IDLE

    def _committed(self, conn: Conn) -> None:
        if self._due_for_analyze():
            conn.execute(f"ANALYZE {_ANALYZED_TABLES}")

    # planner statistics ----------------------------------------------------------------------
    def note_growth(self, rows: int) -> None:
        """Count memories this process added; a commit after many of them analyses the tables.

        Autovacuum refreshes planner statistics up to a minute (its naptime) after a table
        grows. Until then a store that was empty plans recalls for an empty table: measured on
        680 memories, the window-vector scan took 64 ms on a nested loop, 3.8 ms after ANALYZE.
        """
        with self._growth_lock:
            self._grown += rows

    def _due_for_analyze(self) -> bool:
        with self._growth_lock:
            if self._grown < max(ANALYZE_MIN_ROWS, ANALYZE_GROWTH * self._analyzed_rows):
                return False
            self._analyzed_rows += self._grown
            self._grown = 0
            return True

    def close(self) -> None:
        self._pool.close()

    @contextmanager
    def translated(self) -> Iterator[None]:
        """Turn driver and pool errors into cairn's error tree, saying what to do."""
        try:
            yield
        except CairnError:
            raise
        except (psycopg.Error, PoolTimeout, PoolClosed) as exc:
            raise translate(exc, self.display, self.options) from exc


def _session_settings(pgvector: tuple[int, ...], ef_search: int) -> str:
    """Per-connection settings: UTC for timestamptz, and pgvector's HNSW search knobs."""
    statements = ["SET TIME ZONE 'UTC'", f"SET hnsw.ef_search = {int(ef_search)}"]
    if pgvector >= _ITERATIVE_PGVECTOR:
        # Keep scanning the graph until enough rows pass the filter (pgvector >= 0.8).
        statements.append("SET hnsw.iterative_scan = relaxed_order")
    return "; ".join(statements)


# migrations --------------------------------------------------------------------------------
def migrate(conn: Conn, begin: str, display: str) -> tuple[int, ...]:
    """Apply the numbered migrations not yet recorded; return pgvector's version.

    Each migration runs in its own transaction under the write lock, so two processes opening
    a new store at once apply it once. The connection is closed afterwards.
    """
    with conn:
        apply_migrations(
            "cairn.store.postgres",
            lambda: begun(conn, begin, Database._pending, Database._lost),
            POSTGRES,
            display=display,
            table="CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY,"
            " name text NOT NULL, applied_at timestamptz NOT NULL)",
            run_script=lambda run, sql: _run_migration(conn, display, sql),
            stamp=lambda: datetime.now(UTC),
        )
        row = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
    version = _version(str(row[0]) if row else "0")
    if version < _MIN_PGVECTOR:
        raise StoreError(
            f"the database at {display} has pgvector {row[0] if row else 'missing'}; cairn needs "
            "0.5 or newer (HNSW). Run ALTER EXTENSION vector UPDATE as a superuser."
        )
    return version


def _run_migration(conn: Conn, display: str, sql: str) -> None:
    try:
        conn.execute(sql.encode("utf-8"))  # several statements, so no parameters
    except (
        psycopg.errors.InsufficientPrivilege,
        psycopg.errors.UndefinedFile,
        psycopg.errors.FeatureNotSupported,
    ) as exc:
        raise StoreError(
            f"cannot create cairn's schema in {display}: {first_line(exc)}. The pgvector "
            "extension must be installed in this database: run CREATE EXTENSION vector as a "
            "superuser, and let this role create tables."
        ) from exc


def _version(text: str) -> tuple[int, ...]:
    parts: list[int] = []
    for piece in text.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)
