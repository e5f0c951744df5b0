"""remember: validate, refuse, embed, deduplicate, store, index — in that order.

Deduplication never loses what the agent wrote: identical content is `matched`, a near-duplicate
with the same values is `boosted`, and one with different values (a version, a number, a name,
a negation: `cairn.values`) is stored and linked as a possible update (`cairn.updates`).

Validation and refusal happen before anything is written, so a refused call stores nothing.
The dedup check and the insert happen inside one write transaction, so two writers racing on
the same claim cannot both create it. Embedding (the slow part) happens before that
transaction on an embedded store, whose lock is the whole file's; on a server store it runs on
the worker thread beside the checks and the transaction's first round trips (`claim_vector`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from cairn import neighbours
from cairn.claim_args import (
    durability_of,
    embedding_of,
    occurred_of,
    optional_text,
    ref_list,
    refuse_secrets_in,
    validate_type,
    weight_of,
)
from cairn.code.citations import PreparedCitation, prepare_for_claim
from cairn.context import Context
from cairn.embeddings.base import MAX_EMBED_CHARS, Vector, fit_dimensions
from cairn.errors import CairnError, InvalidInput
from cairn.evidence import check_cites, record_cites
from cairn.indexing import lexical_doc
from cairn.lifecycle import note_restatement
from cairn.models import (
    BatchItem,
    ItemError,
    Memory,
    NewEvent,
    NewMemory,
    RememberResult,
)
from cairn.refs import event_ref, memory_ref
from cairn.refusal import check_content, check_text
from cairn.scope import current_branch
from cairn.sessions.ledger import claim_scope, require_open
from cairn.sessions.relations import MAY_UPDATE, RELATES_TO, check_relations, relate
from cairn.store.base import Indexed, NearSearch
from cairn.tags import detect_tags, normalise_tags
from cairn.values import compare

SUMMARY_CHARS = 200
_BOOST_STEP = 0.05
NEAR_POOL = 5  # near-duplicates checked for one with the same values before storing anew

REMEMBER_FIELDS = frozenset(
    {
        "content",
        "type",
        "scope",
        "cwd",
        "tags",
        "reason",
        "source_ref",
        "summary",
        "weight",
        "durability",
        "pinned",
        "occurred_at",
        "diff_text",
        "diff_files",
        "error_trace",
        "session_id",
        "used",
        "embedding",
        "relates_to",
    }
)


@dataclass(frozen=True, slots=True)
class Claim:
    """A remember call that passed validation and refusal, ready to embed and store."""

    content: str
    type: str
    scope: str
    summary: str
    tags: tuple[str, ...]
    reason: str | None
    source_ref: str | None
    weight: float
    durability: str
    pinned: bool
    occurred_at: datetime | None
    diff_text: str | None
    diff_files: tuple[str, ...]
    error_trace: str | None
    session_id: str | None
    branch: str | None
    embedding: tuple[float, ...] | None
    used: tuple[int, ...] = ()  # memories that shaped this claim: each counts a cite
    relates_to: tuple[int, ...] = ()  # memories this claim is associated with
    citation: PreparedCitation | None = None  # source_ref checked and fingerprinted

    @property
    def content_hash(self) -> str:
        return content_hash(self.content)


def content_hash(content: str) -> str:
    return hashlib.sha256(content.strip().encode("utf-8")).hexdigest()


def summarise(content: str) -> str:
    """One line: the first 200 characters with whitespace collapsed."""
    line = " ".join(content.split())
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1].rstrip() + "…"


def text_for_embedding(content: str) -> str:
    return content[:MAX_EMBED_CHARS]


def build_claim(ctx: Context, args: Mapping[str, Any], default_cwd: Path) -> Claim:
    """Check one remember call's arguments; raise before anything is written."""
    unknown = set(args) - REMEMBER_FIELDS
    if unknown:
        raise InvalidInput(
            f"remember got unknown fields {sorted(unknown)}; valid fields are "
            f"{', '.join(sorted(REMEMBER_FIELDS))}."
        )
    content = args.get("content")
    if not isinstance(content, str):
        raise InvalidInput("content is required and must be text: the claim to remember.")
    check_content(content, max_bytes=ctx.settings.max_content_bytes)
    refuse_secrets_in(args)
    mtype = validate_type(args.get("type"))
    # A closed session is a state conflict: reported after every argument is checked.
    scope = claim_scope(ctx, args, default_cwd, closed_ok=True)
    tags = normalise_tags(args["tags"]) if args.get("tags") else detect_tags(content)
    summary = optional_text(args, "summary") or summarise(content)
    claim = Claim(
        content=content,
        type=mtype,
        scope=scope,
        summary=summarise(summary),
        tags=tags,
        reason=optional_text(args, "reason"),
        source_ref=optional_text(args, "source_ref"),
        weight=weight_of(args.get("weight")),
        durability=durability_of(args.get("durability"), mtype),
        pinned=bool(args.get("pinned") or False),
        occurred_at=occurred_of(args.get("occurred_at")),
        diff_text=optional_text(args, "diff_text"),
        diff_files=tuple(str(f) for f in args.get("diff_files") or ()),
        error_trace=optional_text(args, "error_trace"),
        session_id=optional_text(args, "session_id"),
        branch=current_branch(args["cwd"]) if args.get("cwd") else None,
        embedding=embedding_of(args.get("embedding")),
        used=tuple(check_cites(ctx, ref_list(args.get("used"), "used"), scope)),
        relates_to=check_relations(ctx, args.get("relates_to"), scope),
        citation=prepare_for_claim(
            ctx, optional_text(args, "source_ref"), args.get("cwd"), scope, default_cwd
        ),
    )
    if args.get("session_id") is not None:
        require_open(ctx, args["session_id"])
    return claim


