"""The memory tools of the MCP server: one small function per tool, one `Cairn` call each.

A function's docstring is the tool's description, its parameters after `mem` and `resolved`
(typed in `mcp_fields.py`) the input schema; `mcp_toolkit.Toolset` serves it (see there).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from cairn.adapters import mcp_render as render
from cairn.adapters.mcp_fields import (
    CLAIM_FIELDS,
    MORE_FIELDS,
    Content,
    Cwd,
    Memories,
    MemoryType,
    More,
    ProposalId,
    Reason,
    Ref,
    Refs,
    Scope,
    SessionId,
    StrList,
    TaskContext,
    Used,
    claim_field,
    with_more,
)
from cairn.adapters.mcp_toolkit import Toolset
from cairn.code.records import Proposal, TidyDecision
from cairn.core import Cairn
from cairn.models import GetResult, RecallResult, RememberBatch, RememberResult
from cairn.retrieval_tools import QueryResult

Resolved = str | None

# The recall arguments passed on as given; omitted ones keep the core's defaults.
RECALL_OPTIONS = frozenset(
    {"session_id", "also", "limit", "as_of", "types", "tags", "since", "until", "kind",
     "task_context", "evidence", "include_resting", "explain"}
)  # fmt: skip


tools = Toolset()


@tools.tool(render.remember)
def remember(
    mem: Cairn,
    resolved: Resolved,
    content: Content = None,
    type: MemoryType = None,
    memories: Memories = None,
    scope: Scope = None,
    cwd: Cwd = None,
    session_id: SessionId = None,
    tags: Annotated[StrList, claim_field("tags")] = None,
    reason: Annotated[str | None, claim_field("reason")] = None,
    source_ref: Annotated[str | None, claim_field("source_ref")] = None,
    summary: Annotated[str | None, claim_field("summary")] = None,
    weight: Annotated[float | None, claim_field("weight")] = None,
    durability: Annotated[str | None, claim_field("durability")] = None,
    pinned: Annotated[bool | None, claim_field("pinned")] = None,
    occurred_at: Annotated[str | None, claim_field("occurred_at")] = None,
    diff_text: Annotated[str | None, claim_field("diff_text")] = None,
    diff_files: Annotated[StrList, claim_field("diff_files")] = None,
    error_trace: Annotated[str | None, claim_field("error_trace")] = None,
    used: Used = None,
    relates_to: Annotated[StrList, claim_field("relates_to")] = None,
    more: More = None,
) -> RememberResult | RememberBatch:
    """Store durable, typed claims future sessions should know: content + type for one,
    memories for several.

    Returns ref and disposition: created, matched (identical) or boosted (a
    near-duplicate strengthened); one with other values (version, number) is created
    with may_update naming the older. Refused with a reason: blank, unknown type, too
    large, a secret. Not for task state (note that).
    """
    # The optional claim fields, exactly as named in the schema; the core checks them.
    fields = {k: v for k, v in locals().items() if k in CLAIM_FIELDS and v is not None}
    return mem.remember_typed(
        content,
        type,
        memories=memories,
        scope=scope,
        cwd=resolved,
        session_id=session_id,
        **with_more(fields, more),
    )


@tools.tool(render.recall)
def recall(
    mem: Cairn,
    resolved: Resolved,
    query: Annotated[str, Field(description="What you need to know, in words.")],
    scope: Scope = None,
    cwd: Cwd = None,
    session_id: SessionId = None,
    also: Annotated[StrList, Field(description="Up to 3 other phrasings.")] = None,
    limit: Annotated[int, Field(description="At most this many hits.")] = 8,
    as_of: Annotated[
        str | None, Field(description="As believed at the end of this day (UTC).")
    ] = None,
    types: Annotated[StrList, Field(description="Only these memory types.")] = None,
    tags: Annotated[StrList, Field(description="Only with one of these tags.")] = None,
    since: Annotated[str | None, Field(description="Occurred from then.")] = None,
    until: Annotated[str | None, Field(description="Occurred until then.")] = None,
    task_context: TaskContext = None,
    evidence: Annotated[
        str,
        Field(description="full adds the source records' text."),
    ] = "references",
    kind: Annotated[
        str | None,
        Field(description="What to search (default all: memories and pages)."),
    ] = None,
    include_resting: Annotated[
        bool, Field(description="No effect: resting memories are always searched.")
    ] = False,
    explain: Annotated[bool, Field(description="Add score breakdowns.")] = False,
) -> RecallResult:
    """Search long-term memory for a question, in this scope (plus global). Each hit:
    ref, score, type, summary, citation (changed or gone: read the code before relying
    on it); weak marks a barely passing match;
    resting and stale_vector mark ones ranked lower.

    Returns a retrieval_id; in a session give it feedback before commit. get_memory
    shows a ref in full.
    """
    options = {k: v for k, v in locals().items() if k in RECALL_OPTIONS and v is not None}
    return mem.recall(query, scope=scope, cwd=resolved, **options)


@tools.tool(render.queried)
def query(
    mem: Cairn,
    resolved: Resolved,
    text: Annotated[str, Field(description="A short phrase.")],
    scope: Scope = None,
    cwd: Cwd = None,
    session_id: SessionId = None,
    limit: Annotated[int | None, Field(description="At most this many (default 20).")] = None,
) -> QueryResult:
    """The memories nearest to a phrase by embedding alone, closest first; prefer
    recall for questions. In a session it is a retrieval: give it feedback."""
    if session_id is not None:
        return mem.query_in_session(
            text, session_id=session_id, scope=scope, cwd=resolved, limit=limit
        )
    hits = mem.query(text, scope=scope, cwd=resolved, limit=limit)
    return QueryResult(tuple(hits), mem.scope_for(scope, resolved))


@tools.tool(render.records)
def get_memory(
    mem: Cairn, resolved: Resolved, refs: Refs, scope: Scope = None, cwd: Cwd = None
) -> GetResult:
    """Full records for refs: content, reason, citation, status, counts, history
    (what it replaced, what replaced it); refs not visible come back under unknown."""
    return mem.get_memory(refs, scope=scope, cwd=resolved)


@tools.tool(text=lambda result, args: f"{result.memory_id} replaces {args['ref']}")
def correct(
    mem: Cairn,
    resolved: Resolved,
    ref: Ref,
    content: Annotated[str, Field(description="The corrected claim, in full.")],
    reason: Reason,
    scope: Scope = None,
    cwd: Cwd = None,
) -> RememberResult:
    """Write a new version of a memory that is no longer accurate; the old one keeps
    its text and gets until (recall as_of still finds it)."""
    return mem.correct(ref, content, reason=reason, scope=scope, cwd=resolved)


@tools.tool(lambda result: f"{result['ref']} retired: {result['reason']}")
def forget(
    mem: Cairn, resolved: Resolved, ref: Ref, reason: Reason, scope: Scope = None, cwd: Cwd = None
) -> dict[str, str]:
    """Retire a memory that no longer holds: recall stops returning it (as_of still
    does). Use correct when there is a better version."""
    retired = mem.forget(ref, reason=reason, scope=scope, cwd=resolved)
    return {"ref": retired, "status": "retired", "reason": reason.strip()}


@tools.tool(lambda result: f"{result['ref']} purged (tombstone {result['tombstone']})")
def purge(
    mem: Cairn, resolved: Resolved, ref: Ref, scope: Scope = None, cwd: Cwd = None
) -> dict[str, str]:
    """Erase a memory and all its versions for good (e.g. a leaked secret); only a
    tombstone remains. Prefer forget for claims that stopped being true."""
    return {"ref": ref, "status": "purged", "tombstone": mem.purge(ref, scope=scope, cwd=resolved)}


@tools.tool(render.stats)
def stats(
    mem: Cairn,
    resolved: Resolved,
    scope: Scope = None,
    cwd: Cwd = None,
    all_scopes: Annotated[bool, Field(description="Every scope.")] = False,
) -> dict[str, Any]:
    """Counts of memories by type, status and scope; vectors; store size."""
    return mem.stats(scope=scope, cwd=resolved, all_scopes=all_scopes)


@tools.tool(lambda result: render.proposals(result["proposals"]))
def tidy(
    mem: Cairn,
    resolved: Resolved,
    scope: Scope = None,
    cwd: Cwd = None,
    skills_dir: Annotated[
        str | None,
        Field(description="Default .claude/skills."),
    ] = None,
) -> dict[str, list[Proposal]]:
    """Proposals to keep memory healthy (updates, merges, retiring memories whose code
    is gone, contradictions, a skill file); tidy_accept or tidy_decline each."""
    return {"proposals": mem.tidy(scope=scope, cwd=resolved, skills_dir=skills_dir)}


@tools.tool(render.tidy_decision)
def tidy_accept(
    mem: Cairn, resolved: Resolved, proposal_id: ProposalId, scope: Scope = None, cwd: Cwd = None
) -> TidyDecision:
    """Carry out a tidy proposal; a skill proposal writes a file in the project."""
    return mem.tidy_accept(proposal_id, scope=scope, cwd=resolved)


@tools.tool(render.tidy_decision)
def tidy_decline(
    mem: Cairn, resolved: Resolved, proposal_id: ProposalId, scope: Scope = None, cwd: Cwd = None
) -> TidyDecision:
    """Decline a tidy proposal; tidy never proposes it again."""
    return mem.tidy_decline(proposal_id, scope=scope, cwd=resolved)


# Argument names still accepted for one release but no longer listed (deprecated).
# The rarely used remember fields are listed grouped under `more`; flat, they still work.
ALIASES: dict[str, frozenset[str]] = {"remember": MORE_FIELDS}
