"""Feedback: per retrieval, which memories and procedures were used and what they did.

Each assessment names a ref the retrieval returned, `used` (bool) and `effect` (`helped`,
`no_effect`, `harmed`, `unknown`). Memories keep their tallies in `evidence["feedback"]`
(read by `cairn.ranking.feedback` into the bounded ×0.5…×2 multiplier); procedures keep theirs
in columns. Assessing the same ref of the same retrieval again replaces the earlier assessment:
its tallies are taken back before the new ones are counted, so repeating feedback cannot
inflate a memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cairn.context import Context
from cairn.errors import InvalidInput, InvalidRef, NotFound
from cairn.models import NewEvent
from cairn.records.sessions import StoredAssessment
from cairn.refs import parse_ref, try_parse_ref
from cairn.refusal import safe_echo
from cairn.sessions.ledger import load_session, pending_retrievals, require_open
from cairn.sessions.models import EFFECTS, Assessment, FeedbackResult

MAX_ASSESSMENTS = 100
_REF_KEYS = ("ref", "memory_id", "procedure_id")
_KEYS = frozenset({*_REF_KEYS, "used", "effect"})


def give_feedback(
    ctx: Context, session_id: str, retrieval_id: str, assessments: object
) -> FeedbackResult:
    # Arguments first, then what the store holds, then the session's state (closed).
    number = parse_ref(retrieval_id, kind="ret")
    items = parse_assessments(assessments)
    session = load_session(ctx, session_id)
    retrieval = ctx.store.get_retrieval(number)
    if retrieval is None or retrieval.session_id != session.id:
        known = [r.ref for r in ctx.store.session_retrievals(session.id)]
        raise NotFound(
            f"{retrieval_id} is not a retrieval of session {session.id}; its retrievals are "
            f"{', '.join(known) or 'none yet'} (activate and recall return them)."
        )
    stray = [a.ref for a in items if a.ref not in retrieval.refs]
    if stray:
        raise InvalidRef(
            f"{retrieval.ref} did not return {', '.join(stray)}; assess only what it returned: "
            f"{', '.join(retrieval.refs) or 'nothing'}."
        )
    require_open(ctx, session.id)
    now, store = ctx.clock(), ctx.store
    with store.transaction():
        require_open(ctx, session.id)  # again under the write lock: a commit may have won
        for item in items:
            stored = StoredAssessment(
                retrieval.id, session.id, item.ref, item.used, item.effect, now
            )
            previous = store.put_assessment(stored)
            if previous is not None:
                _tally(ctx, previous.ref, previous.used, previous.effect, -1)
            _tally(ctx, item.ref, item.used, item.effect, +1)
        store.mark_feedback(retrieval.id, now)
        payload = {
            "retrieval_id": retrieval.ref,
            "assessments": [{"ref": a.ref, "used": a.used, "effect": a.effect} for a in items],
        }
        store.add_event(
            NewEvent("feedback", session.scope, session.id, now, ctx.integration, None, payload)
        )
    pending = tuple(r.ref for r in pending_retrievals(ctx, session.id))
    return FeedbackResult(session.id, retrieval.ref, len(items), pending)


def parse_assessments(value: object) -> list[Assessment]:
    if isinstance(value, Mapping) or not isinstance(value, Sequence) or isinstance(value, str):
        raise InvalidInput(
            "assessments must be a list such as "
            '[{"memory_id": "mem_3", "used": true, "effect": "helped"}].'
        )
    if not value:
        raise InvalidInput(
            "assessments is empty; assess at least one memory or procedure the retrieval "
            "returned (used false, effect unknown when it played no part)."
        )
    if len(value) > MAX_ASSESSMENTS:
        raise InvalidInput(f"at most {MAX_ASSESSMENTS} assessments per call; {len(value)} given.")
    items = [_assessment(i, item) for i, item in enumerate(value)]
    seen: set[str] = set()
    for item in items:
        if item.ref in seen:
            raise InvalidInput(f"{item.ref} is assessed twice in one call; assess it once.")
        seen.add(item.ref)
    return items


def _assessment(index: int, item: object) -> Assessment:
    if isinstance(item, Assessment):
        item = {"ref": item.ref, "used": item.used, "effect": item.effect}
    if not isinstance(item, Mapping):
        raise InvalidInput(f"assessment {index} must be an object with a ref, used and effect.")
    unknown = set(item) - _KEYS
    if unknown:
        raise InvalidInput(
            f"assessment {index} has unknown fields {sorted(unknown)}; use memory_id or "
            "procedure_id (or ref), used and effect."
        )
    refs = [item[k] for k in _REF_KEYS if item.get(k) is not None]
    if len(refs) != 1 or not isinstance(refs[0], str):
        raise InvalidInput(
            f"assessment {index} must name exactly one memory_id or procedure_id (or ref)."
        )
    ref = refs[0].strip()
    if try_parse_ref(ref, kind="mem") is None and try_parse_ref(ref, kind="proc") is None:
        raise InvalidRef(
            f"assessment {index}: {safe_echo(ref)} is neither a mem_N nor a proc_N ref."
        )
    used = item.get("used")
    if not isinstance(used, bool):
        raise InvalidInput(f"assessment {index} ({ref}): used must be true or false.")
    effect = item.get("effect")
    if effect not in EFFECTS:
        raise InvalidInput(
            f"assessment {index} ({ref}): effect {safe_echo(effect)} is not one of "
            f"{', '.join(EFFECTS)}."
        )
    return Assessment(ref, used, str(effect))


def _tally(ctx: Context, ref: str, used: bool, effect: str, by: int) -> None:
    names = ("used" if used else "not_used", effect)
    proc_id = try_parse_ref(ref, kind="proc")
    if proc_id is not None:
        for name in names:
            ctx.store.tally_procedure(proc_id, name, by)
        return
    memory_id = parse_ref(ref, kind="mem")
    found = ctx.store.get_memories([memory_id])
    if not found:
        return
    evidence: dict[str, Any] = dict(found[0].evidence)
    tallies = dict(evidence.get("feedback") or {})
    for name in names:
        tallies[name] = max(0, int(tallies.get(name, 0)) + by)
    evidence["feedback"] = tallies
    ctx.store.update_memory(memory_id, {"evidence": evidence})
