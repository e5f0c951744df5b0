"""The lifecycle of a memory: evidence by tool, acts, contradiction rules and resting.

Statuses (DESIGN §3.6). A memory comes to rest — `resting`: still found by recall, ranked lower
(×0.5) and marked `resting`, but never given as a lesson or shown in a brief — in two ways, and
the reason is kept in `evidence["rest"]` so the right thing brings it back:

- `contradicted`: contradicted at least twice (reverts, discards) with no confirmation, unless
  pinned. A confirmation restores it; so does undoing enough of the contradicting acts.
- `idle`: nobody cited or restated it for 30 days. Pinned memories and preferences never rest.
  A cite, a restatement or a confirmation wakes it.

Evidence by tool (the reference document's rule). A restatement is a `remember` that found the
memory again (`matched`, `boosted`) or a `used` cite. Made by the client that wrote the memory
it is an *echo* and proves nothing; made by another client it is a *confirmation*, counted once
per client per session (once per UTC day outside sessions). Integrations named `cairn:...` are
cairn re-reading what it already holds (re-indexing, re-derived branch readings) and never
count. Per-client tallies live in `evidence["clients"]`, so `get_memory` shows which clients
confirmed, cited or echoed a memory.

A person's confirmation (`cairn confirm`, the web app) is its own integration (`person`,
`person:<name>`), never an echo, standing until the person undoes it
(`note_person_confirmation`, `undo_person_confirmation`).

Every change here re-reads the memory inside a write transaction and touches only its own keys
of the evidence mapping, so other writers' keys (feedback tallies) survive.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from cairn.context import Context
from cairn.models import Memory, NewEvent

REST_AFTER = timedelta(days=30)
CONTRADICTIONS_TO_REST = 2
DERIVED_PREFIX = "cairn:"
MAX_COUNTED_KEYS = 20
MAX_ACTS_SHOWN = 20
_NEVER_REST_TYPES = frozenset({"preference"})
SWEEP_EVERY = timedelta(hours=1)
_LAST_SWEEP: dict[tuple[str, tuple[str, ...]], datetime] = {}
_SWEEP_LOCK = threading.Lock()

Change = Callable[[Memory, dict[str, Any]], dict[str, Any]]


def _update(ctx: Context, memory_id: int, change: Change) -> Memory | None:
    """Apply `change(memory, evidence_copy) -> column changes` atomically; None if no memory."""
    store = ctx.store
    with store.transaction():
        found = store.get_memories([memory_id])
        if not found:
            return None
        memory = found[0]
        evidence = _copy(memory.evidence)
        changes = change(memory, evidence)
        if changes:
            store.update_memory(memory_id, changes)
        return store.get_memories([memory_id])[0]


def _copy(evidence: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in evidence.items():
        if isinstance(value, Mapping):
            out[key] = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in value.items()}
        elif isinstance(value, list):
            out[key] = list(value)
        else:
            out[key] = value
    return out


# Rules ---------------------------------------------------------------------------------------
def settled_status(
    memory: Memory, evidence: dict[str, Any], *, confirmed: int, contradicted: int
) -> str:
    """The status the contradiction rule gives; updates `evidence["rest"]` to match."""
    if memory.until is not None or memory.status not in ("active", "resting"):
        return memory.status
    rest = evidence.get("rest")
    if contradicted >= CONTRADICTIONS_TO_REST and confirmed == 0 and not memory.pinned:
        evidence["rest"] = "contradicted"
        return "resting"
    if memory.status == "resting" and rest == "contradicted":
        evidence.pop("rest", None)
        return "active"
    return memory.status


def _woken(memory: Memory, evidence: dict[str, Any]) -> str:
    """An idle memory that was cited, restated or confirmed comes back."""
    if memory.status == "resting" and evidence.get("rest") == "idle" and memory.until is None:
        evidence.pop("rest", None)
        return "active"
    return memory.status


def can_rest(memory: Memory) -> bool:
    return not memory.pinned and memory.type not in _NEVER_REST_TYPES


# Evidence by tool ------------------------------------------------------------------------------
def note_restatement(
    ctx: Context, memory_id: int, session_id: str | None, *, via: str
) -> str | None:
    """Count a restatement (`via` = "remember" or "cite") by the calling client.

    Returns what it was: "confirmation", "echo", "repeat" (this client already counted in this
    session or day), "derived" (cairn re-reading itself), or None for an unknown memory.
    """
    client = ctx.integration or "unknown"
    if client.startswith(DERIVED_PREFIX):
        return "derived"
    now = ctx.clock()
    key = session_id or f"day:{now.date().isoformat()}"
    outcome: list[str] = []

    def change(memory: Memory, evidence: dict[str, Any]) -> dict[str, Any]:
        clients = evidence.setdefault("clients", {})
        tally = clients.setdefault(client, {})
        field = "cited" if via == "cite" else "restated"
        tally[field] = int(tally.get(field, 0)) + 1
        if via == "remember":
            evidence["restated_at"] = now.isoformat()
        confirmed = memory.confirmed
        counted = evidence.setdefault("counted", {})
        seen = list(counted.get(client, []))
        if client == (memory.integration or "unknown"):
            tally["echo"] = int(tally.get("echo", 0)) + 1
            outcome.append("echo")
        elif key in seen:
            outcome.append("repeat")
        else:
            counted[client] = [*seen, key][-MAX_COUNTED_KEYS:]
            tally["confirmed"] = int(tally.get("confirmed", 0)) + 1
            confirmed += 1
            outcome.append("confirmation")
        changes: dict[str, Any] = {"evidence": evidence}
        if confirmed != memory.confirmed:
            changes["confirmed"] = confirmed
        status = _woken(memory, evidence)
        status = settled_status(
            _with_status(memory, status), evidence,
            confirmed=confirmed, contradicted=memory.contradicted,
        )  # fmt: skip
        if status != memory.status:
            changes["status"] = status
        return changes

    if _update(ctx, memory_id, change) is None:
        return None
    return outcome[0]


# A person's confirmation ---------------------------------------------------------------------
def note_person_confirmation(ctx: Context, memory_id: int, person: str) -> str | None:
    """Count a person's confirmation (`person` is the integration, `person` or
    `person:<name>`): never an echo, whoever wrote the memory, and standing until undone, so
    the same person confirming again is a "repeat". It restores a contradicted memory and wakes
    an idle one. What it changed is kept in `evidence["people"][person]` for the undo.

    Returns "confirmation", "repeat", or None for an unknown memory."""
    now = ctx.clock()
    outcome: list[str] = []

    def change(memory: Memory, evidence: dict[str, Any]) -> dict[str, Any]:
        people = evidence.setdefault("people", {})
        if person in people:
            outcome.append("repeat")
            return {}
        outcome.append("confirmation")
        people[person] = {
            "at": now.isoformat(), "prior_status": memory.status,
            "prior_rest": evidence.get("rest"), "prior_restated_at": evidence.get("restated_at"),
        }  # fmt: skip
        tally = evidence.setdefault("clients", {}).setdefault(person, {})
        tally["confirmed"] = int(tally.get("confirmed", 0)) + 1
        evidence["restated_at"] = now.isoformat()
        status = settled_status(
            _with_status(memory, _woken(memory, evidence)), evidence,
            confirmed=memory.confirmed + 1, contradicted=memory.contradicted,
        )  # fmt: skip
        return {"confirmed": memory.confirmed + 1, "evidence": evidence, "status": status}

    if _update(ctx, memory_id, change) is None:
        return None
    return outcome[0]


def undo_person_confirmation(ctx: Context, memory_id: int, person: str) -> bool:
    """Take back `person`'s confirmation: the count, and what it did to the status (an idle
    memory it woke rests again; a contradicted one it restored rests again unless another
    confirmation holds it). False when `person` had not confirmed the memory."""
    found: list[bool] = []

    def change(memory: Memory, evidence: dict[str, Any]) -> dict[str, Any]:
        entry = evidence.get("people", {}).pop(person, None)
        found.append(isinstance(entry, Mapping))
        if not isinstance(entry, Mapping):
            return {}
        tally = evidence.setdefault("clients", {}).setdefault(person, {})
        tally["confirmed"] = max(0, int(tally.get("confirmed", 0)) - 1)
        if evidence.get("restated_at") == entry.get("at"):  # nothing restated it since
            evidence.pop("restated_at", None)
            if entry.get("prior_restated_at"):
                evidence["restated_at"] = entry["prior_restated_at"]
        confirmed = max(0, memory.confirmed - 1)
        status = memory.status
        if entry.get("prior_rest") == "idle" and status == "active":
            status = "resting"  # it woke the memory; without it, it rests as it did
            evidence["rest"] = "idle"
        status = settled_status(
            _with_status(memory, status), evidence,
            confirmed=confirmed, contradicted=memory.contradicted,
        )  # fmt: skip
        return {"confirmed": confirmed, "evidence": evidence, "status": status}

    _update(ctx, memory_id, change)
    return bool(found and found[0])


def _with_status(memory: Memory, status: str) -> Memory:
    return replace(memory, status=status)


# Acts ------------------------------------------------------------------------------------------
def apply_act(
    ctx: Context, memory_id: int, *, effect: str, act_ref: str, kind: str, subject: str
) -> tuple[str, str] | None:
    """Confirm or contradict a memory for an act; returns (status before, status after)."""
    counter = "confirmed" if effect == "confirm" else "contradicted"
    now = ctx.clock()
    before: list[str] = []

    def change(memory: Memory, evidence: dict[str, Any]) -> dict[str, Any]:
        before.append(memory.status)
        entry = {
            "act": act_ref, "kind": kind, "subject": subject, "effect": counter,
            "at": now.isoformat(), "undo": f"undo_act('{act_ref}')",
        }  # fmt: skip
        evidence["acts"] = [*evidence.get("acts", []), entry][-MAX_ACTS_SHOWN:]
        confirmed = memory.confirmed + (counter == "confirmed")
        contradicted = memory.contradicted + (counter == "contradicted")
        status = _woken(memory, evidence) if counter == "confirmed" else memory.status
        status = settled_status(
            _with_status(memory, status), evidence,
            confirmed=confirmed, contradicted=contradicted,
        )  # fmt: skip
        return {counter: getattr(memory, counter) + 1, "evidence": evidence, "status": status}

    after = _update(ctx, memory_id, change)
    if after is None:
        return None
    _event(ctx, after, "act", {"act": act_ref, "kind": kind, "subject": subject,
                               "effect": counter, "status": after.status})  # fmt: skip
    return before[0], after.status


def undo_act_effect(
    ctx: Context, memory_id: int, *, effect: str, act_ref: str, prior_status: str
) -> tuple[str, str] | None:
    """Take back one act's effect on a memory; returns (status before, status after)."""
    counter = "confirmed" if effect == "confirm" else "contradicted"
    before: list[str] = []

    def change(memory: Memory, evidence: dict[str, Any]) -> dict[str, Any]:
        before.append(memory.status)
        evidence["acts"] = [a for a in evidence.get("acts", []) if a.get("act") != act_ref]
        confirmed = max(0, memory.confirmed - (counter == "confirmed"))
        contradicted = max(0, memory.contradicted - (counter == "contradicted"))
        status = memory.status
        if counter == "confirmed" and prior_status == "resting" and status == "active":
            # The act woke it; without the act it rests again for the reason it rested.
            status = "resting"
            evidence.setdefault("rest", "idle")
        status = settled_status(
            _with_status(memory, status), evidence,
            confirmed=confirmed, contradicted=contradicted,
        )  # fmt: skip
        return {counter: max(0, getattr(memory, counter) - 1), "evidence": evidence,
                "status": status}  # fmt: skip

    after = _update(ctx, memory_id, change)
    if after is None:
        return None
    _event(ctx, after, "undo_act", {"act": act_ref, "status": after.status})
    return before[0], after.status


