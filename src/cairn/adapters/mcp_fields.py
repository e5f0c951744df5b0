"""The fields of cairn's MCP tools: names from the seeds, descriptions an agent can act on.

Values are checked by the core, not here, so a wrong value gets the same message from MCP as
from the CLI; the schemas only say what is expected. Objects whose shape the core checks
(batch items, assessments, procedures) publish their shape with `WithJsonSchema` and arrive
as plain dictionaries.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, WithJsonSchema

from cairn.errors import InvalidInput
from cairn.models import MEMORY_TYPES

TYPES_TEXT = ", ".join(MEMORY_TYPES)


def _nullable(schema: dict[str, Any]) -> WithJsonSchema:
    return WithJsonSchema({"anyOf": [schema, {"type": "null"}]})


_STR_LIST = {"type": "array", "items": {"type": "string"}}

_CLAIM_FIELDS: dict[str, Any] = {
    "tags": {**_STR_LIST, "description": "Labels; detected when omitted."},
    "reason": {"type": "string", "description": "Why this is worth remembering."},
    "source_ref": {
        "type": "string",
        "description": "What it is about: path, dir/, glob, path:10-24, path::Symbol, URL.",
    },
    "summary": {"type": "string", "description": "One line (default: the start)."},
    "weight": {"type": "number", "description": "Initial importance 0 to 1 (default 0.5)."},
    "durability": {"type": "string", "description": "episodic, semantic or permanent."},
    "pinned": {"type": "boolean", "description": "Always in briefs; never decays."},
    "occurred_at": {
        "type": "string",
        "description": "RFC 3339 time it happened, when that differs from now.",
    },
    "diff_text": {"type": "string", "description": "A unified diff, for code-change memories."},
    "diff_files": {**_STR_LIST, "description": "Files the change touched."},
    "error_trace": {"type": "string", "description": "A stack trace, for bug memories."},
    "used": {**_STR_LIST, "description": "Refs of memories that shaped this claim."},
    "relates_to": {**_STR_LIST, "description": "Refs of memories this one relates to."},
}

CLAIM_FIELDS = frozenset(_CLAIM_FIELDS)

# The rarely used claim fields: listed once, grouped under `more`, to keep the tool list short.
MORE_FIELDS = frozenset(
    {"weight", "durability", "occurred_at", "diff_text", "diff_files", "error_trace", "relates_to"}
)
MORE: dict[str, Any] = {
    "type": "object",
    "properties": {
        name: {k: v for k, v in spec.items() if k != "description"}
        for name, spec in _CLAIM_FIELDS.items()
        if name in MORE_FIELDS
    },
    "additionalProperties": False,
}
MORE["properties"]["weight"].update({"minimum": 0, "maximum": 1})
MORE["properties"]["durability"]["enum"] = ["episodic", "semantic", "permanent"]

# A batch item has the scalar form's fields; the core checks them, the schema names the two
# that every item needs.
MEMORY_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "content": {"type": "string"},
        "type": {"type": "string", "enum": list(MEMORY_TYPES)},
    },
    "required": ["content", "type"],
}

# `ref` names a memory (mem_N) or a procedure (proc_N); the older memory_id / procedure_id
# are still accepted for one release (deprecated) but no longer listed.
ASSESSMENT_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ref": {"type": "string"},
        "used": {"type": "boolean"},
        "effect": {"type": "string", "enum": ["helped", "no_effect", "harmed", "unknown"]},
    },
    "required": ["ref", "used", "effect"],
}

PROCEDURE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "goal": {"type": "string"},
        "summary": {"type": "string"},
        "context": {"type": "object", "description": "When it applies: tools, language, ..."},
        "steps": _STR_LIST,
        "caveats": {**_STR_LIST, "description": "Failure modes, safety notes."},
    },
    "additionalProperties": False,
}

Scope = Annotated[
    str | None,
    Field(description="kind:id, e.g. project:github.com/acme/api; usually omit."),
]
Cwd = Annotated[
    str | None,
    Field(
        description="Absolute path of the directory you work in; its git repository gives the "
        "scope. Without scope and cwd the client's first root is used, else the server's "
        "directory."
    ),
]
SessionId = Annotated[
    str | None,
    Field(
        description="The session_id activate returned; the call then belongs to that session "
        "and, without scope or cwd, uses its scope."
    ),
]
RequiredSessionId = Annotated[str, Field(description="The session_id activate returned.")]
Used = Annotated[
    list[str] | None,
    Field(description="Refs that shaped your work; each counts a cite."),
]
Refs = Annotated[list[str], Field(description="Refs, e.g. ['mem_12'].")]
Ref = Annotated[str, Field(description="e.g. mem_12.")]
Reason = Annotated[str, Field(description="Why: the change, or why it no longer holds.")]
ProposalId = Annotated[str, Field(description="From tidy.")]
NoteText = Annotated[str, Field(description="A working note: a result, plan or checklist.")]
TaskContext = Annotated[
    dict[str, Any] | None,
    Field(description='Facts about the task, e.g. {"platform": "iOS"}; extra search cues.'),
]
StrList = list[str] | None

Content = Annotated[
    str | None,
    Field(description="One self-contained durable claim (markdown). With type; or use memories."),
]
MemoryType = Annotated[str | None, Field(description="The claim's type.")]
Memories = Annotated[
    list[dict[str, Any]] | None,
    _nullable({"type": "array", "items": MEMORY_ITEM, "minItems": 1}),
    Field(description="Several claims, each {content, type, ...} with the fields above."),
]
More = Annotated[
    dict[str, Any] | None,
    _nullable(MORE),
    Field(
        description="Rarely needed: weight (default 0.5), occurred_at (RFC 3339), relates_to "
        "(refs), ..."
    ),
]


def with_more(fields: dict[str, Any], more: dict[str, Any] | None) -> dict[str, Any]:
    """The claim fields with those grouped under `more` merged in; a field given twice or
    unknown there is refused, so nothing the agent wrote is silently dropped."""
    if not more:
        return fields
    unknown = sorted(set(more) - MORE_FIELDS)
    if unknown:
        raise InvalidInput(
            f"more has no field {', '.join(map(repr, unknown))}; its fields are "
            f"{', '.join(sorted(MORE_FIELDS))}."
        )
    twice = sorted(set(more) & set(fields))
    if twice:
        raise InvalidInput(f"{', '.join(twice)} given both flat and under more; give it once.")
    return {**fields, **{k: v for k, v in more.items() if v is not None}}


def by_id(assessments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Assessments in the core's names: `ref` becomes memory_id (mem_N) or procedure_id
    (proc_N). An item naming its ref twice is refused, not guessed at."""
    named = []
    for item in assessments:
        if "ref" not in item:
            named.append(item)
            continue
        rest = {k: v for k, v in item.items() if k != "ref"}
        if "memory_id" in rest or "procedure_id" in rest:
            raise InvalidInput(
                "an assessment gives ref and also memory_id or procedure_id; give ref only."
            )
        ref = item["ref"]
        key = "procedure_id" if isinstance(ref, str) and ref.startswith("proc_") else "memory_id"
        named.append({key: ref, **rest})
    return named


Assessments = Annotated[
    list[dict[str, Any]],
    WithJsonSchema({"type": "array", "items": ASSESSMENT_ITEM, "minItems": 1}),
    Field(description="One per ref the retrieval returned."),
]
Procedure = Annotated[
    dict[str, Any] | None,
    _nullable(PROCEDURE),
    Field(description="A reusable method this session proved."),
]


def claim_field(name: str) -> Any:
    """The description of one optional claim field, shared by scalar remember and batch items."""
    return Field(description=_CLAIM_FIELDS[name]["description"])
