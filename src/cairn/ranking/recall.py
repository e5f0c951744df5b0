"""The recall pipeline: candidates (lexical + dense), fusion, signals, cut.

Backends hand over candidate documents and statistics; everything that decides an order lives
here and in the sibling modules, so SQLite and PostgreSQL rank identically.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from cairn.context import Context
from cairn.embeddings.base import Vector
from cairn.models import Memory
from cairn.ranking.lexical import BM25F, AnalysedDoc, CorpusStats, query_terms
from cairn.ranking.signals import signal_parts
from cairn.store.base import LEXICAL_FIELDS, LexicalRow, MemoryFilter

LEXICAL_POOL = 200
DENSE_POOL = 100
RELATIVE_CUT = 0.7


@dataclass(frozen=True, slots=True)
class RecallQuery:
    text: str
    filt: MemoryFilter
    limit: int
    cut: bool = True
    also: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Scored:
    memory: Memory
    score: float
    weak: bool = False
    parts: dict[str, float] = field(default_factory=dict)


def retrieve(ctx: Context, query: RecallQuery) -> list[Scored]:
    phrasings = (query.text, *query.also)
    merged: dict[int, Scored] = {}
    for text in phrasings:
        for scored in _retrieve_one(ctx, text, query):
            current = merged.get(scored.memory.id)
            if current is None or scored.score > current.score:
                merged[scored.memory.id] = scored
    ranked = sorted(merged.values(), key=lambda s: (-s.score, -s.memory.id))
    if query.cut:
        ranked = _relative_cut(ranked)
    return ranked[: query.limit]


def _retrieve_one(ctx: Context, text: str, query: RecallQuery) -> list[Scored]:
    terms = query_terms(text)
    lexical = _lexical_scores(ctx, query.filt, terms)
    vector = ctx.embedder.embed_many([text])[0]
    dense = dict(_dense_scores(ctx, query.filt, vector))
    fused = _rrf([lexical, dense])
    if not fused:
        return []
    memories = {m.id: m for m in ctx.store.get_memories(list(fused))}
    out: list[Scored] = []
    for memory_id, score in fused.items():
        memory = memories.get(memory_id)
        if memory is None:
            continue
        parts = {
            "lexical": lexical.get(memory_id, 0.0),
            "dense": dense.get(memory_id, 0.0),
            "fused": score,
        }
        factors = signal_parts(memory, ctx.clock())
        parts.update(factors)
        out.append(Scored(memory, score * math.prod(factors.values()), parts=parts))
    return out


def _lexical_scores(ctx: Context, filt: MemoryFilter, terms: Sequence[str]) -> dict[int, float]:
    if not terms:
        return {}
    rows = ctx.store.lexical_candidates(filt, terms, LEXICAL_POOL)
    if not rows:
        return {}
    stats = ctx.store.lexical_stats(filt, terms)
    scorer = BM25F(
        CorpusStats(stats.doc_count, stats.document_frequency, stats.average_length)
    )
    return {row.memory_id: scorer.score(terms, _analysed(row)) for row in rows}


def _analysed(row: LexicalRow) -> AnalysedDoc:
    return AnalysedDoc(
        str(row.memory_id), {name: row.doc.field(name).split() for name in LEXICAL_FIELDS}
    )


def _dense_scores(ctx: Context, filt: MemoryFilter, vector: Vector) -> list[tuple[int, float]]:
    return ctx.store.nearest(filt, ctx.embedder.identity, vector, DENSE_POOL)


def _relative_cut(ranked: list[Scored]) -> list[Scored]:
    if not ranked:
        return ranked
    floor = ranked[0].score * RELATIVE_CUT
    return [ranked[0], *(replace(s) for s in ranked[1:] if s.score >= floor)]


def _rrf(lists: Sequence[dict[int, float]], k: int = 60) -> dict[int, float]:
    fused: dict[int, float] = {}
    for scores in lists:
        for rank, memory_id in enumerate(sorted(scores, key=lambda i: -scores[i]), start=1):
            fused[memory_id] = fused.get(memory_id, 0.0) + 1.0 / (k + rank)
    return fused
