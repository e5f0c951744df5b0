"""What cairn's MCP tools look like to a client: lean schemas, tool sets, honest annotations.

Every agent session pays for the tool list before doing any work, so the advertised input
schemas are compacted from the ones pydantic derives (which the server still uses to parse
arguments): no `title`, no `default: null`, no `anyOf [T, null]` wrappers, and the location
fields (`scope`, `cwd`, `session_id`) explained once in the server's instructions rather than
on every tool. Enums, ranges and the exclusive forms of `remember` are added here, so the
schema says what the core checks. Results are made lean the same way (`lean`): no nulls, one
name per thing (`ref`, `hits`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from mcp_types import ToolAnnotations

from cairn.config import Settings
from cairn.core import MAX_LIMIT as RECALL_LIMIT
from cairn.errors import InvalidInput
from cairn.lessons.tools import MAX_LIMIT as LESSONS_LIMIT
from cairn.models import MEMORY_TYPES
from cairn.sessions.trace import MAX_HISTORY_CHARS

ENV_TOOLS = "CAIRN_MCP_TOOLS"
CORE = ("activate", "recall", "feedback", "remember", "commit", "get_memory", "correct", "forget")
SESSIONS = (*CORE, "end", "note", "log_progress", "trace", "lessons", "confirm")
# Tools renamed, still callable for one release (deprecated) wherever their new name is served,
# but no longer listed: the old name and the tool that replaces it.
RENAMED = {"pin": "note", "episodes": "trace", "history": "trace"}
TOOL_SETS: dict[str, tuple[str, ...] | None] = {"core": CORE, "sessions": SESSIONS, "all": None}
DEFAULT_SET = "core"
# The tool list's size in characters of compact JSON; a test holds each set to its budget.
BUDGETS = {"core": 12_000, "sessions": 17_000, "all": 20_000}

# The location fields are on most tools; their full meaning is in the instructions, once.
SHARED = {
    "scope": "kind:id, e.g. project:github.com/acme/api; usually omit.",
    "cwd": "Absolute path you work in; its repo gives the scope.",
    "session_id": "From activate.",
}
DESCRIBED_ON = frozenset({"activate", "recall", "remember"})

_STR = {"type": "string"}
_STRS = {"type": "array", "items": _STR}
_TYPE_ENUM = {"type": "string", "enum": list(MEMORY_TYPES)}
# Field patches: what the core checks, said in the schema (enums and ranges).
FIELD_PATCHES: dict[str, dict[str, Any]] = {
    "type": _TYPE_ENUM,
    "types": {"type": "array", "items": _TYPE_ENUM},
    "durability": {"enum": ["episodic", "semantic", "permanent"]},
    "outcome": {"enum": ["success", "partial", "failure", "unknown"]},
    "evidence": {"enum": ["references", "full"]},
    "kind": {"enum": ["all", "memories", "pages"]},
    "weight": {"minimum": 0, "maximum": 1},
    "max_chars": {"minimum": 1, "maximum": MAX_HISTORY_CHARS},
    "also": {"maxItems": 3},
    "refs": {"minItems": 1},
}
# The ranges the core checks, from the constants it checks them with.
LIMITS = {
    "recall": RECALL_LIMIT,
    "query": next(f.default for f in fields(Settings) if f.name == "max_recall_items"),
    "lessons": LESSONS_LIMIT,
}


def chosen_set(name: str | None) -> str:
    """The tool set named by `--tools` or `CAIRN_MCP_TOOLS`, checked; `core` when neither."""
    value = (name or os.environ.get(ENV_TOOLS) or DEFAULT_SET).strip().lower()
    if value not in TOOL_SETS:
        raise InvalidInput(
            f"there is no tool set {value!r}; choose one of {', '.join(TOOL_SETS)} "
            f"(--tools or {ENV_TOOLS})."
        )
    return value


def shared_field(tool: str, field: str) -> dict[str, Any]:
    """A location field: described on the tools an agent starts with, bare elsewhere (the
    server's instructions say what scope and cwd mean, once)."""
    if field == "session_id" and tool in {"lessons", "confirm"}:
        return {"type": "string", "description": "From activate, or your agent's own session id."}
    if field == "session_id" or tool in DESCRIBED_ON:
        return {"type": "string", "description": SHARED[field]}
    return {"type": "string"}


def in_set(tool: str, tool_set: str) -> bool:
    tool = RENAMED.get(tool, tool)
    members = TOOL_SETS[tool_set]
    return members is None or tool in members


def compact(schema: Any) -> Any:
    """A JSON schema without pydantic's noise: titles, null defaults, `anyOf [T, null]`."""
    if isinstance(schema, list):
        return [compact(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and value is None:
            continue
        if key == "properties":
            out[key] = {name: compact(spec) for name, spec in value.items()}
            continue
        out[key] = compact(value)
    options = out.get("anyOf")
    if isinstance(options, list):
        kept = [o for o in options if o != {"type": "null"}]
        if len(kept) == 1 and len(kept) < len(options):
            del out["anyOf"]
            out = {**kept[0], **out}
    return out


def advertised(name: str, parameters: Mapping[str, Any], hidden: frozenset[str]) -> dict[str, Any]:
    """The input schema a client sees for tool `name`: compact, typed, aliases left out."""
    schema: dict[str, Any] = compact(dict(parameters))
    props: dict[str, Any] = schema.get("properties", {})
    for field in hidden:
        props.pop(field, None)
    for field, spec in props.items():
        if field in SHARED:
            props[field] = shared_field(name, field)
            continue
        spec.update(FIELD_PATCHES.get(field, {}))
        if field == "limit" and name in LIMITS:
            spec.update({"minimum": 1, "maximum": LIMITS[name]})
    schema["required"] = [f for f in schema.get("required", []) if f in props]
    if not schema["required"]:
        del schema["required"]
    if name == "remember":
        # The scalar form (content + type) or the batch form (memories), never both.
        schema["oneOf"] = [{"required": ["content", "type"]}, {"required": ["memories"]}]
    if name == "trace":
        schema["not"] = {"required": ["at", "max_chars"]}  # around a moment, or the latest
    return schema


# (readOnly, destructive, idempotent, openWorld) as measured by the annotation test: recall,
# activate, query and lessons write retrievals or repeat state, so none is read-only.
_ANNOTATIONS: dict[str, tuple[bool, bool, bool, bool]] = {
    "get_memory": (True, False, True, False),
    "trace": (True, False, True, False),
    "episodes": (True, False, True, False),
    "history": (True, False, True, False),
    "stats": (True, False, True, False),
    "forget": (False, True, False, False),  # a second forget is refused: already retired
    "purge": (False, True, False, False),
    "tidy_accept": (False, True, False, True),  # may write a skill file into the project
    "tidy": (False, False, False, False),
}


def tool_annotations(name: str) -> ToolAnnotations:
    read_only, destructive, idempotent, open_world = _ANNOTATIONS.get(
        name, (False, False, False, False)
    )
    # A hint at the protocol's default (readOnly false, idempotent false) is left out.
    return ToolAnnotations(
        read_only_hint=read_only or None,
        destructive_hint=None if read_only else destructive,
        idempotent_hint=idempotent or None,
        open_world_hint=open_world,
    )
