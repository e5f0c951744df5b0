"""Store health: `cairn check`, and an export that saves what a damaged store still holds.

Both work from a location rather than an open `Cairn`: a damaged SQLite file is exactly what
`Cairn.open` refuses, so its check and salvage open the file read-only themselves, without
migrations. PostgreSQL is opened as usual (the server, not cairn, owns its files).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import IO

from cairn.exchange import header_line, row_line, sequences_line


@dataclass(frozen=True)
class CheckReport:
    location: str
    backend: str
    problems: list[str]
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class SalvageReport:
    lines: int
    unreadable_rows: int
    damaged_tables: list[str]
    unreadable_by_table: dict[str, int]


def is_postgres(location: str) -> bool:
    return location.startswith(("postgresql://", "postgres://"))


def sqlite_path(location: str) -> str:
    return location[len("sqlite:///") - 1 :] if location.startswith("sqlite:///") else location


def check_store(location: str, *, busy_timeout_ms: int = 30_000) -> CheckReport:
    """Run the backend's integrity checks; `problems` is empty when the store is healthy."""
    if is_postgres(location):
        from cairn.store.postgres import PostgresStore

        store = PostgresStore(location, busy_timeout_ms=busy_timeout_ms)
        try:
            problems, notes = store.integrity_problems()
            return CheckReport(store.location, "postgres", problems, notes)
        finally:
            store.close()
    from cairn.store.sqlite.salvage import integrity_problems

    path = sqlite_path(location)
    problems, notes = integrity_problems(path)
    return CheckReport(path, "sqlite", problems, notes)


def salvage_export(location: str, out: IO[str]) -> SalvageReport:
    """Export every readable row of a SQLite store, skipping rows on damaged pages."""
    from cairn.store.sqlite.salvage import (
        SalvageTally,
        copied_tables,
        salvage_sequences,
        salvage_tables,
    )

    path = sqlite_path(location)
    tally = SalvageTally()
    out.write(header_line("sqlite", copied_tables(path)) + "\n")
    lines = 1
    for table, row in salvage_tables(path, tally):
        out.write(row_line(table, row) + "\n")
        lines += 1
    out.write(sequences_line(salvage_sequences(path)) + "\n")
    return SalvageReport(lines + 1, tally.unreadable_rows, list(tally.damaged), tally.unreadable)
