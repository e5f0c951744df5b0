"""`cairn check` on PostgreSQL: amcheck over cairn's B-tree indexes, then a full read of every
table (which detoasts every value, so damaged heap pages or TOAST chunks surface).

amcheck ships with PostgreSQL but must be created in the database; when the role may not
create it, the check says so and still reads every table.
"""

from __future__ import annotations

import psycopg

from cairn.store.postgres.connection import Database
from cairn.store.postgres.errors import first_line
from cairn.store.tables import NOT_COPIED, TABLES

_INDEXES = (
    "SELECT c.relname FROM pg_index i"
    " JOIN pg_class c ON c.oid = i.indexrelid"
    " JOIN pg_class t ON t.oid = i.indrelid"
    " JOIN pg_am am ON am.oid = c.relam"
    " WHERE am.amname = 'btree' AND t.relname = ANY(%s)"
    " AND t.relnamespace = current_schema()::regnamespace ORDER BY c.relname"
)


def integrity_problems(db: Database) -> tuple[list[str], list[str]]:
    """(problems found, notes on what could not be checked); both empty when all is well."""
    problems: list[str] = []
    notes: list[str] = []
    tables = _tables(db)
    with db.connection() as conn:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS amcheck")
        except psycopg.Error as exc:
            notes.append(f"amcheck is not available ({first_line(exc)}); indexes not checked")
        else:
            for (index,) in conn.execute(_INDEXES, (tables,)).fetchall():
                try:
                    conn.execute("SELECT bt_index_check(%s::regclass, true)", (index,))
                except psycopg.Error as exc:
                    problems.append(f"index {index}: {first_line(exc)}")
        for table in tables:
            try:
                conn.execute(f"SELECT sum(length(t::text)) FROM {table} t").fetchone()
            except psycopg.Error as exc:
                problems.append(f"table {table}: {first_line(exc)}")
    return problems, notes


def _tables(db: Database) -> list[str]:
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        ).fetchall()
    present = {str(row[0]) for row in rows}
    wanted = [spec.name for spec in TABLES] + sorted(NOT_COPIED)
    return [name for name in wanted if name in present]
