"""`activate`: open a session and build its brief within a character budget.

The brief holds, in this order of importance (which is also the order the budget is spent
in): pinned memories, constraints, warnings, the branch brief, the memories and procedures most
relevant to the task (the recall pipeline on the task, with the task context as an extra
cue), then instructions and preferences. Within a section memories go by weight times the
feedback multiplier, newest first on ties. A memory shows once, in the first section that
holds it. What does not fit the budget (`Settings.brief_budget_chars`, a token-ish measure
of roughly four characters a token) is left out and `more_available` says so, as it does when
a section had more than it shows; `recall` in the session fetches the rest.

Everything the brief shows is one retrieval of the session (`retrieval_id`), so feedback can
name brief items and `commit` waits for it like for any recall.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from cairn.code.brief import branch_brief as full_branch_brief
from cairn.context import Context
from cairn.errors import InvalidInput
from cairn.models import STANDING_SECTIONS, Hit, Memory, NewEvent, ProcedureHit
from cairn.ranking.feedback import memory_feedback_multiplier
from cairn.ranking.recall import RecallQuery, Scored, retrieve
from cairn.records.sessions import Retrieval, Session
from cairn.refusal import check_no_secrets
from cairn.scope import visible_scopes
from cairn.sessions.branch import branch_brief
from cairn.sessions.enrich import provenance
from cairn.sessions.ledger import check_context, context_cue, new_session_id, record_retrieval
from cairn.sessions.models import BranchBrief, Brief, BriefMemory, CommitLine
from cairn.sessions.procedures import rank_procedures
from cairn.store.base import MemoryFilter
from cairn.updates import newer_first

SECTION_LIMIT = 10
RELEVANT_LIMIT = 8
CONTENT_PREVIEW = 500
ITEM_OVERHEAD = 40  # what a line's ref, type and punctuation cost beside its text
MAX_TASK_CHARS = 2_000


@dataclass
class _Budget:
    left: int
    dropped: bool = False

    def take(self, cost: int) -> bool:
        if cost > self.left:
            self.dropped = True
            return False
        self.left -= cost
        return True


@dataclass
class _Packed:
    sections: dict[str, list[BriefMemory]] = field(default_factory=dict)
    branch: BranchBrief = field(default_factory=lambda: BranchBrief(None))
    memories: list[Hit] = field(default_factory=list)
    procedures: list[ProcedureHit] = field(default_factory=list)


def activate(
    ctx: Context,
    task: object,
    scope: str,
    cwd: Path | None,
    task_context: object,
    standing: bool = True,
) -> Brief:
    """Open a session and pack its brief; without `standing` the brief leaves out what the
    agent's session-start brief already gave (the standing sections and the branch)."""
    text = _check_task(task)
    context = check_context(task_context)
    branch = _branch(ctx, cwd, scope, text) if standing else BranchBrief(None)
    session = Session(
        new_session_id(),
        scope,
        text,
        context,
        "open",
        ctx.clock(),
        integration=ctx.integration,
        branch=branch.branch,
    )
    scopes = visible_scopes(scope)
    sections, more = _sections(ctx, scopes) if standing else (_no_sections(), False)
    cues = context_cue(text, context)
    ranked = retrieve(
        ctx, RecallQuery(text, MemoryFilter(scopes=scopes), RELEVANT_LIMIT + 1, also=cues)
    )
    more = more or len(ranked) > RELEVANT_LIMIT
    relevant, conflicts = newer_first(ctx, ranked, MemoryFilter(scopes=scopes), RELEVANT_LIMIT)
    hits = _hits(ctx, relevant, scope, conflicts)
    procedures = rank_procedures(ctx, (text, *cues), scopes)
    budget = _Budget(ctx.settings.brief_budget_chars)
    packed = _pack(budget, sections, branch, hits, procedures)
    retrieval = _open(ctx, session, _refs(packed))
    s = packed.sections
    return Brief(
        session_id=session.id,
        scope=scope,
        task=text,
        task_context=context,
        retrieval_id=retrieval.ref,
        pinned=tuple(s["pinned"]),
        constraints=tuple(s["constraints"]),
        warnings=tuple(s["warnings"]),
        instructions=tuple(s["instructions"]),
        preferences=tuple(s["preferences"]),
        branch=packed.branch,
        memories=tuple(packed.memories),
        procedures=tuple(packed.procedures),
        more_available=more or budget.dropped,
        budget_chars=ctx.settings.brief_budget_chars,
        used_chars=ctx.settings.brief_budget_chars - budget.left,
        lesson_mutes=tuple(ctx.store.mute_rules(scopes)),
    )


def _open(ctx: Context, session: Session, shown: list[str]) -> Retrieval:
    """Store the session, its activate event and the brief as its first retrieval."""
    with ctx.store.transaction():
        ctx.store.add_session(session)
        payload = {"task": session.task, "task_context": dict(session.task_context), "refs": shown}
        event_id = ctx.store.add_event(
            NewEvent(
                "activate",
                session.scope,
                session.id,
                session.opened_at,
                ctx.integration,
                None,
                payload,
            )
        )
        return record_retrieval(ctx, session, event_id, "activate", shown)


