"""The app's views: each turns a request's parameters into one or two `Cairn` calls and returns
a JSON-ready dict. The HTML pages render exactly that dict, and the `.json` form of every page
returns it, so the UI and the API are one set of views.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cairn.adapters.app import charts
from cairn.core import Cairn
from cairn.errors import InvalidInput, NotFound
from cairn.models import MEMORY_TYPES, to_jsonable

Params = Mapping[str, list[str]]
MAX_PARAM_CHARS = 2000


def one(params: Params, name: str) -> str | None:
    """The parameter's single value (blank is absent); refuses a repeated or oversized one."""
    values = [v for v in params.get(name, []) if v.strip()]
    if len(values) > 1:
        raise InvalidInput(f"give {name} once, not {len(values)} times.")
    if values and len(values[0]) > MAX_PARAM_CHARS:
        raise InvalidInput(f"{name} is longer than {MAX_PARAM_CHARS} characters; shorten it.")
    return values[0].strip() if values else None


def many(params: Params, name: str) -> list[str]:
    return [v.strip() for v in params.get(name, []) if v.strip()][:50]


def scopes_view(mem: Cairn, params: Params) -> dict[str, Any]:
    scopes = to_jsonable(mem.scopes())
    return {"scope": _scope(mem, params), "scopes": scopes, "types": list(MEMORY_TYPES)}


def memories_view(mem: Cairn, params: Params) -> dict[str, Any]:
    scope = _scope(mem, params)
    size = one(params, "size")
    page = mem.list_memories(
        scope=scope,
        query=one(params, "q"),
        types=many(params, "type"),
        tags=many(params, "tag"),
        statuses=many(params, "status"),
        citation=one(params, "citation"),
        cursor=one(params, "cursor"),
        size=_int(size, "size") if size else 25,
    )
    return {
        "scope": scope,
        "page": to_jsonable(page),
        "filters": {
            "q": one(params, "q") or "",
            "type": many(params, "type"),
            "tag": ", ".join(many(params, "tag")),
            "status": many(params, "status"),
            "citation": one(params, "citation") or "",
        },
        "types": list(MEMORY_TYPES),
        "cursor": one(params, "cursor") or "",
    }


def card_view(mem: Cairn, ref: str, params: Params) -> dict[str, Any]:
    scope = _scope(mem, params)
    found = mem.get_memory([ref], scope=scope)
    if not found.records:
        raise NotFound(f"{ref} names no memory in scope {scope}; open it from the list.")
    record = found.records[0]
    cited = mem.cited_lines(ref, scope=scope) if record.memory.source_ref else None
    evidence = record.memory.evidence
    return {
        "scope": scope,
        "record": to_jsonable(record),
        "cited": to_jsonable(cited),
        "clients": _clients(evidence.get("clients")),
        "people": sorted(str(p) for p in (evidence.get("people") or {})),
        "acts": [to_jsonable(a) for a in evidence.get("acts") or [] if isinstance(a, Mapping)],
        "rest": evidence.get("rest"),
    }


def sessions_view(mem: Cairn, params: Params) -> dict[str, Any]:
    scope = _scope(mem, params)
    return {"scope": scope, "sessions": to_jsonable(mem.sessions(scope=scope))}


def procedures_view(mem: Cairn, params: Params) -> dict[str, Any]:
    scope = _scope(mem, params)
    return {"scope": scope, "procedures": to_jsonable(mem.procedures(scope=scope))}


def tidy_view(mem: Cairn, params: Params) -> dict[str, Any]:
    scope = _scope(mem, params)
    proposals = mem.tidy(scope=scope)
    refs = list(dict.fromkeys(r for p in proposals for r in p.refs if r.startswith("mem_")))
    found = mem.get_memory(refs, scope=scope).records if refs else ()
    return {
        "scope": scope,
        "proposals": to_jsonable(proposals),
        "texts": {r.ref: r.memory.content for r in found},
    }


def stats_view(mem: Cairn, params: Params) -> dict[str, Any]:
    scope = _scope(mem, params)
    stats = mem.stats(scope=scope)
    days = mem.timeline(scope=scope)
    recall = stats.get("recall", {})
    citations = stats.get("citations", {})
    return {
        "scope": scope,
        "stats": to_jsonable(
            {k: stats.get(k) for k in ("memories", "by_type", "by_status", "recall", "citations")}
        ),
        "timeline": [{"day": d.day.isoformat(), "type": d.type, "count": d.count} for d in days],
        "charts": {
            "timeline": charts.timeline(days),
            "recall": charts.rates(recall),
            "citations": charts.citations(citations),
        },
    }


def _scope(mem: Cairn, params: Params) -> str:
    return mem.scope_for(one(params, "scope"))


def _int(text: str, name: str) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > 6:
        raise InvalidInput(f"{name} {text[:20]!r} is not a whole number; give e.g. 25.")
    return int(text)


def _clients(raw: object) -> list[dict[str, Any]]:
    if not isinstance(raw, Mapping):
        return []
    return [
        {"client": str(name), "tally": {str(k): v for k, v in tally.items()}}
        for name, tally in sorted(raw.items(), key=lambda kv: str(kv[0]))
        if isinstance(tally, Mapping)
    ]