def _link(ctx: Context, claim: Claim, memory_id: int, now: datetime) -> None:
    """Count the claim's cites and record its associations (inside the write transaction)."""
    _count_cites(ctx, claim)
    relate(ctx.store, memory_id, claim.relates_to, now)


def _count_cites(ctx: Context, claim: Claim) -> None:
    record_cites(
        ctx, claim.used, scope=claim.scope, branch=claim.branch, session_id=claim.session_id
    )


def _links(claim: Claim, update: Near | None) -> list[tuple[int, str]]:
    """A new memory's relations, written with it: its associations and the older memory it
    may update (newer -> older)."""
    links = [(target, RELATES_TO) for target in claim.relates_to]
    if update is not None:
        links.append((update.memory_id, MAY_UPDATE))
    return links


def embed_claims(ctx: Context, claims: Sequence[Claim]) -> list[Vector]:
    """One vector per claim: the caller's own (fitted to the store's dimensions) or the model's."""
    embedder = ctx.embedder
    needed = [i for i, c in enumerate(claims) if c.embedding is None]
    vectors: dict[int, Vector] = {}
    if needed:
        matrix = embedder.embed_many([text_for_embedding(claims[i].content) for i in needed])
        vectors.update((i, matrix[row]) for row, i in enumerate(needed))
    for i, claim in enumerate(claims):
        if claim.embedding is not None:
            vectors[i] = fit_dimensions(claim.embedding, embedder.dimensions)
    return [vectors[i] for i in range(len(claims))]


# A claim's vector, asked for when first needed: it may still be computing (`claim_vector`).
ClaimVector = Callable[[], Vector]


def ready(vector: Vector) -> ClaimVector:
    return lambda: vector


