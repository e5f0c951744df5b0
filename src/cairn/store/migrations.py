"""Numbered migrations: `NNNN_name.sql` files shipped inside each backend's package.

Each backend applies the files it has not recorded yet, in order, inside one transaction per
file, and records `(version, name, applied_at)` in its `schema_migrations` table. A store whose
recorded version is newer than this code knows is refused rather than guessed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

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
