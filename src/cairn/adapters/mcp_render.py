"""The text half of every MCP tool result: compact lines an agent reads in its context window.

Each tool result carries the full record as structured content (`cairn.models.to_jsonable`)
and this text beside it. The text is what most clients put in front of the model, so it is
budgeted: one line per hit, summaries cut to `SUMMARY_CHARS`, so a default recall of 8 hits
stays well under 600 tokens. Anything longer is in the structured result or a `get_memory`
call away.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cairn.code.records import Proposal, TidyDecision
from cairn.models import (
    GetResult,
    Hit,
    MemoryRecord,
    ProcedureHit,
    RecallResult,
    RememberBatch,
    RememberResult,
)
from cairn.retrieval_tools import QueryResult
from cairn.sessions.models import (
    BranchBrief,
    Brief,
    BriefMemory,
    CommitResult,
    EpisodesResult,
    FeedbackResult,
    HistoryResult,
    TraceWrite,
)
from cairn.stats import page_lines

SUMMARY_CHARS = 120


def clip(text: str, limit: int = SUMMARY_CHARS) -> str:
    """One line of at most `limit` characters; whitespace runs (newlines too) become one space."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def remember(result: RememberResult | RememberBatch) -> str:
    if isinstance(result, RememberBatch):
        return "\n".join(_batch_line(item.index, item.data, item.error) for item in result.results)
    return _remembered(result)


def _remembered(result: RememberResult) -> str:
    similar = f" (similarity {result.similarity:.2f})" if result.similarity is not None else ""
    update = (
        f"; may update {result.may_update} ({result.changed}), both kept"
        if result.may_update
        else ""
    )
    return (
        f"{result.memory_id} {result.disposition}{similar} [{result.type}] {result.scope}"
        f" ({result.source_event_id}){update}"
    )


def _batch_line(index: int, data: RememberResult | None, error: Any) -> str:
    if data is not None:
        return f"{index}: {_remembered(data)}"
    return f"{index}: error {error.code}: {error.message}"


def hit_line(hit: Hit) -> str:
    flags = " weak" if hit.weak else ""
    flags += " resting" if hit.resting else ""
    flags += " stale-vector" if hit.stale_vector else ""
    if hit.pathway != "direct":
        flags += f" {hit.pathway}" + (f" via {hit.via}" if hit.via else "")
    if hit.conflicts_with:
        flags += f" conflicts with {','.join(hit.conflicts_with)}"
    until = f" until {hit.until:%Y-%m-%d}" if hit.until else ""
    source = f" ({hit.source_ref})" if hit.source_ref else ""
    kind = f"[{hit.type}]" if hit.type else f"[{hit.kind}]"
    return (
        f"{hit.ref} {hit.score:.3f} {kind}{flags}{until} {clip(hit.summary)}{source}"
        f" citation:{hit.citation}"
    )


def procedure_line(proc: ProcedureHit) -> str:
    tally = proc.evidence
    return (
        f"{proc.procedure_id} [procedure] {clip(proc.goal, 60)}: {clip(proc.summary, 80)}"
        f" (last {proc.outcome}; helped {tally.helped}, harmed {tally.harmed})"
    )


def recall(result: RecallResult) -> str:
    notice = [result.needs_reindex.message] if result.needs_reindex else []
    if not result.hits and not result.procedures:
        empty = f"nothing found in {result.scope} for {result.query!r} ({result.retrieval_id})"
        return "\n".join([empty, *notice])
    lines = [*notice, *(hit_line(hit) for hit in result.hits)]
    lines += [procedure_line(proc) for proc in result.procedures]
    when = f", as of {result.as_of:%Y-%m-%d}" if result.as_of else ""
    tail = f"({len(result.hits)} hits{when}, {result.retrieval_id}"
    if result.session_id:
        tail += "; give feedback on it before commit"
    return "\n".join([*lines, tail + ")"])


def nearest(found: Sequence[Hit]) -> str:
    if not found:
        return "no memories in this scope yet"
    return "\n".join(hit_line(hit) for hit in found)


def queried(result: QueryResult) -> str:
    lines = nearest(result.hits)
    if result.retrieval_id:
        lines += f"\n({result.retrieval_id}; give feedback on it before commit)"
    return lines


def records(result: GetResult) -> str:
    blocks = [_record(record) for record in result.records]
    if result.unknown:
        blocks.append(f"unknown: {', '.join(result.unknown)}")
    return "\n".join(blocks) or "no records"


