"""Damaged SQLite stores for the failure and integrity tests: a real store, one page of it
overwritten in the middle of the file, as a bad sector or a torn write would leave it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any


def fact(i: int) -> str:
    return f"Fact {i}: service {i} listens on port {1000 + i}."


def numbered_facts(count: int) -> list[dict[str, Any]]:
    return [{"content": fact(i), "type": "fact", "scope": "global"} for i in range(count)]


def checkpoint(path: Path) -> None:
    """Move the WAL into the main file, so damage to the file is damage to the data."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def damage_page_holding(path: Path, marker: bytes) -> int:
    """Overwrite the whole page that holds `marker` with a fixed garbage pattern; returns its
    page number (1-based). The marker must not be on page 1, which holds the schema root."""
    data = path.read_bytes()
    offset = data.find(marker)
    assert offset >= 0, f"{marker!r} is not in {path}"
    page_size = int.from_bytes(data[16:18], "big") or 65536
    page = offset // page_size
    assert page > 0, "refusing to damage page 1"
    with path.open("r+b") as out:
        out.seek(page * page_size)
        out.write(bytes((i * 31 + 7) % 256 for i in range(page_size)))
    return page + 1


def memory_row_marker(i: int) -> bytes:
    """Bytes only the memories row of `fact(i)` holds: its content followed by its summary."""
    return (fact(i) + fact(i)).encode("utf-8")
