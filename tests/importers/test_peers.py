"""Importing other memory stores: the official MCP memory server's memory.jsonl, a mem0
get_all() export and a basic-memory folder, in the formats their documentation gives. Each keeps
its provenance (integration) and timestamps; relations become associations. Both backends."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cairn import Cairn
from cairn.models import Memory

MCP_LINES = [
    {"type": "entity", "name": "John_Smith", "entityType": "person",
     "observations": ["Speaks fluent Spanish", "Graduated in 2019"]},
    {"type": "entity", "name": "Anthropic", "entityType": "organization", "observations": []},
    {"type": "relation", "from": "John_Smith", "to": "Anthropic", "relationType": "works_at"},
]  # fmt: skip
MEM0 = {
    "results": [
        {
            "id": "892db2ae-06d9-49e5-8b3e-585ef9b85b8e",
            "memory": "User is planning a trip to Japan next month.",
            "hash": "ab12",
            "metadata": None,
            "created_at": "2024-07-26T10:29:36.630547-07:00",
            "updated_at": None,
            "user_id": "alice",
        },
        {
            "id": "c3f1",
            "memory": "User is vegetarian.",
            "created_at": "2024-07-20T08:00:00Z",
            "updated_at": None,
            "user_id": "alice",
            "categories": ["food"],
        },
    ]
}
NOTE = """---
title: Coffee Brewing Methods
type: note
permalink: coffee-brewing-methods
tags: [coffee, brewing]
created: 2025-01-10T09:00:00Z
---

# Coffee Brewing Methods

Notes on making better coffee.

## Observations
- [method] Pour over gives more clarity than French press #brewing
- [preference] Light roasts suit pour over best

## Relations
- relates_to [[Coffee Bean Origins]]
"""
ORIGINS = "---\ntitle: Coffee Bean Origins\n---\n\nEthiopian beans taste of berries.\n"


def held(mem: Cairn) -> dict[str, Memory]:
    return {m.content: m for m in mem.store.iter_memories() if m.status == "active"}


def write_jsonl(path: Path, lines: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def associated(mem: Cairn, memory: Memory) -> set[int]:
    pairs = {(r.from_id, r.to_id) for r in mem.store.relations_of([memory.id])}
    return {a if b == memory.id else b for a, b in pairs}


def test_mcp_memory_entities_observations_and_relations(mem: Cairn, tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "memory.jsonl", MCP_LINES)
    [report] = mem.import_memory("mcp-memory", source)
    assert report.counts["create"] == 5 and not report.problems
    memories = held(mem)
    john = memories["John_Smith is a person"]
    spanish = memories["Speaks fluent Spanish"]
    works = memories["John_Smith works at Anthropic"]
    assert john.integration == "mcp-memory" and "john_smith" in spanish.tags
    assert john.id in associated(mem, spanish)
    assert {john.id, memories["Anthropic is a organization"].id} <= associated(mem, works)
    again = write_jsonl(source, [{**MCP_LINES[0], "observations": ["Speaks fluent Spanish"]},
                                 *MCP_LINES[1:]])  # fmt: skip
    [second] = mem.import_memory("mcp-memory", again)
    assert second.counts["unchanged"] == 4 and second.counts["retire"] == 1
    assert "Graduated in 2019" not in held(mem)


def test_mcp_memory_damaged_lines_are_reported_not_fatal(mem: Cairn, tmp_path: Path) -> None:
    source = tmp_path / "memory.jsonl"
    source.write_text('not json\n{"type": "entity", "name": ""}\n[1]\n' + json.dumps(MCP_LINES[1]))
    [report] = mem.import_memory("mcp-memory", source)
    assert len(report.problems) == 3 and report.counts["create"] == 1


def test_mem0_keeps_ids_timestamps_and_provenance(mem: Cairn, tmp_path: Path) -> None:
    source = tmp_path / "mem0.json"
    source.write_text(json.dumps(MEM0), encoding="utf-8")
    [report] = mem.import_memory("mem0", source)
    assert report.counts["create"] == 2
    trip = held(mem)["User is planning a trip to Japan next month."]
    assert trip.integration == "mem0" and "user:alice" in trip.tags
    assert trip.occurred_at == datetime(2024, 7, 26, 17, 29, 36, 630547, tzinfo=UTC)
    assert "food" in held(mem)["User is vegetarian."].tags
    # The same id with another text is a correction of it, with history.
    edited = {"results": [{**MEM0["results"][0], "memory": "User is planning a trip to Kyoto."},
                             MEM0["results"][1]]}  # fmt: skip
    source.write_text(json.dumps(edited), encoding="utf-8")
    [second] = mem.import_memory("mem0", source)
    assert second.counts["correct"] == 1 and second.counts["unchanged"] == 1
    assert held(mem)["User is planning a trip to Kyoto."].replaces == trip.id


def test_mem0_refuses_what_is_not_an_export(mem: Cairn, tmp_path: Path) -> None:
    from cairn.errors import InvalidInput

    source = tmp_path / "mem0.json"
    source.write_text('{"memories": 3}')
    with pytest.raises(InvalidInput, match="results"):
        mem.import_memory("mem0", source)


def test_basic_memory_notes_observations_and_relations(mem: Cairn, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    (folder / "coffee").mkdir(parents=True)
    (folder / "coffee" / "brewing.md").write_text(NOTE, encoding="utf-8")
    (folder / "coffee" / "origins.md").write_text(ORIGINS, encoding="utf-8")
    [report] = mem.import_memory("basic-memory", folder)
    assert report.counts["create"] == 5, report.lines
    memories = held(mem)
    pour = memories["Pour over gives more clarity than French press #brewing"]
    assert pour.integration == "basic-memory"
    assert {"coffee brewing methods", "method", "brewing"} <= set(pour.tags)
    assert pour.occurred_at == datetime(2025, 1, 10, 9, 0, tzinfo=UTC)
    assert memories["Light roasts suit pour over best"].type == "preference"
    note = next(m for m in memories.values() if m.content.startswith("# Coffee Brewing"))
    origins = memories["Ethiopian beans taste of berries."]
    link = memories["Coffee Brewing Methods relates to Coffee Bean Origins"]
    assert {note.id, origins.id} <= associated(mem, link)
    assert note.id in associated(mem, pour)
    [second] = mem.import_memory("basic-memory", folder)
    assert second.counts["unchanged"] == 5
