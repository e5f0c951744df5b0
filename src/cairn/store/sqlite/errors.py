"""SQLite's failures as cairn's error tree, each saying what happened and what to do.

The primary result code (`sqlite_errorcode & 0xFF`) decides, not the message text: messages
differ between SQLite versions, codes do not. The text is only a fallback for an exception
raised without a code (Python raises some of its own, e.g. on a closed connection).
"""

from __future__ import annotations

import sqlite3

from cairn.errors import (
    CairnError,
    InvalidInput,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreFull,
    StoreReadOnly,
)
from cairn.store.sql.errors import CONFLICT, FAILED, Rule, raised

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


# What each primary result code means for the store at {path}, failing with {reason}.
_BY_CODE: dict[int, Rule] = {
    sqlite3.SQLITE_BUSY: (
        StoreBusy,
        "the store at {path} stayed locked by another writer past the busy timeout; "
        "retry, or raise CAIRN_BUSY_TIMEOUT_MS.",
    ),
    sqlite3.SQLITE_NOTADB: (
        StoreCorrupt,
        "{path} is not a SQLite database ({reason}): it was overwritten, truncated, or is "
        "some other kind of file; point --store, CAIRN_HOME or CAIRN_URL at the right file, "
        "or at a new one.",
    ),
    sqlite3.SQLITE_CORRUPT: (
        StoreCorrupt,
        "the store at {path} is damaged ({reason}); run `cairn check` to see what is wrong and "
        "`cairn export` to save what is readable, then import that into a new store.",
    ),
    sqlite3.SQLITE_READONLY: (
        StoreReadOnly,
        "the store at {path} is read-only ({reason}); make the file and its directory "
        "writable (cairn keeps -wal and -shm files beside it), or copy it somewhere writable.",
    ),
    sqlite3.SQLITE_FULL: (
        StoreFull,
        "the disk holding the store at {path} is full ({reason}); nothing was written. "
        "Free some space, then retry.",
    ),
    sqlite3.SQLITE_CANTOPEN: (
        StoreError,
        "cannot open the store at {path} ({reason}); check that its directory exists and "
        "is writable, or point --store, CAIRN_HOME or CAIRN_URL elsewhere.",
    ),
    sqlite3.SQLITE_IOERR: (
        StoreError,
        "reading or writing the store at {path} failed with an I/O error ({reason}); check "
        "the disk, then run `cairn check`.",
    ),
    sqlite3.SQLITE_TOOBIG: (
        InvalidInput,
        "a value is too large for the store ({reason}); send less.",
    ),
    sqlite3.SQLITE_CONSTRAINT: CONFLICT,
}
_SAME = {sqlite3.SQLITE_LOCKED: sqlite3.SQLITE_BUSY}


def translate(exc: sqlite3.Error, path: str) -> CairnError:
    """The cairn error for a SQLite failure on the store at `path`."""
    code = primary_code(exc)
    code = -1 if code is None else _SAME.get(code, code)
    if code not in _BY_CODE and isinstance(exc, sqlite3.IntegrityError):
        code = sqlite3.SQLITE_CONSTRAINT
    return raised(_BY_CODE.get(code, FAILED), path=path, reason=str(exc) or type(exc).__name__)
