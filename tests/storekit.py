"""Records and vectors for store tests, shared by the contract suite and backend suites."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from cairn.models import Memory, NewEvent, NewMemory
from cairn.store.base import LexicalDoc, MemoryFilter

T0 = datetime(2026, 8, 1, 12, 0, 0, 123456, tzinfo=UTC)
SCOPE = "project:example/api"
OTHER = "project:example/web"
IDENTITY = "test-embedder/4"


def in_another_process(script: str, *args: str) -> None:
    """Run a Python script in a process of its own, seeing this checkout's cairn and tests: how
    a store test plays another process writing to the same file."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)])}
    subprocess.run([sys.executable, "-c", script, *args], check=True, env=env)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def new_memory(**overrides: Any) -> NewMemory:
    values: dict[str, Any] = {
        "scope": SCOPE,
        "type": "fact",
        "content": "The API uses PostgreSQL",
        "summary": "API uses PostgreSQL",
        "durability": "semantic",
        "weight": 0.5,
        "tags": (),
        "reason": None,
        "source_ref": None,
        "pinned": False,
        "branch": None,
        "session_id": None,
        "source_event_id": None,
        "diff_text": None,
        "diff_files": (),
        "error_trace": None,
        "integration": None,
        "content_hash": "h-" + str(overrides.get("content", "default")),
        "written_at": T0,
        "occurred_at": T0,
    }
    values.update(overrides)
    return NewMemory(**values)


def as_stored(memory_id: int, new: NewMemory) -> Memory:
    return Memory(id=memory_id, until=None, replaced_by=None, status="active", **_fields(new))


def _fields(new: NewMemory) -> dict[str, Any]:
    return {name: getattr(new, name) for name in NewMemory.__dataclass_fields__}


def unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return (v / np.linalg.norm(v)).astype(np.float32)


def active(*scopes: str, **kw: Any) -> MemoryFilter:
    return MemoryFilter(scopes=scopes or (SCOPE,), **kw)


def new_event(**overrides: Any) -> NewEvent:
    values: dict[str, Any] = {
        "kind": "remember",
        "scope": SCOPE,
        "session_id": "s1",
        "at": T0,
        "integration": "python",
        "memory_id": None,
        "payload": {"content": "ünï 🧭", "n": 1, "nested": {"a": [1, 2]}},
    }
    values.update(overrides)
    return NewEvent(**values)


def doc(content: str, tags: str = "", source_ref: str = "", reason: str = "") -> LexicalDoc:
    return LexicalDoc(content=content, tags=tags, source_ref=source_ref, reason=reason)


def joined_averages(conn: sqlite3.Connection, scope: str) -> tuple[Any, ...]:
    """Active current documents of `scope` and their mean field lengths, by a plain join: what
    the store's kept or shortcut averages must equal."""
    row = conn.execute(
        "SELECT count(*), avg(l.content), avg(l.tags), avg(l.source_ref), avg(l.reason), "
        "avg(l.context) FROM lexical_lengths l JOIN memories m ON m.id = l.memory_id "
        "WHERE m.scope = ? AND m.status = 'active' AND m.until IS NULL",
        (scope,),
    ).fetchone()
    return tuple(row)
