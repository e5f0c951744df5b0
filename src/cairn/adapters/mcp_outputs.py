"""The structured half of every MCP tool result: lean JSON, and the schema each tool declares.

`lean` is `cairn.models.to_jsonable` with the noise an agent pays for taken out: a field
that is absent is omitted (never `null`), a memory is named by `ref` only (not also
`memory_id`), a hit carries its summary (not also its content; `get_memory` has that), and
the hit list is `hits` everywhere (recall, activate, query), a hit in the answer's scope
does not repeat it, and an evidence record is named by its id alone (`evt_8` says kind and
number). Hits stay open to optional fields: whatever a hit gains is passed on, and omitted
when absent.

`OUTPUT_SCHEMAS` are deliberately loose where results grow (extra properties allowed) and
strict where an agent relies on them (ids, the hit list), and small, since clients list them.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from cairn.models import (
    STANDING_SECTIONS,
    Event,
    EvidenceRecord,
    Hit,
    Memory,
    MemoryRecord,
    ProcedureHit,
    RecallResult,
)
from cairn.sessions.models import Brief, BriefMemory

# Fields a hit omits when they hold their usual value: only the unusual is worth the tokens.
_HIT_USUAL: dict[str, object] = {"pathway": "direct", "weak": False, "kind": "memory"}
SCORE_DIGITS = 3


# The brief's standing groups of memories, each item {ref, type, summary, ...}.
_STANDING = tuple(name for name, _, _ in STANDING_SECTIONS)


def lean(value: Any) -> Any:
    """`value` as JSON-ready data, without nulls or duplicated names."""
    if isinstance(value, Hit):
        return _hit(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = _fields(value)
        if isinstance(value, (Memory, Event, MemoryRecord)):
            out["ref"] = value.ref
        if isinstance(value, Memory):
            out.pop("id", None)  # the ref says it: mem_12
        if isinstance(value, BriefMemory) and out.get("content") == out.get("summary"):
            del out["content"]  # a short claim is its own summary: said once
        if isinstance(value, ProcedureHit):
            out["ref"] = out.pop("procedure_id")  # one name for what feedback assesses
        if isinstance(value, Brief):
            out["hits"] = out.pop("memories", [])
        if isinstance(value, (Brief, RecallResult)):
            _in_scope(out)
        if isinstance(value, EvidenceRecord):
            _evidence(out)
        return out
    if isinstance(value, datetime):
        # Seconds are enough for an agent; the store keeps the full time.
        return value.isoformat(timespec="seconds").replace("+00:00", "Z")
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Mapping):
        return _renamed({str(k): lean(v) for k, v in value.items() if v is not None})
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [lean(v) for v in value]
    return value


def _fields(value: Any) -> dict[str, Any]:
    out = {
        f.name: lean(getattr(value, f.name))
        for f in dataclasses.fields(value)
        if getattr(value, f.name) is not None
    }
    return _renamed(out)


def _renamed(out: dict[str, Any]) -> dict[str, Any]:
    # One name for a memory's identifier: `ref`.
    if "memory_id" in out:
        memory_id = out.pop("memory_id")
        out.setdefault("ref", memory_id)
    return out


def _in_scope(out: dict[str, Any]) -> None:
    # A hit names its scope only when it differs from the answer's (global, another scope).
    for group in ("hits", *_STANDING):
        for hit in out.get(group, []):
            if hit.get("scope") == out.get("scope"):
                del hit["scope"]
    # An evidence record's time is said once: left out when its memories' hits say it.
    when = {hit["ref"]: hit.get("occurred_at") for hit in out.get("hits", [])}
    for record in out.get("evidence", []):
        supports = record.get("supports") or []
        if supports and all(when.get(ref) == record.get("occurred_at") for ref in supports):
            record.pop("occurred_at", None)


def _evidence(out: dict[str, Any]) -> None:
    # An evidence id (evt_8, ep_3) already says its kind and number: source_kind and
    # source_ref would repeat it; recorded_at is said only when it differs from occurred_at.
    out.pop("source_kind", None)
    out.pop("source_ref", None)
    if out.get("recorded_at") == out.get("occurred_at"):
        out.pop("recorded_at", None)
    if out.get("truncated") is False:
        del out["truncated"]


def _hit(hit: Hit) -> dict[str, Any]:
    out = _fields(hit)
    for name, usual in _HIT_USUAL.items():
        if out.get(name) == usual:
            del out[name]
    if hit.kind == "memory":
        out.pop("content", None)  # the summary is in the hit; get_memory has the content
    for name in [k for k, v in out.items() if v == [] or v == {}]:
        del out[name]
    provenance = out.get("provenance")
    if isinstance(provenance, dict) and "origin_scope" not in provenance:
        del out["provenance"]  # who wrote it is in get_memory; where it lives matters here
    if isinstance(out.get("score"), float):
        out["score"] = round(out["score"], SCORE_DIGITS)
    return out


def accepting_errors(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema`, or a tool error's `{"error": {code, message, retryable}}`: clients (the
    TypeScript SDK among them) validate structured content against the output schema even
    when `isError` is set, so the error form must fit too."""
    out = dict(schema)
    if "oneOf" in out:
        out["oneOf"] = [*out["oneOf"], _ERROR]
        return out
    required = out.pop("required", None)
    if required:
        out["anyOf"] = [{"required": required}, _ERROR]
    return out