def _check_task(task: object) -> str:
    if not isinstance(task, str) or not task.strip():
        raise InvalidInput("task is blank; say in a sentence what this session is for.")
    check_no_secrets(task, field="task")  # as given: collapsing lines would join a split token
    text = " ".join(task.split())
    if len(text) > MAX_TASK_CHARS:
        raise InvalidInput(
            f"task is {len(text)} characters; keep it under {MAX_TASK_CHARS} and put details "
            "in task_context."
        )
    return text


def _sections(ctx: Context, scopes: Sequence[str]) -> tuple[dict[str, list[Memory]], bool]:
    out: dict[str, list[Memory]] = {}
    more = False
    for name, types, pinned in STANDING_SECTIONS:
        found = ctx.store.select_memories(
            scopes, types=types, pinned_only=pinned, limit=SECTION_LIMIT + 1
        )
        more = more or len(found) > SECTION_LIMIT
        found.sort(key=lambda m: (-m.weight * memory_feedback_multiplier(m.evidence), -m.id))
        out[name] = found[:SECTION_LIMIT]
    return out, more


def _no_sections() -> dict[str, list[Memory]]:
    return {name: [] for name, _, _ in STANDING_SECTIONS}


def _hits(
    ctx: Context, ranked: Sequence[Scored], scope: str, conflicts: Mapping[int, tuple[str, ...]]
) -> list[Hit]:
    sources = provenance(ctx, [s.memory for s in ranked], scope)
    return [
        Hit.of_memory(
            scored.memory,
            scored.score,
            preview=CONTENT_PREVIEW,
            weak=scored.weak,
            provenance=sources.get(scored.memory.ref),
            conflicts_with=conflicts.get(scored.memory.id, ()),
        )
        for scored in ranked
    ]


def _pack(
    budget: _Budget,
    sections: Mapping[str, Sequence[Memory]],
    branch: BranchBrief,
    hits: Sequence[Hit],
    procedures: Sequence[ProcedureHit],
) -> _Packed:
    packed = _Packed(sections={name: [] for name, _, _ in STANDING_SECTIONS})
    seen: set[int] = set()

    def add_section(name: str) -> None:
        for memory in sections[name]:
            item = _brief_memory(memory)
            if memory.id not in seen and budget.take(len(item.content) + ITEM_OVERHEAD):
                packed.sections[name].append(item)
                seen.add(memory.id)

    for name in ("pinned", "constraints", "warnings"):
        add_section(name)
    packed.branch = _pack_branch(budget, branch)
    for hit in hits:
        memory_id = int(hit.ref.removeprefix("mem_"))
        if memory_id not in seen and budget.take(len(hit.content or hit.summary) + ITEM_OVERHEAD):
            packed.memories.append(hit)
            seen.add(memory_id)
    for procedure in procedures:
        if budget.take(_procedure_cost(procedure)):
            packed.procedures.append(procedure)
    for name in ("instructions", "preferences"):
        add_section(name)
    return packed


def _branch(ctx: Context, cwd: Path | None, scope: str, task: str) -> BranchBrief:
    """The full branch brief (goal, open items, sessions, commits since the base branch); the
    minimal one (branch and latest commits) where there is no branch to describe, e.g. on a
    detached HEAD."""
    full = full_branch_brief(ctx, cwd, scope, session_goal=task)
    if full is None:
        return branch_brief(cwd)
    return BranchBrief(
        full.branch,
        tuple(CommitLine(c.sha[:12], c.subject) for c in full.recent_commits),
        goal=full.goal,
        open_items=full.open_items,
        recent_sessions=full.recent_sessions,
    )


def _pack_branch(budget: _Budget, branch: BranchBrief) -> BranchBrief:
    if branch.branch is None and not branch.commits:
        return branch
    if not budget.take(len(branch.branch or "") + ITEM_OVERHEAD):
        return BranchBrief(None)
    goal = branch.goal if branch.goal and budget.take(len(branch.goal)) else None
    items = []
    for item in branch.open_items:
        if not budget.take(len(item.summary) + ITEM_OVERHEAD):
            break
        items.append(item)
    kept: list[CommitLine] = []
    for commit in branch.commits:
        if not budget.take(len(commit.sha) + len(commit.subject) + 2):
            break
        kept.append(commit)
    return replace(branch, commits=tuple(kept), goal=goal, open_items=tuple(items))


def _procedure_cost(p: ProcedureHit) -> int:
    texts = [p.goal, p.summary, p.outcome_summary, *p.steps, *p.caveats]
    return sum(len(t) for t in texts) + 2 * ITEM_OVERHEAD


def _brief_memory(m: Memory) -> BriefMemory:
    return BriefMemory(
        m.ref, m.type, m.summary, m.content[:CONTENT_PREVIEW], m.pinned, m.scope, m.weight
    )


def _refs(packed: _Packed) -> list[str]:
    refs = [m.memory_id for items in packed.sections.values() for m in items]
    refs += [h.ref for h in packed.memories]
    refs += [p.procedure_id for p in packed.procedures]
    return refs
