"""What a recall adds around its ranked memories: feedback, associations, procedures,
provenance and evidence.

The ranking pipeline (`cairn.ranking.recall`) hands over scored memories; this module applies
the feedback multiplier, appends the memories associated with the direct hits, ranks the
scope's procedures for the same phrasings, says where each memory came from (`provenance`) and
gathers the raw source records under the hits (`evidence`).

Evidence is bounded by `Settings.max_evidence_records` for the whole answer and shared out
round-robin, so every hit gets its first record before any hit gets a second;
`evidence_truncated` says more existed. In `full` mode each record carries its text cut at
`EVIDENCE_CHARS` with a `truncated` flag.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial

from cairn.context import Context
from cairn.errors import InvalidInput
from cairn.models import (
    Event,
    EvidenceRecord,
    Hit,
    Memory,
    ProcedureHit,
    Provenance,
    RecallResult,
)
from cairn.ranking.recall import RecallQuery, Scored
from cairn.records.sessions import Episode, Session
from cairn.sessions.procedures import rank_procedures
from cairn.sessions.relations import RelationsRead, associated

EVIDENCE_MODES = ("references", "full")
EVIDENCE_CHARS = 1_000
SOURCE_EVENT_KINDS = frozenset({"remember", "correct"})
# Associated memories do not count toward `limit` but are bounded: at most this many, or
# `limit` when that is larger.
MIN_ASSOCIATED = 8


@dataclass(frozen=True, slots=True)
class Completed:
    hits: tuple[Hit, ...]
    procedures: tuple[ProcedureHit, ...]
    evidence: tuple[EvidenceRecord, ...]
    evidence_truncated: bool
    evidence_mode: str

    @property
    def refs(self) -> list[str]:
        return [h.ref for h in self.hits] + [p.procedure_id for p in self.procedures]

    def result(
        self, retrieval_id: str, request: RecallQuery, scope: str, session: Session | None
    ) -> RecallResult:
        return RecallResult(
            retrieval_id=retrieval_id,
            query=request.text,
            scope=scope,
            hits=self.hits,
            as_of=request.filt.as_of,
            procedures=self.procedures,
            evidence=self.evidence,
            evidence_mode=self.evidence_mode,
            evidence_truncated=self.evidence_truncated,
            session_id=session.id if session is not None else None,
        )


def check_evidence_mode(value: object) -> str:
    if value not in EVIDENCE_MODES:
        raise InvalidInput(
            f"evidence {value!r} is not a mode; use 'references' (default: metadata of the "
            "source records) or 'full' (adds their text, 1000 characters each)."
        )
    return str(value)


def complete(
    ctx: Context,
    request: RecallQuery,
    ranked: Sequence[Scored],
    scope: str,
    evidence: str,
    make_hit: Callable[[Scored], Hit],
    *,
    explain: bool = False,
    relations: RelationsRead | None = None,
) -> Completed:
    """The whole answer around the ranked memories (which are already cut to `limit`);
    `relations`: those already read around them."""
    ranking = partial(
        rank_procedures,
        ctx,
        (request.text, *request.also),
        request.filt.scopes,
        as_of=request.filt.as_of,
        explain=explain,
    )
    # Procedures depend on the query alone, and the direct hits' events on the hits alone:
    # where the store reads on two connections, both are read beside the associations.
    limit = ctx.settings.max_evidence_records
    beside = ctx.start_read(ranking) if ctx.store.concurrent_reads else None
    early = _start_events(ctx, [s.memory.id for s in ranked], limit)
    direct = [make_hit(s) for s in ranked]
    cap = max(request.limit, MIN_ASSOCIATED)
    scored = [(s.memory, s.score) for s in ranked]
    extra = associated(ctx, scored, request.filt, cap, relations)
    linked = [
        replace(
            make_hit(Scored(a.memory, a.score, parts={"association": a.score})),
            pathway="associated",
            via=a.via.ref,
        )
        for a in extra
    ]
    memories = [s.memory for s in ranked] + [a.memory for a in extra]
    # One read of the memories' newest events serves both the evidence records and (for the
    # source events among them) the provenance.
    events = _memory_events(ctx, [m.id for m in memories], limit, early)
    sources = provenance(ctx, memories, scope, known=events)
    hits = tuple(replace(h, provenance=sources.get(h.ref)) for h in [*direct, *linked])
    procedures = beside.result() if beside is not None else ranking()
    records, truncated = evidence_records(
        ctx, memories, events, full=evidence == "full", limit=limit
    )
    return Completed(hits, tuple(procedures), tuple(records), truncated, evidence)


def provenance(
    ctx: Context,
    memories: Sequence[Memory],
    scope: str,
    *,
    known: Mapping[int, Sequence[Event]] | None = None,
) -> dict[str, Provenance]:
    """Per memory ref: the call that wrote it, the client and version, and a foreign scope.

    `known` holds events already read per memory; only source events not among them are read.
    """
    events = {e.id: e for found in (known or {}).values() for e in found}
    missing = [
        m.source_event_id
        for m in memories
        if m.source_event_id is not None and m.source_event_id not in events
    ]
    events.update((e.id, e) for e in ctx.store.get_events(missing))
    out: dict[str, Provenance] = {}
    for memory in memories:
        event = events.get(memory.source_event_id) if memory.source_event_id else None
        version = event.payload.get("integration_version") if event else None
        out[memory.ref] = Provenance(
            source_kind=event.kind if event else "unknown",
            integration=(event.integration if event else None) or memory.integration,
            integration_version=str(version) if version is not None else None,
            origin_scope=memory.scope if memory.scope != scope else None,
        )
    return out


@dataclass(frozen=True, slots=True)
class _EarlyEvents:
    """The direct hits' newest events, being read on the worker."""

    ids: frozenset[int]
    read: Future[dict[int, list[Event]]]


