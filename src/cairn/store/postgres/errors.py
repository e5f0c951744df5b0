"""PostgreSQL's and the pool's failures as cairn's error tree, each saying what to do.

The exception class decides (psycopg maps every SQLSTATE to one); the first entry that matches
wins, so a subclass stands before its parent (`DiskFull` is an `OperationalError`). Templates
may also name the pool options they advise changing.
"""

from __future__ import annotations

import psycopg
import psycopg.errors as pg
from psycopg_pool import PoolClosed, PoolTimeout

from cairn.errors import (
    CairnError,
    InvalidInput,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreFull,
    StoreReadOnly,
)
from cairn.store.postgres.options import PoolOptions
from cairn.store.sql.errors import CONFLICT, FAILED, Rule, raised

# In order: the first entry whose classes `exc` is an instance of gives its rule.
_BY_CLASS: dict[type[Exception] | tuple[type[Exception], ...], Rule] = {
    PoolTimeout: (
        StoreBusy,
        "all {pool_max_size} pooled connections to {path} stayed busy for {pool_timeout:g}s; "
        "retry, or raise pool_max_size in the URL.",
    ),
    PoolClosed: (StoreError, "the store at {path} is closed; open it again."),
    pg.LockNotAvailable: (
        StoreBusy,
        "the store at {path} stayed locked by another writer past the busy timeout "
        "({busy_timeout_ms} ms); retry, or raise busy_timeout_ms in the URL.",
    ),
    (pg.DeadlockDetected, pg.SerializationFailure): (
        StoreBusy,
        "a concurrent write to {path} conflicted with this one; retry it.",
    ),
    pg.UniqueViolation: CONFLICT,
    (pg.DiskFull, pg.OutOfMemory): (
        StoreFull,
        "the PostgreSQL server at {path} is out of disk space or memory ({reason}); nothing "
        "was written. Free some space, then retry.",
    ),
    pg.ReadOnlySqlTransaction: (
        StoreReadOnly,
        "the database at {path} only accepts reads ({reason}): it is a standby or "
        "default_transaction_read_only is on. Point CAIRN_URL at the primary.",
    ),
    (pg.DataCorrupted, pg.IndexCorrupted): (
        StoreCorrupt,
        "the database at {path} reports damaged data ({reason}); run `cairn check`, then "
        "restore from a backup or `cairn export` what is readable.",
    ),
    psycopg.DataError: (
        InvalidInput,
        "PostgreSQL cannot store this value ({reason}); remove what it names (NUL characters "
        "in text, NaN or infinity in a vector) and retry.",
    ),
    psycopg.OperationalError: (
        StoreError,
        "lost or could not open a connection to PostgreSQL at {path}: {reason}. Check that "
        "the server is running, then retry.",
    ),
}


def translate(exc: Exception, display: str, options: PoolOptions) -> CairnError:
    """The cairn error for a driver or pool failure on the store at `display`."""
    rule = next((rule for kinds, rule in _BY_CLASS.items() if isinstance(exc, kinds)), FAILED)
    return raised(
        rule,
        path=display,
        reason=first_line(exc),
        pool_max_size=options.pool_max_size,
        pool_timeout=options.pool_timeout,
        busy_timeout_ms=options.busy_timeout_ms,
    )


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
