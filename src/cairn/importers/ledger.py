"""The import ledger, and the plan that compares a fresh read of a source with it.

The ledger is the `import` events of a scope: each says which memory an item of which source
became (created, matched, corrected) or that the item left (retired, released). Replaying them
gives the current mapping item -> memory, so a re-import recognises what it already holds and
writes nothing for it: cairn re-reading a source it holds is not evidence, so no boost or
confirmation is counted. Events are exported and imported with the store, so is the ledger.

Pairing: an item with a key (a mem0 id) is matched by key; one without by its origin and text.
Items left over are paired in order with left-over entries of the same origin and section when
their texts are alike (an edit: `correct`); the rest are new (`create`) or gone (`retire`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from difflib import SequenceMatcher
from typing import Any

from cairn.errors import InvalidRef
from cairn.importers.model import LEDGER_KIND, Batch, Entry, Item, Step
from cairn.refs import parse_ref
from cairn.remember import content_hash
from cairn.store.base import Store

EDIT_SIMILARITY = 0.5  # below this a changed item in the same place is a new one


def ledger_payload(
    batch: Batch, item: Item | Entry, memory: str, action: str, owned: bool, **extra: Any
) -> dict[str, Any]:
    text_hash = content_hash(item.content) if isinstance(item, Item) else item.hash
    return {
        "system": batch.system,
        "group": batch.group,
        "origin": item.origin,
        "section": item.section,
        "key": item.key,
        "hash": text_hash,
        "memory": memory,
        "action": action,
        "owned": owned,
        **extra,
    }


def load_entries(store: Store, batch: Batch) -> list[Entry]:
    """The current entries of this source in the scope (every group), oldest first.

    An entry is a (group, origin, memory) triple: the same claim in two files maps both to one
    memory. An entry is owned when its memory was written by this source (created or corrected
    by its import), not one the import found already stored.
    """
    current: dict[tuple[str, str, str], Entry] = {}
    for event in store.events_of_kind([LEDGER_KIND], [batch.scope]):
        if event.payload.get("system") == batch.system:
            _replay(current, event.payload)
    ids = [_memory_id(entry.memory) for entry in current.values()]
    held = {m.ref: m for m in store.get_memories([i for i in ids if i is not None])}
    return [
        replace(
            entry,
            content=held[entry.memory].content if entry.memory in held else "",
            owned=entry.memory in held and held[entry.memory].integration == batch.system,
        )
        for entry in current.values()
    ]


def _memory_id(ref: str) -> int | None:
    try:
        return parse_ref(ref, kind="mem")
    except InvalidRef:
        return None


def _replay(current: dict[tuple[str, str, str], Entry], payload: Mapping[str, Any]) -> None:
    group, origin = str(payload.get("group")), str(payload.get("origin"))
    memory = str(payload.get("memory"))
    replaces = payload.get("replaces")
    if isinstance(replaces, str):
        current.pop((group, origin, replaces), None)
    if payload.get("action") in ("retired", "released"):
        current.pop((group, origin, memory), None)
        return
    key = payload.get("key")
    current[(group, origin, memory)] = Entry(
        group=group,
        origin=origin,
        section=str(payload.get("section")),
        key=key if isinstance(key, str) else None,
        hash=str(payload.get("hash")),
        memory=memory,
        owned=bool(payload.get("owned")),
    )


def plan(items: Iterable[Item], entries: Iterable[Entry]) -> list[Step]:
    """The steps that bring the ledger in line with the items read now. An item repeated in
    the same origin (the same key, or the same text) is one item."""
    left = dict(enumerate(entries))  # still unmatched, in ledger order
    exact: dict[tuple[str, str], list[int]] = {}
    places: dict[tuple[str, str], list[int]] = {}
    for index, entry in left.items():
        exact.setdefault((entry.origin, _identity(entry.key, entry.hash)), []).append(index)
        if entry.key is None:
            places.setdefault((entry.origin, entry.section), []).append(index)
    steps: list[Step] = []
    fresh: list[Item] = []
    for item in distinct(items):
        wanted = (item.origin, _identity(item.key, content_hash(item.content)))
        found = [i for i in exact.get(wanted, []) if i in left]
        if not found:
            fresh.append(item)
            continue
        entry = left.pop(found[0])
        same = entry.hash == content_hash(item.content)
        steps.append(Step("unchanged" if same else "correct", item, entry))
    for item in fresh:
        candidates = [] if item.key else places.get((item.origin, item.section), [])
        alike = _most_alike(item, [(i, left[i]) for i in candidates if i in left])
        if alike is None:
            steps.append(Step("create", item))
        else:
            steps.append(Step("correct", item, left.pop(alike)))
    steps.extend(Step("retire", entry=entry) for entry in left.values())
    return steps


def _identity(key: str | None, text_hash: str) -> str:
    return f"key:{key}" if key is not None else f"text:{text_hash}"


def distinct(items: Iterable[Item]) -> list[Item]:
    seen: set[tuple[str, str]] = set()
    out: list[Item] = []
    for item in items:
        identity = (item.origin, item.key or content_hash(item.content))
        if identity not in seen:
            seen.add(identity)
            out.append(item)
    return out


def _most_alike(item: Item, candidates: list[tuple[int, Entry]]) -> int | None:
    """The left-over entry of the same place whose text the item's most resembles, if alike."""
    best: tuple[float, int] | None = None
    for index, entry in candidates:
        score = SequenceMatcher(None, entry.content, item.content).ratio()
        if score >= EDIT_SIMILARITY and (best is None or score > best[0]):
            best = (score, index)
    return None if best is None else best[1]
