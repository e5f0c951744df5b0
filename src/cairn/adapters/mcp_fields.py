"""The fields of cairn's MCP tools: names from the seeds, descriptions an agent can act on.

Values are checked by the core, not here, so a wrong value gets the same message from MCP as
from the CLI; the schemas only say what is expected. Objects whose shape the core checks
(batch items, assessments, procedures) publish their shape with `WithJsonSchema` and arrive
as plain dictionaries.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, WithJsonSchema

from cairn.models import MEMORY_TYPES

TYPES_TEXT = ", ".join(MEMORY_TYPES)


def _nullable(schema: dict[str, Any]) -> WithJsonSchema:
    return WithJsonSchema({"anyOf": [schema, {"type": "null"}]})


_STR_LIST = {"type": "array", "items": {"type": "string"}}

_CLAIM_FIELDS: dict[str, Any] = {
    "tags": {**_STR_LIST, "description": "Labels for filtering; detected when omitted."},
    "reason": {"type": "string", "description": "Why this is worth remembering."},
    "source_ref": {
        "type": "string",
        "description": (
            "What it is about: path, dir/, glob (src/**/*.py), path:10-24, path::Symbol, "
            "commit:<sha> or URL."
        ),
    },
    "summary": {"type": "string", "description": "One line; the first 200 characters if omitted."},
    "weight": {"type": "number", "description": "Initial importance 0 to 1 (default 0.5)."},
    "durability": {"type": "string", "description": "episodic, semantic or permanent."},
    "pinned": {"type": "boolean", "description": "Always shown in briefs; never decays."},
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

MEMORY_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "content": {"type": "string", "description": "One self-contained durable claim."},
        "type": {"type": "string", "description": f"One of: {TYPES_TEXT}."},
        **_CLAIM_FIELDS,
    },
    "required": ["content", "type"],
    "additionalProperties": False,
}

ASSESSMENT_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "memory_id": {"type": "string", "description": "A mem_N the retrieval returned."},
        "procedure_id": {"type": "string", "description": "A proc_N the retrieval returned."},
        "used": {"type": "boolean", "description": "Whether it played a part in your work."},
        "effect": {
            "type": "string",
            "enum": ["helped", "no_effect", "harmed", "unknown"],
            "description": "What it did to the outcome.",
        },
    },
    "required": ["used", "effect"],
    "additionalProperties": False,
}

PROCEDURE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "goal": {"type": "string", "description": "What the method achieves (default: task)."},
        "summary": {"type": "string", "description": "The method in a sentence or two."},
        "context": {"type": "object", "description": "When it applies: tools, language, ..."},
        "steps": {**_STR_LIST, "description": "Ordered steps."},
        "caveats": {**_STR_LIST, "description": "Known failure modes and safety notes."},
    },
    "additionalProperties": False,
}

Scope = Annotated[
    str | None,
    Field(
        description="Scope as kind:id, e.g. project:github.com/acme/api, user:alice or global. "
        "Usually omit it and pass cwd."
    ),
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
    Field(description="Refs of memories that shaped your work (mem_12, ...); each counts a cite."),
]
Refs = Annotated[
    list[str], Field(description="Memory refs as recall returns them, e.g. ['mem_12', 'mem_40'].")
]
Ref = Annotated[str, Field(description="The memory's ref, e.g. mem_12.")]
Reason = Annotated[str, Field(description="Why: the change, or why it no longer holds.")]
TaskContext = Annotated[
    dict[str, Any] | None,
    Field(
        description='A small object of facts about the task (e.g. {"platform": "iOS"}); '
        "merged into the session's and used as extra search cues."
    ),
]
StrList = list[str] | None

Content = Annotated[
    str | None,
    Field(
        description="One self-contained durable claim, stored verbatim (markdown). Scalar "
        "form: give content and type; do not combine with memories."
    ),
]
MemoryType = Annotated[str | None, Field(description=f"The claim's type, one of: {TYPES_TEXT}.")]
Memories = Annotated[
    list[dict[str, Any]] | None,
    _nullable({"type": "array", "items": MEMORY_ITEM, "minItems": 1}),
    Field(
        description="Batch form: several claims, each {content, type, ...}; they inherit "
        "scope, cwd and session_id. Do not combine with content and type."
    ),
]
Assessments = Annotated[
    list[dict[str, Any]],
    WithJsonSchema({"type": "array", "items": ASSESSMENT_ITEM, "minItems": 1}),
    Field(
        description="One entry per memory or procedure the retrieval returned: memory_id or "
        "procedure_id, used (true/false) and effect (helped, no_effect, harmed, unknown)."
    ),
]
Procedure = Annotated[
    dict[str, Any] | None,
    _nullable(PROCEDURE),
    Field(description="A reusable method this session proved, to capture as a procedure."),
]


def claim_field(name: str) -> Any:
    """The description of one optional claim field, shared by scalar remember and batch items."""
    return Field(description=_CLAIM_FIELDS[name]["description"])