def claim_vector(ctx: Context, claim: Claim, started: ClaimVector | None = None) -> ClaimVector:
    """The claim's vector for `store_claim`: `started`'s (`start_vector`) when there is one.

    A store whose every statement waits on a server (`Store.remote`) has the model start on
    the worker thread: the write transaction opens and the content is looked up while the
    model runs, and a word-for-word restatement never waits for it (measured on PostgreSQL at
    100k: the two round trips hidden). The writers' lock is then held while the model finishes
    (2-3 ms more a write): PostgreSQL is there to share a store, not for parallel writers. An
    embedded store gets the vector here, before its write transaction, which locks the whole
    file: nothing there would run beside the model.
    """
    if claim.embedding is None:
        started = started or start_vector(ctx, claim.content)
        if started is not None:
            return started
    return ready(embed_claims(ctx, [claim])[0])  # the caller's own vector, or embedded here


def start_vector(ctx: Context, content: object) -> ClaimVector | None:
    """On a store whose statements wait on a server, the model started on a remember call's
    content before the call is checked, so the checks run beside it too; None elsewhere, or
    when the content is not text. Nothing is written before the checks pass: a refused
    call's vector is computed in memory and dropped."""
    if not ctx.store.remote or not isinstance(content, str) or not content.strip():
        return None
    return ctx.start_embedding(text_for_embedding(content)).result


def store_claim(ctx: Context, claim: Claim, vector: ClaimVector, *, dedup: bool) -> RememberResult:
    """Dedup and insert in one write transaction."""
    store, now = ctx.store, ctx.clock()
    identity = ctx.embedder.identity
    update: Near | None = None
    with store.transaction():
        if dedup:
            found = _find_duplicate(ctx, claim, vector, identity)
            if isinstance(found, Near):
                update = found
            elif found is not None:
                memory_id, disposition, similarity = found
                event_id = _record(ctx, claim, memory_id, disposition, now)
                _link(ctx, claim, memory_id, now)
                note_restatement(ctx, memory_id, claim.session_id, via="remember")
                return RememberResult(
                    memory_ref(memory_id),
                    disposition,
                    claim.type,
                    claim.scope,
                    event_ref(event_id),
                    similarity,
                )
        doc = lexical_doc(claim.content, claim.tags, claim.source_ref, claim.reason)
        memory_id, event_id = store.add_memory_with_event(
            _new_memory(ctx, claim, now),
            lambda made: _event(ctx, claim, made, "created", now, update),
            Indexed(identity, vector(), doc),
            _links(claim, update),
        )
        if claim.session_id is not None:  # without a session a memory has no neighbours
            neighbours.after_write(store, memory_id, identity)
        if claim.citation is not None:
            store.put_citation(claim.citation.row(memory_id, claim.scope, now))
        _count_cites(ctx, claim)
    return RememberResult(
        memory_ref(memory_id),
        "created",
        claim.type,
        claim.scope,
        event_ref(event_id),
        None if update is None else update.similarity,
        may_update=None if update is None else memory_ref(update.memory_id),
        changed=None if update is None else update.changed,
    )


@dataclass(frozen=True, slots=True)
class Near:
    """An existing memory the claim resembles but whose values differ: it may update it."""

    memory_id: int
    similarity: float
    changed: str


def _find_duplicate(
    ctx: Context, claim: Claim, vector: ClaimVector, identity: str
) -> tuple[int, Any, float | None] | Near | None:
    """The memory this claim restates (matched or boosted, counted here), or the one it may
    update (`dedup_target` decides which)."""
    found = dedup_target(ctx, claim, vector, identity)
    if found is None or isinstance(found, Near):
        return found
    memory, disposition, similarity = found
    now = ctx.clock()
    ctx.store.increment(memory.id, "access_count")
    changes: dict[str, Any] = {"last_accessed_at": now}
    if disposition == "boosted":
        changes["weight"] = min(1.0, max(memory.weight, claim.weight) + _BOOST_STEP)
    ctx.store.update_memory(memory.id, changes)
    return memory.id, disposition, similarity