def structured(value: object) -> dict[str, Any]:
    data = lean(value)
    return data if isinstance(data, dict) else {"result": data}


_S: dict[str, Any] = {"type": "string"}
_N: dict[str, Any] = {"type": "number"}
_I: dict[str, Any] = {"type": "integer"}
_B: dict[str, Any] = {"type": "boolean"}
_STRS: dict[str, Any] = {"type": "array", "items": _S}


def _obj(required: str, **properties: Any) -> dict[str, Any]:
    """An object with `required` fields; only those are typed, to keep the list short."""
    names = required.split()
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {k: v for k, v in properties.items() if k in names},
    }
    if names:
        schema["required"] = names
    return schema


def _list(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": item}


HIT = _obj("ref score summary", ref=_S, score=_N, summary=_S)
_PROCEDURES = _list(_obj("ref", ref=_S, goal=_S))
_REMEMBERED = _obj("ref disposition", ref=_S, disposition=_S, type=_S, scope=_S)
_CLOSED = _obj("status", status=_S)
_TRACE_WRITE = _obj("event_id", event_id=_S)
_TRACE = _obj("lines", lines=_list({"type": "object"}))
_DECISION = _obj("id status", id=_S, status=_S)
_HITS = _list(HIT)
_ERROR: dict[str, Any] = {"required": ["error"]}

OUTPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    "remember": {
        "type": "object",
        "oneOf": [
            _REMEMBERED,
            _obj("results", results=_list(_obj("index ok", index=_I, ok=_B))),
        ],
    },
    "recall": _obj(
        "retrieval_id scope hits", retrieval_id=_S, scope=_S, hits=_HITS, procedures=_PROCEDURES
    ),
    "query": _obj("hits", hits=_HITS),
    "get_memory": _obj("records unknown", records=_list(_obj("ref memory", ref=_S)), unknown=_STRS),
    "correct": _REMEMBERED,
    "forget": _obj("ref status", ref=_S, status={"const": "retired"}),
    "purge": _obj("ref status", ref=_S, status={"const": "purged"}),
    "stats": _obj("memories", memories=_I),
    "tidy": _obj("proposals", proposals=_list(_obj("id refs", id=_S, refs=_STRS))),
    "tidy_accept": _DECISION,
    "tidy_decline": _DECISION,
    "activate": _obj(
        "session_id retrieval_id scope hits",
        session_id=_S,
        retrieval_id=_S,
        scope=_S,
        hits=_HITS,
        procedures=_PROCEDURES,
    ),
    "feedback": _obj("recorded pending", recorded=_I, pending=_STRS),
    "commit": _CLOSED,
    "end": _CLOSED,
    "note": _TRACE_WRITE,
    "pin": _TRACE_WRITE,
    "log_progress": _TRACE_WRITE,
    "trace": _TRACE,
    "episodes": _TRACE,
    "history": _TRACE,
    "lessons": _obj("lessons", lessons=_list({"type": "object"})),
    "confirm": _obj("ref counted", ref=_S, counted=_B),
}
