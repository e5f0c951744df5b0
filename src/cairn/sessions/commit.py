"""commit and end: close a session, write its episode, capture a procedure.

`commit` is refused while any retrieval of the session (its activation brief included) that
returned something lacks feedback, and the refusal lists them. The check runs again inside the
write transaction, so feedback racing a commit cannot slip past it, and two clients committing
one session cannot both succeed. Refs the summary names (`mem_12`) count as cites, once per
session, like refs an agent names in its replies (`cairn.evidence.record_named_cites`).
`end` closes a session without a procedure and without asking for feedback (an abandoned
task); it still writes an episode, with outcome `unknown`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from cairn.context import Context
from cairn.errors import Conflict, InvalidInput
from cairn.evidence import check_cites, record_cites, record_named_cites
from cairn.models import NewEvent
from cairn.records.sessions import NewEpisode, Session
from cairn.refs import memory_ref
from cairn.refusal import check_no_secrets, safe_echo
from cairn.sessions.ledger import load_session, pending_retrievals, require_open
from cairn.sessions.models import OUTCOMES, CommitResult
from cairn.sessions.procedures import capture, check_procedure, record_uses

MAX_SUMMARY_CHARS = 4_000


def commit(
    ctx: Context,
    session_id: str,
    *,
    outcome: object,
    summary: object,
    procedure: object = None,
    used: Sequence[str] | None = None,
) -> CommitResult:
    # Every argument is checked before the session's state: a wrong argument is reported as
    # such even when the session also has retrievals waiting for feedback.
    result = _check_outcome(outcome)
    text = _check_summary(summary)
    refs = _refs(used)
    session = load_session(ctx, session_id)
    cites = check_cites(ctx, refs, session.scope)
    draft = None
    if procedure is not None:
        draft = check_procedure(procedure, session, text, max_bytes=ctx.settings.max_content_bytes)
    session = require_open(ctx, session_id)
    _refuse_pending(ctx, session)
    vector = ctx.embedder.embed_many([draft.text])[0] if draft is not None else None
    with ctx.store.transaction():
        session = require_open(ctx, session_id)
        _refuse_pending(ctx, session)
        now = ctx.clock()
        procedure_id = None
        if draft is not None and vector is not None:
            procedure_id = capture(ctx, session, draft, vector, result, text, now)
        record_uses(ctx, session, result, text, now)
        record_cites(ctx, cites, scope=session.scope, branch=session.branch, session_id=session.id)
        # A ref named in the summary is a cite too, once per session (after `used`'s).
        named = record_named_cites(ctx, text, scope=session.scope, branch=session.branch,
                                   session_id=session.id, exclude=cites)  # fmt: skip
        cited = tuple(memory_ref(i) for i in cites) + named
        episode_id = _close(
            ctx, session, "committed", result, text, procedure_id, now, {"used": list(cited)}
        )
    return CommitResult(
        session.id,
        "committed",
        f"ep_{episode_id}",
        f"proc_{procedure_id}" if procedure_id else None,
        cited,
    )


def end(ctx: Context, session_id: str, *, summary: object = None) -> CommitResult:
    text = "ended without a commit" if summary is None else _check_summary(summary)
    with ctx.store.transaction():
        session = require_open(ctx, session_id)
        episode_id = _close(ctx, session, "ended", "unknown", text, None, ctx.clock(), {})
    return CommitResult(session.id, "ended", f"ep_{episode_id}")


def _close(
    ctx: Context,
    session: Session,
    status: str,
    outcome: str,
    summary: str,
    procedure_id: int | None,
    now: datetime,
    extra: Mapping[str, Any],
) -> int:
    store = ctx.store
    episode_id = store.add_episode(
        NewEpisode(
            session.id,
            session.scope,
            session.task,
            outcome,
            summary,
            procedure_id,
            session.opened_at,
            now,
        )
    )
    store.update_session(session.id, {"status": status, "closed_at": now, "episode_id": episode_id})
    payload = {
        "outcome": outcome,
        "summary": summary,
        "episode": f"ep_{episode_id}",
        "procedure": f"proc_{procedure_id}" if procedure_id else None,
        **extra,
    }
    kind = "commit" if status == "committed" else "end"
    store.add_event(NewEvent(kind, session.scope, session.id, now, ctx.integration, None, payload))
    return episode_id


def _refuse_pending(ctx: Context, session: Session) -> None:
    missing = [r.ref for r in pending_retrievals(ctx, session.id)]
    if missing:
        raise Conflict(
            f"session {session.id} cannot commit: retrievals without feedback: "
            f"{', '.join(missing)}. Call feedback for each (used and effect per memory or "
            "procedure), or end the session instead."
        )


def _check_outcome(value: object) -> str:
    if value not in OUTCOMES:
        raise InvalidInput(f"outcome {safe_echo(value)} is not one of {', '.join(OUTCOMES)}.")
    return str(value)


def _check_summary(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("summary is blank; say in a few sentences what happened.")
    check_no_secrets(value, field="summary")
    text = value.strip()
    if len(text) > MAX_SUMMARY_CHARS:
        raise InvalidInput(f"summary is {len(text)} characters; keep it under {MAX_SUMMARY_CHARS}.")
    return text


def _refs(used: object) -> list[str]:
    if used is None:
        return []
    if isinstance(used, str):
        return [used]
    if not isinstance(used, Sequence):
        raise InvalidInput("used must be a list of memory refs such as ['mem_12'].")
    return [str(r) for r in used]