def dedup_target(
    ctx: Context, claim: Claim, vector: ClaimVector, identity: str
) -> tuple[Memory, str, float | None] | Near | None:
    """What remember would do with this claim, read only: the memory it restates (`matched`
    or `boosted`), the one it may update (`Near`), or None (stored anew).

    Identical content (whole text, by hash) is `matched`. A near-duplicate (cosine at least
    `dedup_threshold`) is `boosted` only when it carries the same values over the whole text
    (cairn.values); the most similar one whose values differ comes back as a `Near`.
    """
    search = NearSearch(identity, vector, NEAR_POOL, ctx.settings.dedup_threshold)
    found = ctx.store.resembling(claim.scope, claim.content_hash, search)
    if found.same is not None:
        return found.same, "matched", None
    update: Near | None = None
    for memory, similarity in found.near:
        diff = compare(claim.content, memory.content, MAX_EMBED_CHARS)
        if diff.changed:
            update = update or Near(memory.id, round(similarity, 4), diff.describe())
            continue
        return memory, "boosted", round(similarity, 4)
    return update


def _new_memory(ctx: Context, claim: Claim, now: datetime) -> NewMemory:
    return NewMemory(
        scope=claim.scope,
        type=claim.type,
        content=claim.content,
        summary=claim.summary,
        durability=claim.durability,
        weight=claim.weight,
        tags=claim.tags,
        reason=claim.reason,
        source_ref=claim.source_ref,
        pinned=claim.pinned,
        branch=claim.branch,
        session_id=claim.session_id,
        source_event_id=None,
        diff_text=claim.diff_text,
        diff_files=claim.diff_files,
        error_trace=claim.error_trace,
        integration=ctx.integration,
        content_hash=claim.content_hash,
        written_at=now,
        occurred_at=claim.occurred_at or now,
    )


def _record(ctx: Context, claim: Claim, memory_id: int, disposition: str, now: datetime) -> int:
    return ctx.store.add_event(_event(ctx, claim, memory_id, disposition, now))


def _event(
    ctx: Context,
    claim: Claim,
    memory_id: int,
    disposition: str,
    now: datetime,
    update: Near | None = None,
) -> NewEvent:
    limit = ctx.settings.event_payload_chars
    payload: dict[str, Any] = {
        "content": claim.content[:limit],
        "truncated": len(claim.content) > limit,
        "type": claim.type,
        "tags": list(claim.tags),
        "source_ref": claim.source_ref,
        "disposition": disposition,
    }
    if update is not None:
        payload["may_update"] = memory_ref(update.memory_id)
        payload["changed"] = update.changed
    if ctx.integration_version is not None:
        payload["integration_version"] = ctx.integration_version
    return NewEvent(
        "remember", claim.scope, claim.session_id, now, ctx.integration, memory_id, payload
    )


def remember_batch(
    ctx: Context, items: Sequence[Mapping[str, Any]], default_cwd: Path, *, dedup: bool
) -> list[BatchItem]:
    """Each item validated, embedded and stored on its own: one bad item sinks no other."""
    results: list[BatchItem | None] = [None] * len(items)
    claims: list[tuple[int, Claim]] = []
    for index, item in enumerate(items):
        try:
            if not isinstance(item, Mapping):
                raise InvalidInput(f"item {index} is not an object with content and type.")
            check_text(f"item {index}", item)
            claims.append((index, build_claim(ctx, item, default_cwd)))
        except CairnError as exc:
            results[index] = _failed(index, exc)
    if claims:
        vectors = embed_claims(ctx, [claim for _, claim in claims])
        for (index, claim), vector in zip(claims, vectors, strict=True):
            try:
                results[index] = BatchItem(
                    index, True, store_claim(ctx, claim, ready(vector), dedup=dedup)
                )
            except CairnError as exc:
                results[index] = _failed(index, exc)
    return [r for r in results if r is not None]


def _failed(index: int, exc: CairnError) -> BatchItem:
    return BatchItem(index, False, error=ItemError(exc.code, exc.message, exc.retryable))
