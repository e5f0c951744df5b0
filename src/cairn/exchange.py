"""Export and import: the whole store as JSON Lines, history and events included.

Line 1 is a header; then every memory (all versions, purged tombstones included), every event
and every vector (float32 bytes in base64, so the round trip is bit-exact). Lexical index rows
are derived data and are rebuilt on import. Importing is only allowed into an empty store:
merging two histories would renumber refs that other records point at.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from typing import IO, Any

import numpy as np

from cairn.errors import Conflict, InvalidInput
from cairn.indexing import index_memory
from cairn.models import Event, Memory
from cairn.store.base import Store
from cairn.timeutil import parse_when

FORMAT = "cairn-export"
VERSION = 1
_TIME_FIELDS = ("written_at", "occurred_at", "until", "last_cited_at", "last_accessed_at")


def export_lines(store: Store) -> Iterator[str]:
    yield _dump({"format": FORMAT, "version": VERSION, "backend": store.backend})
    for memory in store.iter_memories():
        yield _dump({"record": "memory", **_memory_dict(memory)})
    for event in store.iter_events():
        yield _dump({"record": "event", **_event_dict(event)})
    for memory_id, identity, vector in store.iter_vectors():
        blob = base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode("ascii")
        yield _dump(
            {"record": "vector", "memory_id": memory_id, "identity": identity, "vector": blob}
        )


def export_to(store: Store, out: IO[str]) -> int:
    count = 0
    for line in export_lines(store):
        out.write(line + "\n")
        count += 1
    return count


def import_from(store: Store, lines: Iterable[str]) -> dict[str, int]:
    if any(True for _ in store.iter_memories()) or any(True for _ in store.iter_events()):
        raise Conflict(
            "import needs an empty store (refs in the file would collide with existing ones); "
            "point CAIRN_HOME or --store at a new location."
        )
    counts = {"memory": 0, "event": 0, "vector": 0}
    with store.transaction():
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            record = _parse(line, number)
            if number == 1:
                _check_header(record)
                continue
            kind = record.pop("record", None)
            if kind not in counts:
                raise InvalidInput(f"line {number}: unknown record kind {kind!r}.")
            _import_record(store, kind, record)
            counts[kind] += 1
    return counts


def _import_record(store: Store, kind: str, record: dict[str, Any]) -> None:
    if kind == "memory":
        memory = _memory_from(record)
        store.import_memory(memory)
        if memory.status != "purged":
            index_memory(
                store, memory.id, memory.content, memory.tags, memory.source_ref, memory.reason
            )
    elif kind == "event":
        record["at"] = parse_when(record["at"], field="at", end_of_day=False)
        store.import_event(Event(**record))
    else:
        raw = base64.b64decode(record["vector"])
        store.put_vector(
            int(record["memory_id"]), str(record["identity"]), np.frombuffer(raw, np.float32)
        )


def _check_header(record: dict[str, Any]) -> None:
    if record.get("format") != FORMAT:
        raise InvalidInput("this file is not a cairn export (its first line has no header).")
    if record.get("version") != VERSION:
        raise InvalidInput(
            f"export version {record.get('version')} is not supported; this cairn reads "
            f"version {VERSION}. Export again with the same cairn version."
        )


def _parse(line: str, number: int) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"line {number} is not JSON ({exc.msg}); the file is damaged.") from None
    if not isinstance(value, dict):
        raise InvalidInput(f"line {number} is not a JSON object; the file is damaged.")
    return value


def _memory_dict(memory: Memory) -> dict[str, Any]:
    data = asdict(memory)
    for name in _TIME_FIELDS:
        if data[name] is not None:
            data[name] = data[name].isoformat()
    data["tags"] = list(memory.tags)
    data["diff_files"] = list(memory.diff_files)
    data["evidence"] = dict(memory.evidence)
    return data


def _memory_from(record: dict[str, Any]) -> Memory:
    for name in _TIME_FIELDS:
        if record.get(name) is not None:
            record[name] = parse_when(record[name], field=name, end_of_day=False)
    record["tags"] = tuple(record["tags"])
    record["diff_files"] = tuple(record["diff_files"])
    return Memory(**record)


def _event_dict(event: Event) -> dict[str, Any]:
    data = asdict(event)
    data["at"] = event.at.isoformat()
    data["payload"] = dict(event.payload)
    return data


def _dump(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
