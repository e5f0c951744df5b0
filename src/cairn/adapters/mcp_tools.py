"""The memory tools of the MCP server: one small method per tool, one `Cairn` call each.

A method's docstring is the tool's description, its parameters (typed in `mcp_fields.py`) the
input schema. `collect_tools` turns the methods of both tool groups (this one and
`mcp_session_tools.py`) into SDK `Tool`s with their read-only / destructive annotations.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from pydantic import Field

from cairn.adapters import mcp_render as render
from cairn.adapters.mcp import Binding, ToolResult, Where
from cairn.adapters.mcp_fields import (
    CLAIM_FIELDS,
    MORE_FIELDS,
    Content,
    Cwd,
    Memories,
    MemoryType,
    More,
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
from cairn.adapters.mcp_surface import tool_annotations
from cairn.core import Cairn
from cairn.retrieval_tools import QueryResult

Ctx = Context[Any, Any]

# The recall arguments passed on as given; omitted ones keep the core's defaults.
RECALL_OPTIONS = frozenset(
    {"session_id", "also", "limit", "as_of", "types", "tags", "since", "until", "kind",
     "task_context", "evidence", "include_resting", "explain"}
)  # fmt: skip


class MemoryTools:
    """remember, recall, get_memory, correct, forget, purge, stats, tidy."""

    def __init__(self, binding: Binding) -> None:
        self._b = binding

    async def remember(
        self,
        ctx: Ctx,
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
    ) -> ToolResult:
        """Store durable, typed claims future sessions should know: content + type for one,
        memories for several.

        Returns ref and disposition: created, matched (identical) or boosted (a
        near-duplicate strengthened); one with other values (version, number) is created
        with may_update naming the older. Refused with a reason: blank, unknown type, too
        large, a secret. Not for task state (note that).
        """
        # The optional claim fields, exactly as named in the schema; the core checks them.
        fields = {k: v for k, v in locals().items() if k in CLAIM_FIELDS and v is not None}
        return await self._b.call(
            ctx,
            lambda mem, where: mem.remember_typed(
                content,
                type,
                memories=memories,
                scope=scope,
                cwd=where,
                session_id=session_id,
                **with_more(fields, more),
            ),
            render.remember,
            Where(scope, cwd, session_id),
        )

    async def recall(
        self,
        ctx: Ctx,
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
    ) -> ToolResult:
        """Search long-term memory for a question, in this scope (plus global). Each hit:
        ref, score, type, summary, citation (changed or gone: read the code before relying
        on it); weak marks a barely passing match;
        resting and stale_vector mark ones ranked lower.

        Returns a retrieval_id; in a session give it feedback before commit. get_memory
        shows a ref in full.
        """
        options = {k: v for k, v in locals().items() if k in RECALL_OPTIONS and v is not None}
        return await self._b.call(
            ctx,
            lambda mem, where: mem.recall(query, scope=scope, cwd=where, **options),
            render.recall,
            Where(scope, cwd, session_id),
        )

    async def query(
        self,
        ctx: Ctx,
        text: Annotated[str, Field(description="A short phrase.")],
        scope: Scope = None,
        cwd: Cwd = None,
        session_id: SessionId = None,
        limit: Annotated[int | None, Field(description="At most this many (default 20).")] = None,
    ) -> ToolResult:
        """The memories nearest to a phrase by embedding alone, closest first; prefer
        recall for questions. In a session it is a retrieval: give it feedback."""

        def action(mem: Cairn, where: str | None) -> QueryResult:
            if session_id is not None:
                return mem.query_in_session(
                    text, session_id=session_id, scope=scope, cwd=where, limit=limit
                )
            hits = mem.query(text, scope=scope, cwd=where, limit=limit)
            return QueryResult(tuple(hits), mem.scope_for(scope, where))

        return await self._b.call(ctx, action, render.queried, Where(scope, cwd, session_id))

    async def get_memory(
        self, ctx: Ctx, refs: Refs, scope: Scope = None, cwd: Cwd = None
    ) -> ToolResult:
        """Full records for refs: content, reason, citation, status, counts, history
        (what it replaced, what replaced it); refs not visible come back under unknown."""
        return await self._b.call(
            ctx,
            lambda mem, where: mem.get_memory(refs, scope=scope, cwd=where),
            render.records,
            Where(scope, cwd),
        )

    async def correct(
        self,
        ctx: Ctx,
        ref: Ref,
        content: Annotated[str, Field(description="The corrected claim, in full.")],
        reason: Reason,
        scope: Scope = None,
        cwd: Cwd = None,
    ) -> ToolResult:
        """Write a new version of a memory that is no longer accurate; the old one keeps
        its text and gets until (recall as_of still finds it)."""
        return await self._b.call(
            ctx,
            lambda mem, where: mem.correct(ref, content, reason=reason, scope=scope, cwd=where),
            lambda result: f"{result.memory_id} replaces {ref}",
            Where(scope, cwd),
        )

    async def forget(
        self, ctx: Ctx, ref: Ref, reason: Reason, scope: Scope = None, cwd: Cwd = None
    ) -> ToolResult:
        """Retire a memory that no longer holds: recall stops returning it (as_of still
        does). Use correct when there is a better version."""
        return await self._b.call(
            ctx,
            lambda mem, where: {
                "ref": mem.forget(ref, reason=reason, scope=scope, cwd=where),
                "status": "retired",
                "reason": reason.strip(),
            },
            lambda result: f"{result['ref']} retired: {result['reason']}",
            Where(scope, cwd),
        )

    async def purge(self, ctx: Ctx, ref: Ref, scope: Scope = None, cwd: Cwd = None) -> ToolResult:
        """Erase a memory and all its versions for good (e.g. a leaked secret); only a
        tombstone remains. Prefer forget for claims that stopped being true."""
        return await self._b.call(
            ctx,
            lambda mem, where: {
                "ref": ref,
                "status": "purged",
                "tombstone": mem.purge(ref, scope=scope, cwd=where),
            },
            lambda result: f"{result['ref']} purged (tombstone {result['tombstone']})",
            Where(scope, cwd),
        )

    async def stats(
        self,
        ctx: Ctx,
        scope: Scope = None,
        cwd: Cwd = None,
        all_scopes: Annotated[bool, Field(description="Every scope.")] = False,
    ) -> ToolResult:
        """Counts of memories by type, status and scope; vectors; store size."""
        return await self._b.call(
            ctx,
            lambda mem, where: mem.stats(scope=scope, cwd=where, all_scopes=all_scopes),
            render.stats,
            Where(scope, cwd),
        )

    async def tidy(
        self,
        ctx: Ctx,
        scope: Scope = None,
        cwd: Cwd = None,
        skills_dir: Annotated[
            str | None,
            Field(description="Default .claude/skills."),
        ] = None,
    ) -> ToolResult:
        """Proposals to keep memory healthy (updates, merges, retiring memories whose code
        is gone, contradictions, a skill file); tidy_accept or tidy_decline each."""
        return await self._b.call(
            ctx,
            lambda mem, where: {
                "proposals": mem.tidy(scope=scope, cwd=where, skills_dir=skills_dir)
            },
            lambda result: render.proposals(result["proposals"]),
            Where(scope, cwd),
        )

    async def tidy_accept(
        self,
        ctx: Ctx,
        proposal_id: Annotated[str, Field(description="From tidy.")],
        scope: Scope = None,
        cwd: Cwd = None,
    ) -> ToolResult:
        """Carry out a tidy proposal; a skill proposal writes a file in the project."""
        return await self._b.call(
            ctx,
            lambda mem, where: mem.tidy_accept(proposal_id, scope=scope, cwd=where),
            render.tidy_decision,
            Where(scope, cwd),
        )

    async def tidy_decline(
        self,
        ctx: Ctx,
        proposal_id: Annotated[str, Field(description="From tidy.")],
        scope: Scope = None,
        cwd: Cwd = None,
    ) -> ToolResult:
        """Decline a tidy proposal; tidy never proposes it again."""
        return await self._b.call(
            ctx,
            lambda mem, where: mem.tidy_decline(proposal_id, scope=scope, cwd=where),
            render.tidy_decision,
            Where(scope, cwd),
        )


# Argument names still accepted for one release but no longer listed (deprecated).
# The rarely used remember fields are listed grouped under `more`; flat, they still work.
ALIASES: dict[str, frozenset[str]] = {"remember": MORE_FIELDS}


def unwrap(doc: str) -> str:
    """A docstring as the tool description: paragraphs kept, source line breaks dropped."""
    return "\n\n".join(" ".join(part.split()) for part in inspect.cleandoc(doc).split("\n\n"))


def make_tool(fn: Callable[..., Any]) -> Tool:
    name = fn.__name__
    return Tool.from_function(
        fn,
        name=name,
        description=unwrap(fn.__doc__ or ""),
        annotations=tool_annotations(name),
    )


def collect_tools(binding: Binding) -> list[Tool]:
    from cairn.adapters.mcp_deprecated_tools import DeprecatedToolset
    from cairn.adapters.mcp_lesson_tools import LessonToolset
    from cairn.adapters.mcp_session_tools import SessionToolset

    methods: list[Callable[..., Any]] = []
    groups = (MemoryTools, SessionToolset, LessonToolset, DeprecatedToolset)
    for group in (make(binding) for make in groups):
        methods += [
            getattr(group, name)
            for name, value in vars(type(group)).items()
            if inspect.iscoroutinefunction(value) and not name.startswith("_")
        ]
    return [make_tool(method) for method in methods]
