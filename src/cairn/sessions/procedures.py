"""Procedures: execution-backed methods captured at commit and recalled like memories.

A procedure is evidence from past work, not an instruction: goal, summary, context, steps,
caveats, the latest outcome, use/effect tallies from feedback and its three most recent
contributions. Committing the same goal and steps again in a scope adds a contribution to the
existing procedure instead of a duplicate.

Recall ranks a scope's procedures in memory (there is one per committed method, far fewer than
memories): BM25F over goal, summary, steps, caveats and context, cosine against the stored
vector, reciprocal-rank fusion, the feedback multiplier, and the same relative cut as
memories. A procedure must share enough of the query's rare words, or be close in meaning, to
be returned at all, so an unrelated query gets no procedures.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from cairn.context import Context
from cairn.embeddings.base import Vector
from cairn.errors import InvalidInput
from cairn.models import Contribution, ProcedureHit
from cairn.ranking.feedback import feedback_multiplier
from cairn.ranking.lexical import AnalysedDoc, LexicalIndex, query_terms
from cairn.records.sessions import NewProcedure, Procedure, Session
from cairn.refs import try_parse_ref
from cairn.refusal import check_no_secrets

PROCEDURE_FIELDS = frozenset({"goal", "summary", "context", "steps", "caveats"})
PROCEDURE_POOL = 1_000
PROCEDURE_LIMIT = 3
MAX_STEPS = 50
MIN_COVERAGE = 0.3
MIN_COSINE = 0.35
RELATIVE_CUT = 0.7
_FIELD_WEIGHTS = {"goal": 2.0, "summary": 1.5, "steps": 1.0, "caveats": 0.7, "context": 0.5}


@dataclass(frozen=True, slots=True)
class Draft:
    """A procedure a commit asked to capture, validated before anything is written."""

    goal: str
    summary: str
    context: Mapping[str, Any]
    steps: tuple[str, ...]
    caveats: tuple[str, ...]

    @property
    def content_hash(self) -> str:
        basis = [" ".join(self.goal.lower().split())]
        basis += [" ".join(step.lower().split()) for step in self.steps]
        return hashlib.sha256(json.dumps(basis, ensure_ascii=False).encode()).hexdigest()

    @property
    def text(self) -> str:
        return "\n".join([self.goal, self.summary, *self.steps, *self.caveats])


def check_procedure(spec: object, session: Session, summary: str, *, max_bytes: int) -> Draft:
    if not isinstance(spec, Mapping):
        raise InvalidInput(
            "procedure must be an object: {goal, summary, context, steps: [...], caveats: [...]}."
        )
    unknown = set(spec) - PROCEDURE_FIELDS
    if unknown:
        raise InvalidInput(
            f"procedure has unknown fields {sorted(unknown)}; valid fields are "
            f"{', '.join(sorted(PROCEDURE_FIELDS))}."
        )
    context = spec.get("context", session.task_context)
    if not isinstance(context, Mapping):
        raise InvalidInput('procedure.context must be an object, e.g. {"language": "python"}.')
    draft = Draft(
        goal=_text(spec.get("goal"), "goal") or session.task,
        summary=_text(spec.get("summary"), "summary") or summary,
        context=dict(context),
        steps=_texts(spec.get("steps"), "steps", required=True),
        caveats=_texts(spec.get("caveats"), "caveats", required=False),
    )
    whole = draft.text + json.dumps(dict(draft.context), ensure_ascii=False, default=str)
    if len(whole.encode("utf-8")) > max_bytes:
        raise InvalidInput(
            f"procedure is over {max_bytes} bytes; keep the steps to what someone would redo."
        )
    check_no_secrets(whole, field="procedure")
    return draft


def _text(value: object, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"procedure.{name} must be text.")
    return value.strip() or None


def _texts(value: object, name: str, *, required: bool) -> tuple[str, ...]:
    if value is None and not required:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidInput(f'procedure.{name} must be a list of texts, e.g. ["run make test"].')
    items = tuple(item.strip() for item in value if isinstance(item, str) and item.strip())
    if len(items) != len(value):
        raise InvalidInput(f"procedure.{name} must hold only non-blank texts.")
    if required and not items:
        raise InvalidInput(f"procedure.{name} is empty; list the steps that were carried out.")
    if len(items) > MAX_STEPS:
        raise InvalidInput(f"procedure.{name} has {len(items)} entries; at most {MAX_STEPS}.")
    return items


def capture(
    ctx: Context,
    session: Session,
    draft: Draft,
    vector: Vector,
    outcome: str,
    outcome_summary: str,
    now: datetime,
) -> int:
    """Store the procedure (or add to the equal one); inside the commit's transaction."""
    store = ctx.store
    existing = store.find_procedure(session.scope, draft.content_hash)
    if existing is not None:
        procedure_id = existing.id
        store.update_procedure(
            procedure_id,
            {"outcome": outcome, "outcome_summary": outcome_summary, "updated_at": now},
        )
    else:
        procedure_id = store.add_procedure(
            NewProcedure(
                scope=session.scope,
                goal=draft.goal,
                summary=draft.summary,
                context=draft.context,
                steps=draft.steps,
                caveats=draft.caveats,
                outcome=outcome,
                outcome_summary=outcome_summary,
                session_id=session.id,
                content_hash=draft.content_hash,
                written_at=now,
            )
        )
        store.put_procedure_vector(procedure_id, ctx.embedder.identity, vector)
    store.add_contribution(
        procedure_id, session.id, Contribution("unknown", "captured", outcome, outcome_summary, now)
    )
    return procedure_id


