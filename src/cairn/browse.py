"""Browsing: what the app lists. Scopes with their counts, pages of memories (newest first, or
in recall's ranking when there is a query), sessions with their outcomes, writes over time.

A page of a plain list is a keyset page (`before_id`), so page 4000 of a large store costs what
page 1 does. A searched list is recall's own ranking (`ranking.recall.retrieve_noting`, no cut)
over at most `MAX_RANKED` memories, paged by offset. Browsing is a person looking, not an agent
recalling: it records no recall event and counts no access, so the hit rates stay the agents'.

Citation health is computed, not stored (the cited file is read now), so a citation filter
checks memories page by page and stops after `MAX_CHECKED` of them; the page then says where to
go on from (`next_cursor`) even when it holds fewer items than asked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from itertools import islice
from pathlib import Path

from cairn.code.records import CitationCheck
from cairn.code.sourceref import inside_root
from cairn.context import Context
from cairn.errors import InvalidInput
from cairn.models import MEMORY_TYPES, Memory
from cairn.ranking.recall import RecallQuery, retrieve_noting
from cairn.records.code import CitationRow
from cairn.records.sessions import Episode, Session
from cairn.refusal import check_query
from cairn.scope import GLOBAL
from cairn.store.base import COUNT_LIMIT, MemoryFilter
from cairn.tags import normalise_tags

PAGE_SIZE = 25
MAX_PAGE_SIZE = 100
MAX_RANKED = 200  # a searched list pages through recall's best 200
MAX_CHECKED = 2000  # memories one citation-filtered page may check
LIST_STATUSES = ("active", "resting")
CITATIONS = ("same", "changed", "gone", "unchecked")
MAX_CITED_LINES = 40
MAX_SESSIONS = 200

Checker = Callable[[Memory], CitationCheck]


@dataclass(frozen=True, slots=True)
class ListRequest:
    """A validated list request: which memories, in which order, from where on."""

    scopes: tuple[str, ...]
    query: str | None = None
    types: tuple[str, ...] | None = None
    tags: tuple[str, ...] | None = None
    statuses: tuple[str, ...] = LIST_STATUSES
    citation: str | None = None
    cursor: int | None = None
    size: int = PAGE_SIZE

    @property
    def filt(self) -> MemoryFilter:
        return MemoryFilter(
            scopes=self.scopes, statuses=self.statuses, types=self.types, tags=self.tags
        )


@dataclass(frozen=True, slots=True)
class Listed:
    memory: Memory
    citation: str
    citation_lines: tuple[int, int] | None = None
    score: float | None = None  # recall's score, when the list was searched


@dataclass(frozen=True, slots=True)
class MemoryPage:
    scope: str
    items: tuple[Listed, ...]
    total: int | None  # how many match (None for a citation filter, which is not counted)
    next_cursor: str | None  # pass as `cursor` for the next page; None on the last page
    query: str | None = None
    ranked: bool = False
    at_least: bool = False  # the count stopped at `COUNT_LIMIT`: at least `total` match


@dataclass(frozen=True, slots=True)
class ScopeCounts:
    scope: str
    total: int
    by_type: dict[str, int]
    by_status: dict[str, int]


@dataclass(frozen=True, slots=True)
class SessionRow:
    session: Session
    episode: Episode | None


@dataclass(frozen=True, slots=True)
class DayCount:
    day: date
    type: str
    count: int


@dataclass(frozen=True, slots=True)
class CitedLines:
    path: str
    start: int
    lines: tuple[str, ...]


def check_request(
    scopes: tuple[str, ...],
    *,
    query: str | None,
    types: Sequence[str] | None,
    tags: Sequence[str] | None,
    statuses: Sequence[str] | None,
    citation: str | None,
    cursor: str | int | None,
    size: int,
) -> ListRequest:
    """The list request, or InvalidInput naming the argument that is wrong."""
    text = query.strip() if isinstance(query, str) and query.strip() else None
    if text is not None:
        check_query(text, field="query")
    return ListRequest(
        scopes=scopes,
        query=text,
        types=_choices(types, MEMORY_TYPES, "type"),
        tags=normalise_tags(tags) if tags else None,
        statuses=_choices(statuses, LIST_STATUSES, "status") or LIST_STATUSES,
        citation=_citation(citation),
        cursor=_cursor(cursor),
        size=_size(size),
    )


def _choices(
    given: Sequence[str] | None, allowed: Sequence[str], name: str
) -> tuple[str, ...] | None:
    if not given:
        return None
    wrong = [g for g in given if g not in allowed]
    if wrong:
        raise InvalidInput(
            f"{name} {wrong[0]!r} is not one of {', '.join(allowed)}; pick from those."
        )
    return tuple(dict.fromkeys(given))


def _citation(value: str | None) -> str | None:
    if value in (None, ""):
        return None
    if value not in CITATIONS:
        raise InvalidInput(f"citation {value!r} is not one of {', '.join(CITATIONS)}.")
    return value


def _cursor(value: str | int | None) -> int | None:
    if value in (None, ""):
        return None
    text = str(value)
    if not text.isascii() or not text.isdigit() or len(text) > 12:
        raise InvalidInput(f"cursor {text[:20]!r} is not a page cursor; follow the next link.")
    return int(text)


def _size(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PAGE_SIZE:
        raise InvalidInput(f"page size {value!r} is out of range; give 1 to {MAX_PAGE_SIZE}.")
    return value


def list_memories(ctx: Context, request: ListRequest, scope: str, checker: Checker) -> MemoryPage:
    if request.query is not None:
        return _ranked(ctx, request, scope, checker)
    if request.citation is None:
        found = ctx.store.page_memories(
            request.filt, before_id=request.cursor, limit=request.size + 1
        )
        items = tuple(_listed(m, checker) for m in found[: request.size])
        more = len(found) > request.size
        total = ctx.store.count_memories(request.filt, at_most=COUNT_LIMIT)
        return MemoryPage(
            scope=scope,
            items=items,
            total=total,
            next_cursor=str(items[-1].memory.id) if more and items else None,
            at_least=total >= COUNT_LIMIT,
        )
    return _by_citation(ctx, request, scope, checker)


def _by_citation(ctx: Context, request: ListRequest, scope: str, checker: Checker) -> MemoryPage:
    # "unchecked" includes memories citing nothing; the other statuses need a source_ref.
    cited_only = request.citation != "unchecked"
    kept: list[Listed] = []
    before, checked, exhausted = request.cursor, 0, False
    while len(kept) < request.size and checked < MAX_CHECKED:
        batch = ctx.store.page_memories(
            request.filt, before_id=before, limit=request.size * 4, cited_only=cited_only
        )
        if not batch:
            exhausted = True
            break
        for memory in batch:
            checked += 1
            before = memory.id
            listed = _listed(memory, checker)
            if listed.citation == request.citation:
                kept.append(listed)
                if len(kept) == request.size:
                    break
    return MemoryPage(
        scope=scope,
        items=tuple(kept),
        total=None,
        next_cursor=None if exhausted or before is None else str(before),
    )


def _ranked(ctx: Context, request: ListRequest, scope: str, checker: Checker) -> MemoryPage:
    assert request.query is not None
    offset = request.cursor or 0
    ranked, _ = retrieve_noting(
        ctx, RecallQuery(text=request.query, filt=request.filt, limit=MAX_RANKED, cut=False)
    )
    # A score of 0 is recall saying "unrelated" (no shared word, no similarity): not a match.
    listed = [
        replace(_listed(s.memory, checker), score=round(s.score, 4)) for s in ranked if s.score > 0
    ]
    if request.citation is not None:
        listed = [item for item in listed if item.citation == request.citation]
    end = offset + request.size
    return MemoryPage(
        scope=scope,
        items=tuple(listed[offset:end]),
        total=len(listed),
        next_cursor=str(end) if end < len(listed) else None,
        query=request.query,
        ranked=True,
    )


def _listed(memory: Memory, checker: Checker) -> Listed:
    checked = checker(memory)
    return Listed(memory=memory, citation=checked.status, citation_lines=checked.lines)


def scope_counts(ctx: Context) -> list[ScopeCounts]:
    """Every scope with memories, `global` first, then by size."""
    totals = ctx.store.count_by("scope", None)
    out = [
        ScopeCounts(
            scope=name,
            total=total,
            by_type=ctx.store.count_by("type", [name]),
            by_status=ctx.store.count_by("status", [name]),
        )
        for name, total in totals.items()
    ]
    return sorted(out, key=lambda c: (c.scope != GLOBAL, -c.total, c.scope))


def sessions_of(ctx: Context, scopes: Sequence[str], limit: int = MAX_SESSIONS) -> list[SessionRow]:
    """The scopes' sessions, newest first, each with its episode (outcome) once closed."""
    opened = ctx.store.events_of_kind(["activate"], list(scopes))
    ids = list(dict.fromkeys(e.session_id for e in reversed(opened) if e.session_id))[:limit]
    episodes = {ep.session_id: ep for ep in ctx.store.episodes_for_sessions(ids)}
    rows = []
    for session_id in ids:
        session = ctx.store.get_session(session_id)
        if session is not None:
            rows.append(SessionRow(session, episodes.get(session_id)))
    return rows


def writes_by_day(ctx: Context, scopes: Sequence[str] | None) -> list[DayCount]:
    return [DayCount(d, t, n) for d, t, n in ctx.store.memory_days(scopes)]


def cited_lines(row: CitationRow | None, checked: CitationCheck) -> CitedLines | None:
    """The cited lines as they read now, when the check found them in a checkout."""
    if row is None or row.path is None or checked.lines is None or checked.checked_in is None:
        return None
    target = inside_root(Path(checked.checked_in), row.path)
    if target is None:
        return None
    start, end = checked.lines
    end = min(end, start + MAX_CITED_LINES - 1)
    try:
        with target.open(encoding="utf-8", errors="replace") as handle:
            text = [line.rstrip("\n") for line in islice(handle, start - 1, end)]
    except OSError:
        return None
    return CitedLines(path=row.path, start=start, lines=tuple(text))
