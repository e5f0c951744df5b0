"""SQLite's failures as cairn's error tree, each saying what happened and what to do.

The primary result code (`sqlite_errorcode & 0xFF`) decides, not the message text: messages
differ between SQLite versions, codes do not. The text is only a fallback for an exception
raised without a code (Python raises some of its own, e.g. on a closed connection).
"""

from __future__ import annotations

import sqlite3

from cairn.errors import (
    CairnError,
    Conflict,
    InvalidInput,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreFull,
    StoreReadOnly,
)

_BY_TEXT = (
    ("database or disk is full", sqlite3.SQLITE_FULL),
    ("readonly database", sqlite3.SQLITE_READONLY),
    ("file is not a database", sqlite3.SQLITE_NOTADB),
    ("malformed", sqlite3.SQLITE_CORRUPT),
    ("unable to open database file", sqlite3.SQLITE_CANTOPEN),
    ("locked", sqlite3.SQLITE_BUSY),
    ("busy", sqlite3.SQLITE_BUSY),
)


def primary_code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF
    text = str(exc)
    return next((value for needle, value in _BY_TEXT if needle in text), None)


def translate(exc: sqlite3.Error, path: str) -> CairnError:
    """The cairn error for a SQLite failure on the store at `path`."""
    code = primary_code(exc)
    reason = str(exc) or type(exc).__name__
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return StoreBusy(
            f"the store at {path} stayed locked by another writer past the busy timeout; "
            "retry, or raise CAIRN_BUSY_TIMEOUT_MS."
        )
    if code == sqlite3.SQLITE_NOTADB:
        return StoreCorrupt(
            f"{path} is not a SQLite database ({reason}): it was overwritten, truncated, or is "
            "some other kind of file; point --store, CAIRN_HOME or CAIRN_URL at the right file, "
            "or at a new one."
        )
    if code == sqlite3.SQLITE_CORRUPT:
        return StoreCorrupt(
            f"the store at {path} is damaged ({reason}); run "
            "`cairn check` to see what is wrong and `cairn export` to save what is readable, "
            "then import that into a new store."
        )
    if code == sqlite3.SQLITE_READONLY:
        return StoreReadOnly(
            f"the store at {path} is read-only ({reason}); make the file and its directory "
            "writable (cairn keeps -wal and -shm files beside it), or copy it somewhere writable."
        )
    if code == sqlite3.SQLITE_FULL:
        return StoreFull(
            f"the disk holding the store at {path} is full ({reason}); nothing was written. "
            "Free some space, then retry."
        )
    if code == sqlite3.SQLITE_CANTOPEN:
        return StoreError(
            f"cannot open the store at {path} ({reason}); check that its directory exists and "
            "is writable, or point --store, CAIRN_HOME or CAIRN_URL elsewhere."
        )
    if code == sqlite3.SQLITE_IOERR:
        return StoreError(
            f"reading or writing the store at {path} failed with an I/O error ({reason}); check "
            "the disk, then run `cairn check`."
        )
    if code == sqlite3.SQLITE_TOOBIG:
        return InvalidInput(f"a value is too large for the store ({reason}); send less.")
    if code == sqlite3.SQLITE_CONSTRAINT or isinstance(exc, sqlite3.IntegrityError):
        return Conflict(
            f"the write collides with a row the store at {path} already holds ({reason}); "
            "import into an empty store or skip records already copied."
        )
    return StoreError(f"the store at {path} failed: {reason}")
