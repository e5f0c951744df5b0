"""Numbered migrations: `NNNN_name.sql` files shipped inside each backend's package.

Each backend applies the files it has not recorded yet, in order, inside one transaction per
file, and records `(version, name, applied_at)` in its `schema_migrations` table. A store whose
recorded version is newer than this code knows is refused rather than guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from importlib import resources
from typing import Any

from cairn.errors import StoreError
from cairn.store.sql.dialect import Dialect, Run

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def load_migrations(package: str) -> list[Migration]:
    found: list[Migration] = []
    for entry in resources.files(package).joinpath("migrations").iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"migrations in {package} share a number: {versions}")
    return found


def apply_migrations(
    package: str,
    transaction: Callable[[], AbstractContextManager[Any]],
    dialect: Dialect,
    *,
    display: str,
    table: str,
    run_script: Callable[[Run, str], None],
    stamp: Callable[[], Any],
) -> None:
    """Apply the migrations of `package` that the store has not recorded, each in its own
    write transaction (on the connection `transaction` yields, spoken in `dialect`); `table` is
    the DDL of `schema_migrations`, `stamp` its `applied_at`."""
    migrations = load_migrations(package)
    known = migrations[-1].version if migrations else 0
    for migration in migrations:
        with transaction() as conn:
            run = Run(conn, dialect)
            run.execute(table)
            row = run.one("SELECT max(version) FROM schema_migrations")
            current = int(row[0] or 0) if row else 0
            if current > known:
                raise StoreError(
                    f"the store at {display} has schema version {current}, newer than this "
                    f"cairn knows ({known}); upgrade cairn-memory."
                )
            # Membership, not "newer than the highest": a migration numbered below one already
            # applied (shipped later) must still run.
            if run.one("SELECT 1 FROM schema_migrations WHERE version = ?", (migration.version,)):
                continue
            run_script(run, migration.sql)
            run.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, stamp()),
            )
