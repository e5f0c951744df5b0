"""The official MCP memory server's store (`@modelcontextprotocol/server-memory`): a JSON Lines
file (`memory.jsonl`) of

    {"type": "entity", "name": "...", "entityType": "...", "observations": ["...", ...]}
    {"type": "relation", "from": "...", "to": "...", "relationType": "..."}

Each entity becomes a fact ("<name> is a <entityType>") keyed by its name; each observation a
fact tagged with its entity and associated with it; each relation a fact ("<from>
<relationType> <to>") associated with both entities, so recall finds one beside the other.
The file keeps no timestamps, so none are carried.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cairn.importers.files import read_source
from cairn.importers.model import Batch, Item

SYSTEM = "mcp-memory"
MAX_NAME_CHARS = 200


def batch(path: Path, scope: str) -> Batch:
    origin = path.name
    read = read_source(path, path.parent, origin)
    if read.text is None:
        return Batch(SYSTEM, origin, scope, (), (read.problem or origin,))
    entities: list[Item] = []
    rest: list[Item] = []
    problems: list[str] = []
    for number, line in enumerate(read.text.splitlines(), start=1):
        if not line.strip():
            continue
        record = _record(line)
        if record is None:
            problems.append(f"{origin} line {number}: not a JSON object; skipped")
        elif record.get("type") == "entity":
            _entity(record, origin, number, entities, rest, problems)
        elif record.get("type") == "relation":
            _relation(record, origin, number, rest, problems)
        else:
            problems.append(f"{origin} line {number}: neither an entity nor a relation; skipped")
    return Batch(SYSTEM, origin, scope, (*entities, *rest), tuple(problems))


def _record(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _name(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME_CHARS:
        return None
    return " ".join(value.split())


def _entity(
    record: dict[str, Any],
    origin: str,
    number: int,
    entities: list[Item],
    rest: list[Item],
    problems: list[str],
) -> None:
    name, kind = _name(record.get("name")), _name(record.get("entityType"))
    observations = record.get("observations", [])
    if name is None or kind is None or not isinstance(observations, list):
        problems.append(f"{origin} line {number}: an entity needs a name, an entityType and a "
                        "list of observations; skipped")  # fmt: skip
        return
    key = f"entity:{name}"
    tags = (_tag(name), _tag(kind))
    entities.append(Item(origin, name, f"{name} is a {kind}", "fact", tags, key=key))
    for observation in observations:
        if not isinstance(observation, str) or not observation.strip():
            problems.append(f"{origin} line {number}: an observation of {name} is not text")
            continue
        rest.append(Item(origin, name, observation.strip(), "fact", tags, relates=(key,)))


def _relation(
    record: dict[str, Any], origin: str, number: int, rest: list[Item], problems: list[str]
) -> None:
    names = [_name(record.get(k)) for k in ("from", "to", "relationType")]
    if any(n is None for n in names):
        problems.append(f"{origin} line {number}: a relation needs from, to and relationType")
        return
    source, target, kind = (str(n) for n in names)
    rest.append(
        Item(
            origin,
            f"{source} {kind} {target}",
            f"{source} {kind.replace('_', ' ')} {target}",
            "fact",
            (_tag(source), _tag(target)),
            key=f"relation:{source}|{kind}|{target}",
            relates=(f"entity:{source}", f"entity:{target}"),
        )
    )


def _tag(name: str) -> str:
    return name.lower()[:64].strip()
