"""History: correct (new version), forget (retire), purge (erase, keep a tombstone), get_memory.

Nothing is overwritten except by purge. A correction is a new row that `replaces` the old
one; the old row gets `until` (when it stopped being believed), `replaced_by` and the status
`replaced`. `supersede` is the same correction when the new version is already stored. A
memory that is not visible from the caller's scope is reported exactly like one that does not
exist, so refs cannot be used to probe other scopes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from cairn import neighbours, updates
from cairn.code.records import UNCHECKED, CitationCheck
from cairn.context import Context
from cairn.embeddings.base import Vector
from cairn.errors import Conflict, InvalidInput, NotFound
from cairn.indexing import index_memory
from cairn.models import (
    GetResult,
    HistoryEntry,
    Memory,
    MemoryRecord,
    NewEvent,
    NewMemory,
    RememberResult,
)
from cairn.refs import event_ref, memory_ref, parse_ref, try_parse_ref
from cairn.refusal import check_content, check_no_secrets
from cairn.remember import content_hash, summarise, text_for_embedding
from cairn.scope import visible_scopes
from cairn.sessions.relations import relate_versions

_MAX_CHAIN = 1000  # a guard against a corrupted chain, far beyond any real history
REPLACED = "replaced"  # the status of a version a correction superseded
_RETIRE_EVENTS = 20  # newest events read to find a forgotten memory's `forget` reason


def load_visible(ctx: Context, ref: str, scope: str) -> Memory:
    memory_id = parse_ref(ref, kind="mem")
    found = ctx.store.get_memories([memory_id])
    if not found or found[0].scope not in visible_scopes(scope):
        raise NotFound(
            f"{ref} names no memory in scope {scope}; check the ref (recall lists refs) or "
            "pass the scope it was written in."
        )
    return found[0]


def _require_current(memory: Memory, verb: str) -> None:
    if memory.status == "purged":
        raise Conflict(f"{memory.ref} was purged; there is nothing left to {verb}.")
    if memory.replaced_by is not None:
        raise Conflict(
            f"{memory.ref} was already replaced by {memory_ref(memory.replaced_by)}; "
            f"{verb} the current version instead."
        )
    if memory.status == "retired":
        raise Conflict(f"{memory.ref} was forgotten; remember the claim again if it holds.")


def correct(ctx: Context, ref: str, content: str, reason: str, scope: str) -> RememberResult:
    parse_ref(ref, kind="mem")  # the arguments first, then the memory's state
    check_content(content, max_bytes=ctx.settings.max_content_bytes)
    reason = _require_reason(reason, "correct")
    for name, text in (("content", content), ("reason", reason)):
        check_no_secrets(text, field=name)
    old = load_visible(ctx, ref, scope)
    _require_current(old, "correct")
    vector = ctx.embedder.embed_many([text_for_embedding(content)])[0]
    return write_correction(ctx, old, content, reason, vector)


def current_version(ctx: Context, ref: str, scope: str, verb: str) -> Memory:
    """The memory `ref` names, refusing one replaced, forgotten or purged (Conflict says so)."""
    memory = load_visible(ctx, ref, scope)
    _require_current(memory, verb)
    return memory


def write_correction(
    ctx: Context,
    old: Memory,
    content: str,
    reason: str,
    vector: Vector,
    *,
    source_ref: str | None = None,
    mtype: str | None = None,
) -> RememberResult:
    """Store `content` as the new version of `old` (checked by the caller); `source_ref` and
    `mtype`, when given, replace the old version's (an imported rule edited from "use X" to
    "never X" is now a constraint, and cites its new lines)."""
    now, store = ctx.clock(), ctx.store
    source_ref = source_ref or old.source_ref
    mtype = mtype or old.type
    with store.transaction():
        new_id = store.add_memory(
            NewMemory(
                scope=old.scope,
                type=mtype,
                content=content,
                summary=summarise(content),
                durability=old.durability,
                weight=old.weight,
                tags=old.tags,
                reason=reason,
                source_ref=source_ref,
                pinned=old.pinned,
                branch=old.branch,
                session_id=old.session_id,
                source_event_id=None,
                diff_text=None,
                diff_files=(),
                error_trace=None,
                integration=ctx.integration,
                content_hash=content_hash(content),
                written_at=now,
                occurred_at=now,
                replaces=old.id,
            )
        )
        payload = {
            "content": content[: ctx.settings.event_payload_chars],
            "reason": reason,
            "replaces": old.ref,
        }
        if ctx.integration_version is not None:
            payload["integration_version"] = ctx.integration_version
        event_id = store.add_event(
            NewEvent("correct", old.scope, None, now, ctx.integration, new_id, payload)
        )
        store.update_memory(new_id, {"source_event_id": event_id})
        _retire_version(ctx, old, new_id)
        store.put_vector(new_id, ctx.embedder.identity, vector)
        index_memory(store, new_id, content, old.tags, source_ref, reason)
        neighbours.after_write(store, new_id, ctx.embedder.identity)
    return RememberResult(memory_ref(new_id), "created", mtype, old.scope, event_ref(event_id))


def _retire_version(ctx: Context, old: Memory, new_id: int) -> None:
    """Mark `old` replaced by `new_id`: until, replaced_by, status, version relation, citation."""
    store, now = ctx.store, ctx.clock()
    store.update_memory(old.id, {"until": now, "replaced_by": new_id, "status": REPLACED})
    relate_versions(store, old.id, new_id, now)
    cited = store.get_citations([old.id]).get(old.id)
    if cited is not None and not store.get_citations([new_id]):
        store.put_citation(replace(cited, memory_id=new_id, created_at=now))


def supersede(ctx: Context, old_ref: str, new_ref: str, reason: str, scope: str) -> Memory:
    """A correction whose new version is already stored: `new_ref` replaces `old_ref`.

    Accepting a tidy `update` does this: the newer claim was remembered beside the older one it
    may update, so writing its text again as a third memory would only duplicate it.
    """
    old, new = load_visible(ctx, old_ref, scope), load_visible(ctx, new_ref, scope)
    _require_current(old, "correct")
    _require_current(new, "correct with")
    if old.id == new.id or old.scope != new.scope:
        raise InvalidInput(f"{new.ref} cannot replace {old.ref}: name two memories of one scope.")
    reason = _require_reason(reason, "correct")
    now, store = ctx.clock(), ctx.store
    with store.transaction():
        limit = ctx.settings.event_payload_chars
        payload = {
            "content": new.content[:limit],
            "truncated": len(new.content) > limit,
            "reason": reason,
            "replaces": old.ref,
            "by": new.ref,
        }
        if ctx.integration_version is not None:
            payload["integration_version"] = ctx.integration_version
        store.add_event(NewEvent("correct", old.scope, None, now, ctx.integration, new.id, payload))
        if new.replaces is None:
            store.update_memory(new.id, {"replaces": old.id})
        _retire_version(ctx, old, new.id)
    return store.get_memories([old.id])[0]


def forget(ctx: Context, ref: str, reason: str, scope: str) -> Memory:
    parse_ref(ref, kind="mem")  # the arguments first, then the memory's state
    reason = _require_reason(reason, "forget")
    check_no_secrets(reason, field="reason")
    memory = load_visible(ctx, ref, scope)
    _require_current(memory, "forget")
    now = ctx.clock()
    with ctx.store.transaction():
        ctx.store.update_memory(memory.id, {"status": "retired", "until": now})
        ctx.store.add_event(
            NewEvent(
                "forget", memory.scope, None, now, ctx.integration, memory.id, {"reason": reason}
            )
        )
    return ctx.store.get_memories([memory.id])[0]


def purge(ctx: Context, ref: str, scope: str) -> str:
    """Erase a memory and every version of it, keeping tombstones without content.

    The versions are the whole correction chain (what the memory replaced and what replaced
    it): a leaked secret corrected away is still in the versions before. In one transaction
    each version's text columns are blanked, its events redacted, its neighbours re-indexed
    without it, and the store deletes every derived copy; after the commit the store removes
    what the deleted rows left on disk. Returns the tombstone event of the memory named.
    """
    now, store = ctx.clock(), ctx.store
    tombstones: dict[int, int] = {}
    with store.transaction():
        # Read under the write lock, so no correction can add a version the purge misses.
        memory = load_visible(ctx, ref, scope)
        if memory.status == "purged":
            raise Conflict(f"{memory.ref} was already purged.")
        versions = _versions(ctx, memory)
        ids = [version.id for version in versions]
        for version in versions:
            store.update_memory(version.id, _blanked(version, now))
            store.redact_events(version.id, note=f"purged {version.ref}")
        neighbours.after_purge(store, ids)
        store.erase_memories(ids)
        for version in versions:
            if version.status == "purged":
                continue  # purged before: its tombstone exists
            payload: dict[str, object] = {"purged": version.ref}
            if version.id != memory.id:
                payload["version_of"] = memory.ref
            tombstones[version.id] = store.add_event(
                NewEvent("purge", version.scope, None, now, ctx.integration, version.id, payload)
            )
    store.erase_freed()
    return event_ref(tombstones[memory.id])


def _versions(ctx: Context, memory: Memory) -> list[Memory]:
    """The memory and every version in its correction chain, oldest first."""
    older = _walk(ctx, memory, backwards=True)
    chain = [*reversed(older), memory, *_walk(ctx, memory, backwards=False)]
    return list({version.id: version for version in chain}.values())


def _blanked(memory: Memory, now: datetime) -> dict[str, object]:
    return {
        "status": "purged",
        "content": "",
        "summary": "[purged]",
        "reason": None,
        "diff_text": None,
        "diff_files": (),
        "error_trace": None,
        "tags": (),
        "source_ref": None,
        # The hash of a short secret is as good as the secret to whoever can guess it.
        "content_hash": "purged",
        "until": memory.until or now,
    }


def _require_reason(reason: str, verb: str) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidInput(f"{verb} needs a reason: say why, in a few words.")
    return reason.strip()


def get_memories(
    ctx: Context,
    refs: Sequence[str],
    scope: str,
    *,
    citation: Callable[[Memory], CitationCheck] | None = None,
) -> GetResult:
    visible = set(visible_scopes(scope))
    wanted = [(ref, try_parse_ref(ref, kind="mem")) for ref in refs]
    ids = [mid for _, mid in wanted if mid is not None]
    by_id = {m.id: m for m in ctx.store.get_memories(ids) if m.scope in visible}
    links = updates.links_of(ctx.store, list(by_id))
    reasons = _retire_reasons(ctx, [m.id for m in by_id.values() if m.status == "retired"])
    records: list[MemoryRecord] = []
    unknown: list[str] = []
    for ref, mid in wanted:
        if mid is None or mid not in by_id:
            unknown.append(ref)
            continue
        memory = by_id[mid]
        checked = citation(memory) if citation is not None else UNCHECKED
        records.append(
            MemoryRecord(
                memory=memory,
                citation=checked.status,
                citation_lines=checked.lines,
                replaced=tuple(_chain(ctx, memory, backwards=True)),
                replaced_by_chain=tuple(_chain(ctx, memory, backwards=False)),
                may_update=tuple(memory_ref(i) for i in links.older.get(mid, [])),
                may_be_updated_by=tuple(memory_ref(i) for i in links.newer.get(mid, [])),
                retire_reason=reasons.get(mid),
            )
        )
    return GetResult(tuple(records), tuple(unknown))


def _retire_reasons(ctx: Context, ids: Sequence[int]) -> dict[int, str]:
    """Why each forgotten memory was forgotten: the reason its `forget` event recorded."""
    if not ids:
        return {}
    found: dict[int, str] = {}
    for memory_id, events in ctx.store.events_for_memories(ids, limit=_RETIRE_EVENTS).items():
        for event in events:  # newest first
            reason = event.payload.get("reason")
            if event.kind == "forget" and isinstance(reason, str):
                found[memory_id] = reason
                break
    return found


def _chain(ctx: Context, memory: Memory, *, backwards: bool) -> list[HistoryEntry]:
    return [_entry(version) for version in _walk(ctx, memory, backwards=backwards)]


def _walk(ctx: Context, memory: Memory, *, backwards: bool) -> list[Memory]:
    """The versions before (`backwards`) or after the memory, nearest first."""
    found: list[Memory] = []
    current = memory
    for _ in range(_MAX_CHAIN):
        next_id = current.replaces if backwards else current.replaced_by
        if next_id is None:
            break
        loaded = ctx.store.get_memories([next_id])
        if not loaded:
            break
        current = loaded[0]
        found.append(current)
    return found


def _entry(memory: Memory) -> HistoryEntry:
    return HistoryEntry(memory.ref, memory.summary, memory.written_at, memory.until)


def set_pinned(ctx: Context, ref: str, pinned: bool, scope: str) -> Memory:
    """Pin or unpin the current version of a memory; the event keeps who did it and when."""
    if not isinstance(pinned, bool):
        raise InvalidInput(f"pinned must be true or false, not {type(pinned).__name__}.")
    memory = load_visible(ctx, ref, scope)
    _require_current(memory, "pin" if pinned else "unpin")
    if memory.pinned == pinned:
        return memory
    now = ctx.clock()
    kind = "pin_memory" if pinned else "unpin_memory"
    with ctx.store.transaction():
        ctx.store.update_memory(memory.id, {"pinned": pinned})
        ctx.store.add_event(NewEvent(kind, memory.scope, None, now, ctx.integration, memory.id, {}))
    return ctx.store.get_memories([memory.id])[0]
