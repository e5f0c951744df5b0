"""Hostile and arbitrary values through the MCP result and argument helpers: nothing is lost,
no null survives in an object, one name per identifier."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.adapters.mcp_fields import MORE_FIELDS, by_id, with_more
from cairn.adapters.mcp_outputs import lean
from cairn.errors import InvalidInput

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
KEYS = st.sampled_from(["ref", "memory_id", "summary", "scope", "hits", "x"]) | st.text(max_size=8)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=25,
)


def objects(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        return [value, *(o for v in value.values() for o in objects(v))]
    if isinstance(value, list):
        return [o for v in value for o in objects(v)]
    return []


@given(JSON)
def test_lean_leaves_no_null_in_an_object_and_one_name_for_a_ref(value: Any) -> None:
    for obj in objects(lean(value)):
        assert None not in obj.values()
        assert "memory_id" not in obj


@given(st.dictionaries(KEYS, SCALARS.filter(lambda v: v is not None), max_size=5))
def test_lean_keeps_every_present_value_of_a_mapping(value: dict[str, Any]) -> None:
    out = lean(value)
    for key, item in value.items():
        if key == "memory_id":
            assert out["ref"] == (value.get("ref", item))
        else:
            assert out[key] == item


ASSESSMENT = st.fixed_dictionaries(
    {"ref": st.text(max_size=10) | st.integers(), "used": st.booleans()},
    optional={"effect": st.text(max_size=8), "note": st.text(max_size=8)},
)


@given(st.lists(ASSESSMENT, max_size=5))
def test_by_id_renames_ref_and_keeps_every_other_field(items: list[dict[str, Any]]) -> None:
    for item, named in zip(items, by_id(items), strict=True):
        ref = item["ref"]
        key = "procedure_id" if isinstance(ref, str) and ref.startswith("proc_") else "memory_id"
        assert named == {key: ref, **{k: v for k, v in item.items() if k != "ref"}}


def test_by_id_refuses_a_ref_given_twice_and_passes_old_names_through() -> None:
    old = [{"memory_id": "mem_1", "used": True, "effect": "helped"}]
    assert by_id(old) == old
    with pytest.raises(InvalidInput, match="give ref only"):
        by_id([{"ref": "proc_2", "procedure_id": "proc_2", "used": True, "effect": "helped"}])


@given(st.dictionaries(st.sampled_from(sorted(MORE_FIELDS)), st.text(max_size=5), max_size=4))
def test_with_more_merges_grouped_fields_without_loss(more: dict[str, Any]) -> None:
    assert with_more({"tags": ["a"]}, more) == {"tags": ["a"], **more}


@given(st.text(min_size=1, max_size=10).filter(lambda k: k not in MORE_FIELDS))
def test_with_more_refuses_a_field_it_does_not_group(key: str) -> None:
    with pytest.raises(InvalidInput, match="more has no field"):
        with_more({}, {key: 1})