def _start_events(ctx: Context, ids: Sequence[int], limit: int) -> _EarlyEvents | None:
    if not ids or not ctx.store.concurrent_reads:
        return None
    per = _events_per_memory(limit, len(ids))
    read = partial(ctx.store.events_for_memories, list(ids), limit=per)
    return _EarlyEvents(frozenset(ids), ctx.start_read(read))


def _memory_events(
    ctx: Context, ids: Sequence[int], limit: int, early: _EarlyEvents | None
) -> dict[int, list[Event]]:
    """Each memory's newest events, as many as the round-robin of `evidence_records` can
    take. The direct hits' were read `early` for fewer memories, so with at least as many
    each: their newest are cut to the share of all; the associated memories' are read after."""
    per = _events_per_memory(limit, len(ids))
    if early is None:
        return ctx.store.events_for_memories(list(ids), limit=per)
    found = {memory_id: events[:per] for memory_id, events in early.read.result().items()}
    rest = [memory_id for memory_id in ids if memory_id not in early.ids]
    return found | ctx.store.events_for_memories(rest, limit=per) if rest else found


def _events_per_memory(limit: int, memories: int) -> int:
    # Round-robin takes from every queue before any queue's second record, so no memory can
    # contribute more than this many of the first `limit + 1` records.
    return -(-(limit + 1) // max(1, memories))


def evidence_records(
    ctx: Context,
    memories: Sequence[Memory],
    events: Mapping[int, Sequence[Event]],
    *,
    full: bool,
    limit: int,
) -> tuple[list[EvidenceRecord], bool]:
    """The source records under the memories, shared out round-robin, at most `limit`.

    `events` holds each memory's newest `_events_per_memory(limit, len(memories))` events.
    """
    sessions = list(dict.fromkeys(m.session_id for m in memories if m.session_id is not None))
    episodes: dict[str, list[Episode]] = {}
    for episode in ctx.store.episodes_for_sessions(sessions):
        episodes.setdefault(episode.session_id, []).append(episode)
    queues = [
        _sources(memory, events.get(memory.id, []), episodes.get(memory.session_id or "", []), full)
        for memory in memories
    ]
    chosen: dict[str, EvidenceRecord] = {}
    supports: dict[str, list[str]] = {}
    depth = max((len(q) for q in queues), default=0)
    for round_ in range(depth):
        for memory, queue in zip(memories, queues, strict=True):
            if round_ < len(queue):
                record = queue[round_]
                chosen.setdefault(record.evidence_id, record)
                refs = supports.setdefault(record.evidence_id, [])
                if memory.ref not in refs:
                    refs.append(memory.ref)
    records = [replace(r, supports=tuple(supports[key])) for key, r in chosen.items()]
    return records[:limit], len(records) > limit


def _sources(
    memory: Memory, events: Sequence[Event], episodes: Sequence[Episode], full: bool
) -> list[EvidenceRecord]:
    records: list[EvidenceRecord] = []
    for event in events:
        if event.kind not in SOURCE_EVENT_KINDS:
            continue
        occurred = memory.occurred_at if event.id == memory.source_event_id else event.at
        text = str(event.payload.get("content", "")) if full else None
        cut = bool(event.payload.get("truncated")) if full else False
        records.append(
            _record(f"evt_{event.id}", "event", event.at, occurred, event.id, memory.ref, text, cut)
        )
    for episode in episodes:
        text = f"{episode.task}\noutcome: {episode.outcome}\n{episode.summary}" if full else None
        records.append(
            _record(
                episode.ref,
                "episode",
                episode.ended_at,
                episode.started_at,
                episode.id,
                memory.ref,
                text,
                False,
            )
        )
    return records


def _record(
    evidence_id: str,
    kind: str,
    recorded: datetime,
    occurred: datetime,
    number: int,
    supports: str,
    text: str | None,
    already_cut: bool,
) -> EvidenceRecord:
    content = None if text is None else text[:EVIDENCE_CHARS]
    truncated = None if text is None else (already_cut or len(text) > EVIDENCE_CHARS)
    return EvidenceRecord(
        evidence_id,
        kind,
        recorded,
        occurred,
        {"kind": kind, "id": number},
        (supports,),
        content,
        truncated,
    )