# Resting ---------------------------------------------------------------------------------------
def rest_idle(ctx: Context, scopes: Sequence[str], *, force: bool = False) -> list[int]:
    """Rest every memory in `scopes` nobody cited or restated for 30 days; returns their ids.

    Recall calls this first, so it is throttled to once per `SWEEP_EVERY` of store time per
    store and scopes: a memory cannot become idle faster than that matters. Consolidation
    sweeps every scope with `force`, past the throttle.
    """
    now = ctx.clock()
    key = (ctx.store.location, tuple(sorted(scopes)))
    with _SWEEP_LOCK:
        last = _LAST_SWEEP.get(key)
        if not force and last is not None and timedelta(0) <= now - last < SWEEP_EVERY:
            return []
        _LAST_SWEEP[key] = now
    cutoff = now - REST_AFTER
    rested: list[int] = []
    for memory in ctx.store.idle_memories(list(scopes), cutoff):
        restated = _parse_time(memory.evidence.get("restated_at"))
        if (restated is not None and restated >= cutoff) or not can_rest(memory):
            continue

        def change(current: Memory, evidence: dict[str, Any]) -> dict[str, Any]:
            if current.status != "active" or current.until is not None:
                return {}
            evidence["rest"] = "idle"
            return {"status": "resting", "evidence": evidence}

        after = _update(ctx, memory.id, change)
        if after is not None and after.status == "resting":
            rested.append(memory.id)
            _event(ctx, after, "rest", {"reason": "idle", "days": REST_AFTER.days})
    return rested


def wake(ctx: Context, memory_id: int) -> None:
    """A cite brings an idle memory back (restatements do so in `note_restatement`)."""

    def change(memory: Memory, evidence: dict[str, Any]) -> dict[str, Any]:
        status = _woken(memory, evidence)
        return {} if status == memory.status else {"status": status, "evidence": evidence}

    _update(ctx, memory_id, change)


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _event(ctx: Context, memory: Memory, kind: str, payload: Mapping[str, Any]) -> None:
    ctx.store.add_event(
        NewEvent(kind, memory.scope, None, ctx.clock(), ctx.integration, memory.id, payload)
    )