def record_uses(
    ctx: Context, session: Session, outcome: str, outcome_summary: str, now: datetime
) -> list[int]:
    """Procedures the session said it used: add a contribution and take the latest outcome."""
    latest: dict[int, str] = {}
    for assessment in ctx.store.session_assessments(session.id):
        proc_id = try_parse_ref(assessment.ref, kind="proc")
        if proc_id is not None and assessment.used:
            latest[proc_id] = assessment.effect
    for proc_id, effect in latest.items():
        ctx.store.add_contribution(
            proc_id, session.id, Contribution(effect, "used", outcome, outcome_summary, now)
        )
        ctx.store.update_procedure(
            proc_id, {"outcome": outcome, "outcome_summary": outcome_summary, "updated_at": now}
        )
    return list(latest)


def rank_procedures(
    ctx: Context,
    phrasings: Sequence[str],
    scopes: Sequence[str],
    *,
    as_of: datetime | None = None,
    limit: int = PROCEDURE_LIMIT,
    explain: bool = False,
) -> list[ProcedureHit]:
    """The procedures most relevant to the phrasings (best phrasing wins), best first."""
    procedures = ctx.store.procedures_in(scopes, as_of=as_of, limit=PROCEDURE_POOL)
    if not procedures or not phrasings:
        return []
    by_id = {p.id: p for p in procedures}
    index = LexicalIndex([_doc(p) for p in procedures], field_weights=_FIELD_WEIGHTS)
    vectors = ctx.store.get_procedure_vectors(list(by_id), ctx.embedder.identity)
    queries = [ctx.embed_query(text) for text in phrasings]
    best: dict[int, tuple[float, dict[str, float]]] = {}
    for text, query in zip(phrasings, queries, strict=True):
        for proc_id, (score, parts) in _score(index, vectors, text, query).items():
            if proc_id not in best or score > best[proc_id][0]:
                best[proc_id] = (score, parts)
    for proc_id, (score, parts) in best.items():
        evidence = by_id[proc_id].evidence
        parts["feedback"] = feedback_multiplier(evidence.helped, evidence.harmed)
        best[proc_id] = (score * parts["feedback"], parts)
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], -kv[0]))
    if ranked:
        floor = ranked[0][1][0] * RELATIVE_CUT
        ranked = [item for item in ranked if item[1][0] >= floor]
    return [by_id[pid].as_hit(score, parts if explain else None) for pid, (score, parts) in ranked][
        :limit
    ]


def _score(
    index: LexicalIndex, vectors: Mapping[int, Vector], text: str, query: Vector
) -> dict[int, tuple[float, dict[str, float]]]:
    terms = query_terms(text)
    lexical = {int(k): v for k, v in index.search(terms).items()} if terms else {}
    coverage = {pid: index.scorer.coverage(terms, index.docs[str(pid)]) for pid in lexical}
    dense = {pid: float(np.dot(v, query)) for pid, v in vectors.items() if v.shape == query.shape}
    keep = {pid for pid, c in coverage.items() if c >= MIN_COVERAGE}
    keep |= {pid for pid, cos in dense.items() if cos >= MIN_COSINE}
    fused = _rrf([{p: lexical[p] for p in keep if p in lexical}, {p: dense[p] for p in keep}])
    out: dict[int, tuple[float, dict[str, float]]] = {}
    for pid in keep:
        proc_score = fused.get(pid, 0.0)
        out[pid] = (
            proc_score,
            {"lexical": lexical.get(pid, 0.0), "dense": dense.get(pid, 0.0), "fused": proc_score},
        )
    return out


def _doc(procedure: Procedure) -> AnalysedDoc:
    return AnalysedDoc.from_text(
        str(procedure.id),
        goal=procedure.goal,
        summary=procedure.summary,
        steps=" ".join(procedure.steps),
        caveats=" ".join(procedure.caveats),
        context=" ".join(f"{k} {v}" for k, v in procedure.context.items()),
    )


def _rrf(lists: Sequence[Mapping[int, float]], k: int = 60) -> dict[int, float]:
    fused: dict[int, float] = {}
    for scores in lists:
        for rank, key in enumerate(sorted(scores, key=lambda i: -scores[i]), start=1):
            fused[key] = fused.get(key, 0.0) + 1.0 / (k + rank)
    return fused