def _record(record: MemoryRecord) -> str:
    m = record.memory
    lines = [
        f"{m.ref} [{m.type}] {m.status}{' pinned' if m.pinned else ''} scope={m.scope}"
        f" citation:{record.citation}",
        f"  written {m.written_at:%Y-%m-%d %H:%M}Z occurred {m.occurred_at:%Y-%m-%d}"
        + (f" until {m.until:%Y-%m-%d %H:%M}Z" if m.until else ""),
        f"  source_ref: {m.source_ref or '-'}  tags: {', '.join(m.tags) or '-'}",
        f"  reason: {m.reason or '-'}",
        f"  cited {m.cited} confirmed {m.confirmed} contradicted {m.contradicted}",
    ]
    lines += link_lines(record)
    lines += [f"  | {line}" for line in m.content.splitlines() or [""]]
    lines += [
        f"  replaced {e.ref}"
        + (f" (until {e.until:%Y-%m-%d})" if e.until else "")
        + f": {clip(e.summary)}"
        for e in record.replaced
    ]
    lines += [f"  replaced by {e.ref}: {clip(e.summary)}" for e in record.replaced_by_chain]
    return "\n".join(lines)


def link_lines(record: MemoryRecord) -> list[str]:
    """Why a memory rests and which memories it may update or be updated by (CLI and MCP)."""
    links = [
        ("retired because", record.retire_reason),
        ("may update", ", ".join(record.may_update)),
        ("may be updated by", ", ".join(record.may_be_updated_by)),
    ]
    return [f"  {label}: {value}" for label, value in links if value]


def stats(result: Mapping[str, Any]) -> str:
    store = result["store"]
    lines = [f"{result['memories']} memories in {store['location']} ({store['size_bytes']} bytes)"]
    for title in ("by_type", "by_status", "by_scope", "vectors"):
        counts: Mapping[str, Any] = result.get(title) or {}
        lines.append(f"{title}: " + (", ".join(f"{k}={v}" for k, v in counts.items()) or "-"))
    lines += page_lines(result.get("pages"))
    return "\n".join(lines)


def labelled_memories(result: Brief) -> tuple[tuple[str, tuple[BriefMemory, ...]], ...]:
    """The brief's memories by group, under the label each line of the group starts with."""
    return (
        ("pinned", result.pinned),
        ("constraint", result.constraints),
        ("warning", result.warnings),
        ("instruction", result.instructions),
        ("preference", result.preferences),
    )


def brief(result: Brief) -> str:
    lines = [f"session {result.session_id} in {result.scope}: {clip(result.task)}"]
    for label, memories in labelled_memories(result):
        lines += [f"{label}: {m.memory_id} {clip(m.summary)}" for m in memories]
    lines += branch_lines(result.branch)
    lines += [hit_line(hit) for hit in result.memories]
    lines += [procedure_line(proc) for proc in result.procedures]
    if result.more_available:
        lines.append("more_available: recall finds more")
    if result.lesson_mutes:
        muted = "; ".join(f"{r.kind} {r.value}" for r in result.lesson_mutes)
        lines.append(f"lessons muted for: {muted}")
    if result.refs:
        lines.append(f"({result.retrieval_id}: give feedback on it before commit)")
    return "\n".join(lines)


def branch_lines(branch: BranchBrief) -> list[str]:
    if not branch.branch:
        return []
    goal = f" (goal: {clip(branch.goal, 80)})" if branch.goal else ""
    lines = [f"branch {branch.branch}{goal}"]
    lines += [f"open: {item.ref} [{item.type}] {clip(item.summary)}" for item in branch.open_items]
    if branch.commits:
        lines.append(
            "commits: " + "; ".join(f"{c.sha[:8]} {clip(c.subject, 60)}" for c in branch.commits)
        )
    return lines


def feedback(result: FeedbackResult) -> str:
    pending = ", ".join(result.pending)
    noun = "assessment" if result.recorded == 1 else "assessments"
    return f"{result.recorded} {noun} recorded on {result.retrieval_id}; " + (
        f"still waiting for feedback: {pending}" if pending else "nothing waits for feedback"
    )


def closed(result: CommitResult) -> str:
    parts = [f"session {result.session_id} {result.status}: episode {result.episode_id}"]
    if result.procedure_id:
        parts.append(f"procedure {result.procedure_id}")
    if result.cited:
        parts.append(f"cited {', '.join(result.cited)}")
    return "; ".join(parts)


def trace_write(result: TraceWrite) -> str:
    return f"{result.event_id} at {result.at:%Y-%m-%d %H:%M:%S} in {result.scope}"


def trace_lines(result: EpisodesResult | HistoryResult) -> str:
    return result.text or f"the trace of {result.scope} is empty there"


def proposals(found: Sequence[Proposal]) -> str:
    if not found:
        return "nothing to tidy"
    return "\n".join(f"{p.id} {p.kind}: {clip(p.summary)} ({', '.join(p.refs)})" for p in found)


def tidy_decision(result: TidyDecision) -> str:
    line = f"{result.id} {result.kind} {result.status}"
    if result.changed:
        line += f": {', '.join(result.changed)}"
    return line + (f" (wrote {result.path})" if result.path else "")
