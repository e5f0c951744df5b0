"""A mem0 export: the JSON `Memory.get_all()` returns,

    {"results": [{"id": "...", "memory": "...", "created_at": "...", "updated_at": "...",
                  "metadata": {...}, "user_id": "...", "categories": [...]}, ...]}

(a bare list of those records is read too). Each record is a fact keyed by its mem0 id, so a
later export that changed its text corrects it, and one that dropped it retires it. Its
`created_at` is when it happened; its user, agent and categories become tags.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from cairn.errors import InvalidInput
from cairn.importers.files import read_source
from cairn.importers.model import Batch, Item
from cairn.timeutil import parse_when

SYSTEM = "mem0"
_TAG_FIELDS = ("user_id", "agent_id", "run_id")


def batch(path: Path, scope: str) -> Batch:
    origin = path.name
    read = read_source(path, path.parent, origin)
    if read.text is None:
        return Batch(SYSTEM, origin, scope, (), (read.problem or origin,))
    try:
        value = json.loads(read.text)
    except (json.JSONDecodeError, RecursionError):
        raise InvalidInput(
            f"{path} is not JSON; give the output of mem0's get_all() saved as JSON."
        ) from None
    records = value.get("results") if isinstance(value, dict) else value
    if not isinstance(records, list):
        raise InvalidInput(f'{path} has no "results" list; it is not a mem0 get_all() export.')
    items: list[Item] = []
    problems: list[str] = []
    for index, record in enumerate(records):
        item = _item(record, origin)
        if item is None:
            problems.append(f"{origin} result {index}: needs an id and a memory text; skipped")
        else:
            items.append(item)
    return Batch(SYSTEM, origin, scope, tuple(items), tuple(problems))


def _item(record: object, origin: str) -> Item | None:
    if not isinstance(record, dict):
        return None
    ident, text = record.get("id"), record.get("memory")
    if not isinstance(ident, (str, int)) or not isinstance(text, str) or not text.strip():
        return None
    return Item(
        origin=origin,
        section="",
        content=text.strip(),
        type="fact",
        tags=_tags(record),
        key=f"mem0:{ident}",
        occurred_at=_when(record.get("created_at")),
    )


def _tags(record: dict[str, Any]) -> tuple[str, ...]:
    tags = [f"{f.removesuffix('_id')}:{record[f]}" for f in _TAG_FIELDS if record.get(f)]
    categories = record.get("categories")
    if isinstance(categories, list):
        tags.extend(c for c in categories if isinstance(c, str))
    return tuple(t.lower()[:64].strip() for t in tags if t.strip())[:10]


def _when(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_when(value, field="created_at", end_of_day=False)
    except InvalidInput:
        return None
