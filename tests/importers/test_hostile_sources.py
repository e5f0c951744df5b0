"""Hostile source files: whatever a memory.jsonl, a mem0 export or a basic-memory note holds,
the readers yield well-formed items and report the rest (mem0: a clear InvalidInput when the
whole file is not an export), never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cairn.errors import InvalidInput
from cairn.importers import basic_memory, mcp_memory, mem0
from cairn.importers.model import Item
from cairn.models import MEMORY_TYPES

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)
RECORD = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["entity", "relation", "other"]) | JSON,
        "name": TEXT | JSON,
        "entityType": TEXT,
        "observations": st.lists(TEXT | JSON, max_size=3) | JSON,
        "from": TEXT,
        "to": TEXT,
        "relationType": TEXT | JSON,
    },
)
HOSTILE = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def well_formed(items: tuple[Item, ...] | list[Item]) -> None:
    for item in items:
        assert item.content.strip() and item.type in MEMORY_TYPES
        assert all(isinstance(t, str) and len(t) <= 64 for t in item.tags)


@HOSTILE
@given(lines=st.lists(RECORD.map(json.dumps) | TEXT, max_size=8))
def test_any_memory_jsonl_yields_items_or_problems(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    batch = mcp_memory.batch(path, "global")
    well_formed(batch.items)
    assert all(problem.startswith("memory.jsonl") for problem in batch.problems)


@HOSTILE
@given(value=JSON | st.fixed_dictionaries({"results": st.lists(JSON, max_size=5)}))
def test_any_json_is_a_mem0_export_or_refused_clearly(tmp_path: Path, value: object) -> None:
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    try:
        batch = mem0.batch(path, "global")
    except InvalidInput as exc:
        assert "mem0" in exc.message
        return
    well_formed(batch.items)


@HOSTILE
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_any_note_yields_well_formed_items(text: str) -> None:
    items = basic_memory.note_items(text, "note.md")
    assert items and items[0].key is not None  # the note itself, at least its title
    well_formed(items)


def test_a_file_over_the_limit_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_bytes(b" " * ((1 << 20) + 1))
    batch = mcp_memory.batch(path, "global")
    assert batch.items == () and "1 MiB" in batch.problems[0]


@pytest.mark.parametrize("content", ["not json", '"text"', '{"results": 3}'])
def test_mem0_says_what_it_expected(tmp_path: Path, content: str) -> None:
    path = tmp_path / "mem0.json"
    path.write_text(content)
    with pytest.raises(InvalidInput, match="get_all"):
        mem0.batch(path, "global")
