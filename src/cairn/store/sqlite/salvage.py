"""Reading a damaged SQLite store: an integrity check, and every row that can still be read.

Both open the file read-only and without cairn's migrations, so they work on a store that
`Cairn.open` refuses as corrupt, and never make the damage worse. The salvage reads each table
by rowid ranges; a range that fails is read again one rowid at a time, so one damaged page
costs the rows on it and no more. Tables without rowids are read in key order until the first
unreadable page, and are reported as damaged.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from cairn.errors import StoreError
from cairn.store.sqlite.copy import FROM_DB, physical
from cairn.store.sqlite.errors import primary_code, translate
from cairn.store.tables import TABLES, Table, neutral_row

_RANGE = 256
_FTS_TABLES = ("lexical",)


@dataclass
class SalvageTally:
    """What a salvage could not read: rows by table, and tables read only in part."""

    unreadable: dict[str, int] = field(default_factory=dict)
    damaged: list[str] = field(default_factory=list)

    @property
    def unreadable_rows(self) -> int:
        return sum(self.unreadable.values())

    def lost(self, table: str, rows: int) -> None:
        self.unreadable[table] = self.unreadable.get(table, 0) + rows
        if table not in self.damaged:
            self.damaged.append(table)


def open_readonly(path: str, *, mode: str = "ro") -> sqlite3.Connection:
    """The file at `path`, read-only (or `mode="rw"`: writable, never created)."""
    if not Path(path).expanduser().is_file():
        raise StoreError(f"there is no store at {path}; check the path (--store, CAIRN_HOME).")
    uri = f"file:{quote(str(Path(path).expanduser().resolve()))}?mode={mode}"
    try:
        return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise translate(exc, path) from exc


def integrity_problems(path: str) -> tuple[list[str], list[str]]:
    """What SQLite's integrity check and FTS5's find wrong with the store (empty when it is
    healthy), and notes on what could not be checked."""
    notes: list[str] = []
    try:
        # FTS5's check is spelled as an INSERT, so it needs a writable connection; it changes
        # nothing.
        conn = open_readonly(path, mode="rw")
    except StoreError:
        conn = open_readonly(path)
        notes.append("the file is read-only, so the full-text index was not checked")
    try:
        try:
            names = _table_names(conn)
        except sqlite3.DatabaseError as exc:
            return [f"the file cannot be read as a database: {exc}"], notes
        try:
            rows = conn.execute("PRAGMA integrity_check").fetchall()
            problems = [str(row[0]) for row in rows if str(row[0]) != "ok"]
        except sqlite3.DatabaseError as exc:
            # Some damage stops the check itself; reading every table then says where it is.
            problems = [f"the integrity check stopped: {exc}"]
            problems += _unreadable_tables(conn, names)
        for fts in _FTS_TABLES:
            if fts not in names or notes:
                continue
            try:
                conn.execute(f"INSERT INTO {fts}({fts}) VALUES('integrity-check')")
            except sqlite3.DatabaseError as exc:
                if primary_code(exc) == sqlite3.SQLITE_READONLY:
                    notes.append("the file is read-only, so the full-text index was not checked")
                else:
                    problems.append(f"full-text index {fts}: {exc}")
        return problems, notes
    finally:
        conn.close()


def _unreadable_tables(conn: sqlite3.Connection, names: dict[str, str]) -> list[str]:
    found: list[str] = []
    for name, sql in names.items():
        if sql.upper().startswith("CREATE VIRTUAL"):
            continue  # read through its shadow tables, which are listed too
        try:
            for _ in conn.execute(f'SELECT * FROM "{name}"'):
                pass
        except sqlite3.DatabaseError as exc:
            found.append(f"table {name}: {exc}")
    return found


def salvage_tables(path: str, tally: SalvageTally) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every readable row of every copied table, as (table, neutral row)."""
    conn = open_readonly(path)
    try:
        try:
            names = _table_names(conn)
        except sqlite3.DatabaseError as exc:
            raise translate(exc, path) from exc
        for spec in TABLES:
            if spec.name in names:
                yield from ((spec.name, row) for row in _salvage_table(conn, spec, names, tally))
    finally:
        conn.close()


