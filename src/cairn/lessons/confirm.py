"""`confirm(ref)`: the calling client says a memory still holds.

It is evidence by tool, counted by `lifecycle.note_restatement` exactly like a restatement: a
confirmation by another client than the one that wrote the memory counts once per session
(once per UTC day outside sessions), lifts the memory in recall, wakes it if it was resting
idle and, against contradictions, restores it; the writer confirming itself is an echo and
counts nothing. The confirmation also counts as the memory being restated now
(`evidence["restated_at"]`), so the idle sweep does not put it back to rest at once. An event
`confirm` records the call in the trace.

A person's confirmation (`cairn confirm`, the web app; `person=` in the Python API) goes by the
integration `person` or `person:<name>`, distinct from every agent client: it always counts
(never an echo), stands until that person undoes it (`unconfirm`, event `unconfirm`), restores
a contradicted memory and wakes a resting one (`lifecycle.note_person_confirmation`). The MCP
tool stays the agent's confirmation: only the person's own surfaces pass `person`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cairn.context import Context
from cairn.errors import Conflict, InvalidInput, NotFound
from cairn.lessons.models import ConfirmResult
from cairn.lifecycle import (
    note_person_confirmation,
    note_restatement,
    undo_person_confirmation,
)
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
    "person": "{ref} confirmed by {client}: it now has {n} confirmation(s); {status}. "
    "Undo with `cairn confirm --undo {ref}`.",
    "person_repeat": "{client} already confirmed {ref}; it counts once (undo with "
    "`cairn confirm --undo {ref}`).",
    "undone": "{ref}: the confirmation by {client} is taken back; it now has {n} "
    "confirmation(s); {status}.",
}
_PERSON = re.compile(r"^[A-Za-z0-9][\w.@+-]{0,63}$")


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
    return _result(after, outcome, client, message)


def person_integration(person: object) -> str:
    """The integration a person's confirmations go by: `person`, or `person:<name>`."""
    if not isinstance(person, str):
        raise InvalidInput("person is the name of the person confirming, e.g. 'alice'.")
    name = person.strip()
    if not name:
        return "person"
    if not _PERSON.match(name):
        raise InvalidInput(
            f"person {person!r} is not a usable name: letters, digits and ._@+-, at most 64 "
            "characters (set CAIRN_PERSON)."
        )
    return f"person:{name}"


def confirm_by_person(
    ctx: Context, memory_id: int, visible: Sequence[str], person: str
) -> ConfirmResult:
    """A person says the memory holds: counted once per person, until undone."""
    memory = _current(ctx, memory_id, visible)
    counted = note_person_confirmation(ctx, memory.id, person) == "confirmation"
    return _person_result(ctx, memory.id, person, "confirmation" if counted else "repeat",
                          "confirm")  # fmt: skip


def unconfirm_by_person(
    ctx: Context, memory_id: int, visible: Sequence[str], person: str
) -> ConfirmResult:
    """Take back the person's confirmation; Conflict when there is none to take back."""
    memory = _visible(ctx, memory_id, visible)
    if not undo_person_confirmation(ctx, memory.id, person):
        raise Conflict(
            f"{memory.ref} has no confirmation by {person} to undo; get_memory shows who "
            "confirmed it (evidence.people)."
        )
    return _person_result(ctx, memory.id, person, "undone", "unconfirm")


def _person_result(
    ctx: Context, memory_id: int, person: str, outcome: str, kind: str
) -> ConfirmResult:
    after = ctx.store.get_memories([memory_id])[0]
    key = {"confirmation": "person", "repeat": "person_repeat", "undone": "undone"}[outcome]
    status = "active" if after.status == "active" else f"{after.status} ({_rest(after)})"
    message = _MESSAGES[key].format(ref=after.ref, client=person, n=after.confirmed,
                                    status=status)  # fmt: skip
    ctx.store.add_event(
        NewEvent(kind, after.scope, None, ctx.clock(), person, after.id,
                 {"ref": after.ref, "outcome": outcome, "by": "person", "status": after.status})
    )  # fmt: skip
    return _result(after, outcome, person, message)


def _result(after: Memory, outcome: str, client: str, message: str) -> ConfirmResult:
    """What a confirmation (or its undoing) answers: the memory's counts after it."""
    return ConfirmResult(
        ref=after.ref, outcome=outcome, counted=outcome == "confirmation",
        confirmed=after.confirmed, status=after.status, integration=client, message=message,
    )  # fmt: skip


def _rest(memory: Memory) -> str:
    reason = memory.evidence.get("rest")
    return str(reason) if reason else "not in the index"


def _visible(ctx: Context, memory_id: int, visible: Sequence[str]) -> Memory:
    found = ctx.store.get_memories([memory_id])
    if not found or found[0].scope not in visible or found[0].status == "purged":
        raise NotFound(
            f"{memory_ref(memory_id)} names no memory in this scope; give a ref that lessons, "
            "recall or remember returned here (check scope or cwd)."
        )
    return found[0]


def _current(ctx: Context, memory_id: int, visible: Sequence[str]) -> Memory:
    ref = memory_ref(memory_id)
    memory = _visible(ctx, memory_id, visible)
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
