"""Choosing the lessons for one call: candidates, filters, ranking, threshold and budget.

Candidates come from two lookups that never embed anything (so the hook path loads no model):
citations of current memories on the paths the call touches (`Store.citations_on_paths`), and
lexical candidates among warnings, constraints, lessons and instructions for the words of the
command, the file names and the URL hosts (`Store.lexical_candidates`, the same index recall
uses), re-read in full and matched exactly (`matching`). Procedures of the scope are matched by
their context.

Filters, in order: a memory that is retired or replaced, resting (idle, or contradicted twice
without a confirmation) is never a lesson unless pinned; a match under `THRESHOLD` is not
said; a mute rule of the scope silences it; a lesson already given in this session for the
same target (and the same kind: a note, or the question of an edit on cited lines) is not
given again.

Ranking is by relevance (the match's strength, scaled by type for citations) times a bounded
quality factor: the memory's weight (×0.75 … ×1.25), pinned (×1.15) and its acts (the square
root of recall's acts multiplier, ×0.7 … ×1.4). Quality orders lessons; it never lets an
irrelevant one through. At most `limit` lessons, within `BUDGET_CHARS` (about 300 tokens).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from cairn.code.citations import check
from cairn.context import Context
from cairn.lessons import matching
from cairn.lessons.locate import ToolCall
from cairn.lessons.matching import LESSON_TYPES, SOURCE_ROOTS, THRESHOLD, Match
from cairn.lessons.models import Lesson
from cairn.lessons.mutes import muting_rule
from cairn.lessons.paths import fixed_prefix, is_glob
from cairn.lessons.phrases import NO_COMMAND
from cairn.lifecycle import CONTRADICTIONS_TO_REST
from cairn.models import Memory
from cairn.ranking.lexical import STOPWORDS, analyze
from cairn.ranking.signals import acts_multiplier
from cairn.records.code import CitationRow
from cairn.records.lessons import MuteRule
from cairn.records.sessions import Procedure
from cairn.store.base import MemoryFilter

BUDGET_CHARS = 1_200
SUMMARY_CHARS = 200
LEXICAL_POOL = 200
PROCEDURE_POOL = 50
MAX_TERMS = 40
_HOST_NOISE = frozenset({"www", "com", "org", "net", "io", "dev", "api", "http", "https"})

GivenKey = tuple[str, str, str]  # (subject ref, target, note | question)


@dataclass(frozen=True, slots=True)
class Selection:
    lessons: tuple[Lesson, ...]
    repeated: int
    muted: int


@dataclass(frozen=True, slots=True)
class _Candidate:
    ref: str
    kind: str
    type: str
    summary: str
    match: Match
    rank: float
    tags: tuple[str, ...] = ()
    cited_path: str | None = None
    source_ref: str | None = None
    pinned: bool = False


def select(
    ctx: Context,
    call: ToolCall,
    scopes: Sequence[str],
    checkout: Path | None,
    *,
    given: set[GivenKey],
    rules: Sequence[MuteRule],
    limit: int,
) -> Selection:
    candidates = _memory_candidates(ctx, call, scopes, checkout)
    candidates += _procedure_candidates(ctx, call, scopes)
    candidates.sort(key=lambda c: (-c.rank, c.ref))
    kept: list[Lesson] = []
    repeated = muted = 0
    for candidate in candidates:
        if candidate.match.strength < THRESHOLD:
            continue
        paths = (candidate.match.path, candidate.cited_path)
        if muting_rule(rules, type=candidate.type, tags=candidate.tags, paths=paths):
            muted += 1
            continue
        if _given(candidate, given):
            repeated += 1
            continue
        if len(kept) < limit:
            kept.append(_lesson(candidate))
    return Selection(tuple(_budgeted(kept)), repeated, muted)


def given_key(lesson: Lesson) -> GivenKey:
    return lesson.ref, lesson.target, "question" if lesson.question else "note"


def _given(candidate: _Candidate, given: set[GivenKey]) -> bool:
    """Already said: the same question, or for a note, anything about the same target (a
    question about a file covers a later note about it; a note does not cover the question)."""
    ref, target = candidate.ref, candidate.match.target
    if candidate.match.question:
        return (ref, target, "question") in given
    return (ref, target, "note") in given or (ref, target, "question") in given


# Memories ----------------------------------------------------------------------------------------
def _memory_candidates(
    ctx: Context, call: ToolCall, scopes: Sequence[str], checkout: Path | None
) -> list[_Candidate]:
    rows = _citations(ctx, call, scopes)
    lexical = _lexical_ids(ctx, call, scopes)
    ids = list(dict.fromkeys([r.memory_id for r in rows] + lexical))
    if not ids:
        return []
    memories = {m.id: m for m in ctx.store.get_memories(ids) if eligible(m)}
    by_memory: dict[int, list[Match | None]] = {}
    for row in rows:
        memory = memories.get(row.memory_id)
        if memory is None:
            continue
        found = matching.citation_match(call, row, memory.ref, lambda r: check(r, checkout))
        factor = matching.CITATION_TYPE_FACTOR.get(memory.type, 0.85)
        scaled = replace(found, strength=round(found.strength * factor, 4)) if found else None
        by_memory.setdefault(memory.id, []).append(scaled)
    for memory_id in lexical:
        memory = memories.get(memory_id)
        if memory is not None:
            by_memory.setdefault(memory_id, []).append(matching.text_match(call, memory))
    cited = {row.memory_id: row.path for row in rows}
    out: list[_Candidate] = []
    for memory_id, matches in by_memory.items():
        chosen = matching.best(matches)
        if chosen is not None:
            out.append(_from_memory(memories[memory_id], chosen, cited.get(memory_id)))
    return out


def eligible(memory: Memory) -> bool:
    """Whether a memory may be given as a lesson at all (before any matching)."""
    if memory.until is not None or memory.status not in ("active", "resting"):
        return False
    if memory.pinned:
        return True
    if memory.status == "resting":
        return False
    return not (memory.contradicted >= CONTRADICTIONS_TO_REST and memory.confirmed == 0)


def _from_memory(memory: Memory, match: Match, cited_path: str | None) -> _Candidate:
    return _Candidate(
        memory.ref, "memory", memory.type, _clip(memory.summary), match,
        match.strength * quality(memory), memory.tags, cited_path, memory.source_ref,
        memory.pinned,
    )  # fmt: skip


def quality(memory: Memory) -> float:
    weight = min(1.0, max(0.0, memory.weight))
    acts = math.sqrt(acts_multiplier(memory.confirmed, memory.contradicted))
    return (0.75 + 0.5 * weight) * (1.15 if memory.pinned else 1.0) * acts


def _citations(ctx: Context, call: ToolCall, scopes: Sequence[str]) -> list[CitationRow]:
    if not call.targets:
        return []
    exact: list[str] = []
    within: list[str] = []
    for target in call.targets:
        exact.extend(target.ancestors())
        if target.is_glob:
            prefix = fixed_prefix(target.path)
            if prefix:
                within.append(prefix)
        elif target.is_dir:
            within.append(target.path)
            exact.append(target.path.strip("/"))  # a citation of the directory itself
        else:
            exact.append(target.path)
    return ctx.store.citations_on_paths(scopes, exact, within)


def _lexical_ids(ctx: Context, call: ToolCall, scopes: Sequence[str]) -> list[int]:
    terms = lexical_terms(call)
    if not terms:
        return []
    filt = MemoryFilter(scopes=tuple(scopes), statuses=("active", "resting"), types=LESSON_TYPES)
    return [row.memory_id for row in ctx.store.lexical_candidates(filt, terms, LEXICAL_POOL)]


def lexical_terms(call: ToolCall) -> list[str]:
    """The analysed words a memory about this call would hold: the programs and subcommands,
    long flags, file and directory names, defined symbols and URL hosts."""
    words: list[str] = []
    for inv in call.invocations:
        if inv.program not in NO_COMMAND:
            words += [inv.program, *inv.words[:1]]
            words += [flag[2:] for flag in inv.flags if flag.startswith("--")]
    for target in call.targets:
        parts = [p for p in target.path.split("/") if p and not is_glob(p)]
        if parts and not target.is_dir:
            words.append(PurePosixPath(parts[-1]).stem)
            parts = parts[:-1]
        words += [p for p in parts if p not in SOURCE_ROOTS]
    words += call.symbols
    for url in call.urls:
        host = url.split("://", 1)[-1].split("/", 1)[0]
        words += [part for part in host.split(".") if part.lower() not in _HOST_NOISE]
    terms = [t for w in words for t in analyze(w) if t not in STOPWORDS and len(t) > 1]
    return list(dict.fromkeys(t for t in terms if not t.isdigit()))[:MAX_TERMS]


# Procedures --------------------------------------------------------------------------------------
def _procedure_candidates(ctx: Context, call: ToolCall, scopes: Sequence[str]) -> list[_Candidate]:
    if not call.targets and not call.invocations:
        return []
    out: list[_Candidate] = []
    for procedure in ctx.store.procedures_in(scopes, as_of=None, limit=PROCEDURE_POOL):
        found = matching.procedure_match(call, procedure)
        if found is not None:
            out.append(_from_procedure(procedure, found))
    return out


def _from_procedure(procedure: Procedure, match: Match) -> _Candidate:
    helped, harmed = procedure.evidence.helped, procedure.evidence.harmed
    rank = match.strength * (1.0 + 0.1 * min(3, helped) - 0.2 * min(2, harmed))
    summary = _clip(
        f"{procedure.goal}: {procedure.summary}" if procedure.summary else procedure.goal
    )
    return _Candidate(procedure.ref, "procedure", "procedure", summary, match, rank)


# Output ------------------------------------------------------------------------------------------
def _lesson(candidate: _Candidate) -> Lesson:
    m = candidate.match
    return Lesson(
        ref=candidate.ref, kind=candidate.kind, type=candidate.type, summary=candidate.summary,
        why=m.why, target=m.target, score=round(candidate.rank, 4), question=m.question,
        source_ref=candidate.source_ref, pinned=candidate.pinned,
    )  # fmt: skip


def _budgeted(lessons: Sequence[Lesson]) -> list[Lesson]:
    """Lessons in order while their text fits `BUDGET_CHARS`; the first always stays."""
    kept: list[Lesson] = []
    used = 0
    for lesson in lessons:
        cost = len(lesson.render()) + 1
        if kept and used + cost > BUDGET_CHARS:
            break
        kept.append(lesson)
        used += cost
    return kept


def render(tool: str, lessons: Sequence[Lesson]) -> str:
    if not lessons:
        return ""
    noun = "lesson" if len(lessons) == 1 else "lessons"
    head = f"cairn memory: {len(lessons)} {noun} before this {tool} call"
    return "\n".join([head + ":", *(lesson.render() for lesson in lessons)])


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SUMMARY_CHARS else flat[: SUMMARY_CHARS - 1] + "…"
