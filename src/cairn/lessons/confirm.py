"""`confirm(ref)`: the calling client says a memory still holds.

It is evidence by tool, counted by `lifecycle.note_restatement` exactly like a restatement: a
confirmation by another client than the one that wrote the memory counts once per session
(once per UTC day outside sessions), lifts the memory in recall, wakes it if it was resting
idle and, against contradictions, restores it; the writer confirming itself is an echo and
counts nothing. The confirmation also counts as the memory being restated now
(`evidence["restated_at"]`), so the idle sweep does not put it back to rest at once. An event
`confirm` records the call in the trace.
"""

from __future__ import annotations

from collections.abc import Sequence

from cairn.context import Context
from cairn.errors import Conflict, NotFound
from cairn.lessons.models import ConfirmResult
from cairn.lifecycle import note_restatement
from cairn.models import Memory, NewEvent
from cairn.refs import memory_ref

_MESSAGES = {
    "confirmation": "{ref} confirmed by {client}: it now has {n} confirmation(s).",
    "echo": (
        "{ref} was written by {client}, so its own confirmation is an echo and does not count; "
        "a confirmation counts when another client (another agent, or a person running "
        "`cairn confirm`) says it holds."
    ),
    "repeat": "{client} already confirmed {ref} {when}; it counts once.",
    "derived": "{ref}: cairn re-reading its own records never counts as a confirmation.",
}


def confirm_memory(
    ctx: Context,
    memory_id: int,
    visible: Sequence[str],
    session_key: str | None,
    event_session: str | None,
) -> ConfirmResult:
    memory = _current(ctx, memory_id, visible)
    outcome = note_restatement(ctx, memory.id, session_key, via="confirm") or "derived"
    if outcome != "derived":
        _restated_now(ctx, memory.id)
    after = ctx.store.get_memories([memory.id])[0]
    client = ctx.integration or "unknown"
    when = "in this session" if session_key else "today"
    message = _MESSAGES[outcome].format(ref=after.ref, client=client, n=after.confirmed, when=when)
    ctx.store.add_event(
        NewEvent("confirm", after.scope, event_session, ctx.clock(), ctx.integration, after.id,
                 {"ref": after.ref, "outcome": outcome, "session": session_key})
    )  # fmt: skip
    return ConfirmResult(
        ref=after.ref, outcome=outcome, counted=outcome == "confirmation",
        confirmed=after.confirmed, status=after.status, integration=client, message=message,
    )  # fmt: skip


def _current(ctx: Context, memory_id: int, visible: Sequence[str]) -> Memory:
    ref = memory_ref(memory_id)
    found = ctx.store.get_memories([memory_id])
    if not found or found[0].scope not in visible or found[0].status == "purged":
        raise NotFound(
            f"{ref} names no memory in this scope; confirm a ref that lessons, recall or "
            "remember returned here (check scope or cwd)."
        )
    memory = found[0]
    if memory.replaced_by is not None:
        raise Conflict(
            f"{ref} was replaced by {memory_ref(memory.replaced_by)}; confirm the current "
            "version instead (get_memory shows the history)."
        )
    if memory.status == "retired" or memory.until is not None:
        raise Conflict(
            f"{ref} was retired, so there is nothing to confirm; if it holds again, remember "
            "it anew."
        )
    return memory


def _restated_now(ctx: Context, memory_id: int) -> None:
    with ctx.store.transaction():
        found = ctx.store.get_memories([memory_id])
        if found:
            evidence = dict(found[0].evidence)
            evidence["restated_at"] = ctx.clock().isoformat()
            ctx.store.update_memory(memory_id, {"evidence": evidence})