def copied_tables(path: str) -> list[str]:
    """The copied tables the file holds, in copy order."""
    conn = open_readonly(path)
    try:
        names = _table_names(conn)
    except sqlite3.DatabaseError as exc:
        raise translate(exc, path) from exc
    finally:
        conn.close()
    return [spec.name for spec in TABLES if spec.name in names]


def salvage_sequences(path: str) -> dict[str, int]:
    conn = open_readonly(path)
    try:
        rows = conn.execute("SELECT name, seq FROM sqlite_sequence").fetchall()
    except sqlite3.DatabaseError:
        return {}
    finally:
        conn.close()
    serial = {spec.name for spec in TABLES if spec.serial}
    return {str(name): int(seq) for name, seq in rows if seq and name in serial}


def _table_names(conn: sqlite3.Connection) -> dict[str, str]:
    rows = conn.execute("SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'table'")
    return {str(name): str(sql) for name, sql in rows}


def _salvage_table(
    conn: sqlite3.Connection, spec: Table, names: dict[str, str], tally: SalvageTally
) -> Iterator[dict[str, Any]]:
    columns = ", ".join(physical(spec.name, name) for name in spec.names)
    if "WITHOUT ROWID" in names[spec.name].upper():
        yield from _by_key(conn, spec, columns, tally)
        return
    top = _max_rowid(conn, spec.name)
    if top is None:
        tally.lost(spec.name, 0)
        return
    select = f"SELECT rowid, {columns} FROM {spec.name} WHERE rowid"
    low = _min_rowid(conn, spec.name)
    while low <= top:
        try:
            rows = conn.execute(f"{select} >= ? ORDER BY rowid LIMIT {_RANGE}", (low,)).fetchall()
        except sqlite3.DatabaseError:
            high = min(low + _RANGE, top + 1)
            rows = _one_by_one(conn, spec, f"{select} = ?", low, high, tally)
            low = high
        else:
            if not rows:
                return
            low = int(rows[-1][0]) + 1
        for row in rows:
            converted = _convert(spec, tuple(row[1:]), tally)
            if converted is not None:
                yield converted


def _one_by_one(
    conn: sqlite3.Connection, spec: Table, select: str, low: int, high: int, tally: SalvageTally
) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for rowid in range(low, high):
        try:
            row = conn.execute(select, (rowid,)).fetchone()
        except sqlite3.DatabaseError:
            tally.lost(spec.name, 1)
            continue
        if row is not None:
            rows.append(tuple(row))
    return rows


def _by_key(
    conn: sqlite3.Connection, spec: Table, columns: str, tally: SalvageTally
) -> Iterator[dict[str, Any]]:
    keys = ", ".join(physical(spec.name, name) for name in spec.key)
    cursor = conn.execute(f"SELECT {columns} FROM {spec.name} ORDER BY {keys}")
    while True:
        try:
            row = cursor.fetchone()
        except sqlite3.DatabaseError:
            tally.lost(spec.name, 1)  # the rest of the table is behind the damaged page
            return
        if row is None:
            return
        converted = _convert(spec, tuple(row), tally)
        if converted is not None:
            yield converted


def _convert(spec: Table, row: tuple[Any, ...], tally: SalvageTally) -> dict[str, Any] | None:
    try:
        return neutral_row(spec, row, FROM_DB)
    except (ValueError, TypeError, UnicodeDecodeError):
        tally.lost(spec.name, 1)  # a damaged value that still parsed as a row
        return None


def _max_rowid(conn: sqlite3.Connection, table: str) -> int | None:
    for sql, params in (
        (f"SELECT max(rowid) FROM {table}", ()),
        ("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)),
    ):
        try:
            row = conn.execute(sql, params).fetchone()
        except sqlite3.DatabaseError:
            continue
        if row is not None:
            return int(row[0] or 0)
    return None


def _min_rowid(conn: sqlite3.Connection, table: str) -> int:
    try:
        row = conn.execute(f"SELECT min(rowid) FROM {table}").fetchone()
    except sqlite3.DatabaseError:
        return 1
    return int(row[0]) if row and row[0] is not None else 1
