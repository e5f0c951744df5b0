"""Cairn's own export merged into a non-empty store: its current memories (active or resting),
claim by claim, each in its own scope, through remember like every other source. History,
events, sessions and the rest are carried only by a load into an empty store
(`cairn.exchange.import_from`), which keeps every ref; a merge cannot, so it keeps the claims.

A claim is recognised again by its text; one whose text changed between two exports of the same
file name is paired with its old version by type and likeness and corrected.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from cairn.errors import InvalidInput
from cairn.exchange import current_memories
from cairn.importers.model import Batch, Item
from cairn.timeutil import parse_when

SYSTEM = "cairn"


def batches(lines: Iterable[str], origin: str) -> list[Batch]:
    by_scope: dict[str, list[Item]] = {}
    problems: list[str] = []
    for row in current_memories(lines):
        item = _item(row, origin)
        if item is None:
            problems.append(f"{origin}: memory {row.get('id')!r} has no text or scope; skipped")
            continue
        by_scope.setdefault(str(row["scope"]), []).append(item)
    scopes = list(by_scope) or ["global"]  # the problems are reported with the first
    head = scopes[0]
    first = Batch(SYSTEM, origin, head, tuple(by_scope.get(head, ())), tuple(problems))
    return [first, *(Batch(SYSTEM, origin, s, tuple(by_scope[s])) for s in scopes[1:])]


def _item(row: dict[str, Any], origin: str) -> Item | None:
    content, scope, mtype = row.get("content"), row.get("scope"), row.get("type")
    if not isinstance(content, str) or not content.strip() or not isinstance(scope, str):
        return None
    tags = row.get("tags")
    return Item(
        origin=origin,
        section=str(mtype),
        content=content,
        type=str(mtype),
        tags=tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else (),
        source_ref=_text(row.get("source_ref")),
        reason=_text(row.get("reason")),
        occurred_at=_when(row.get("occurred_at")),
        pinned=row.get("pinned") is True,
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _when(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_when(value, field="occurred_at", end_of_day=False)
    except InvalidInput:
        return None
