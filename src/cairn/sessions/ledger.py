"""The session ledger: open sessions, find the one a call names, refuse the wrong ones.

A call that names a session must name an open one, in the scope the session was opened for.
When the call gives neither `scope` nor `cwd`, the session's scope is used, so an agent only
has to carry the session id. Task context is a small JSON object of facts about the task;
every recall in the session merges what it is given into it and searches with it as an extra
cue.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cairn.context import Context
from cairn.errors import Conflict, InvalidInput, InvalidScope, NotFound
from cairn.records.sessions import Retrieval, Session
from cairn.refusal import check_no_secrets, check_strings, refuse_secrets, safe_echo
from cairn.scope import resolve_scope

_SESSION_ID = re.compile(r"^ses_[0-9a-f]{24}$")
MAX_CONTEXT_CHARS = 8_000
CUE_CHARS = 300


def new_session_id() -> str:
    return "ses_" + secrets.token_hex(12)


def load_session(ctx: Context, session_id: object) -> Session:
    """The session a call names; NotFound when there is none. The id is checked for a secret as
    given, and an unknown one is echoed only when it holds none."""
    if isinstance(session_id, str):
        refuse_secrets(session_id, field="session_id")
    text = session_id.strip() if isinstance(session_id, str) else ""
    found = ctx.store.get_session(text) if _SESSION_ID.match(text) else None
    if found is None:
        raise NotFound(
            f"there is no session {safe_echo(session_id)}; pass the session_id that activate "
            "returned, or call activate to open one."
        )
    return found


def require_open(
    ctx: Context, session_id: object, scope: str | None = None, *, closed_ok: bool = False
) -> Session:
    """The named session, refused when it is closed (unless `closed_ok`: a caller that checks
    its other arguments first, then `require_open` again) or was opened for another scope."""
    session = load_session(ctx, session_id)
    if not session.is_open and not closed_ok:
        closed = f" at {session.closed_at:%Y-%m-%d %H:%M:%S}Z" if session.closed_at else ""
        raise Conflict(
            f"session {session.id} was already {session.status}{closed}; call activate to "
            "open a new session."
        )
    if scope is not None and scope != session.scope:
        raise InvalidScope(
            f"session {session.id} belongs to scope {session.scope}, not {scope}; pass "
            f"scope={session.scope!r} (or omit scope and cwd), or activate a session in {scope}."
        )
    return session


def session_for_call(
    ctx: Context,
    session_id: object,
    scope: str | None,
    cwd: str | Path | None,
    default_cwd: Path,
    *,
    closed_ok: bool = False,
) -> Session:
    """The open session of a call; its scope must match the call's scope when one is given."""
    if scope is None and cwd is None:
        return require_open(ctx, session_id, closed_ok=closed_ok)
    resolved = resolve_scope(scope, cwd, default_cwd=default_cwd)
    return require_open(ctx, session_id, resolved, closed_ok=closed_ok)


def claim_scope(
    ctx: Context, args: Mapping[str, Any], default_cwd: Path, *, closed_ok: bool = False
) -> str:
    """The scope a remember call writes to, checked against its session when it names one."""
    session_id = args.get("session_id")
    if session_id is None:
        return resolve_scope(args.get("scope"), args.get("cwd"), default_cwd=default_cwd)
    return session_for_call(
        ctx, session_id, args.get("scope"), args.get("cwd"), default_cwd, closed_ok=closed_ok
    ).scope


def recall_session(
    ctx: Context,
    session_id: object,
    scope: str | None,
    cwd: str | Path | None,
    task_context: object,
    default_cwd: Path,
) -> tuple[Session | None, str, dict[str, Any]]:
    """The session a recall belongs to (or None), the scope it reads, and the session's task
    context with this call's facts."""
    if session_id is None:
        scope = resolve_scope(scope, cwd, default_cwd=default_cwd)
        return None, scope, merged_context(None, task_context)
    session = session_for_call(ctx, session_id, scope, cwd, default_cwd)
    return session, session.scope, merged_context(session, task_context)


def check_context(value: object) -> dict[str, Any]:
    """A task context: a JSON object of facts, small, and holding no secret."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise InvalidInput(
            "task_context must be an object of named facts, e.g. "
            '{"platform": "iOS", "auth_provider": "Auth0"}.'
        )
    try:
        text = json.dumps(dict(value), ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        raise InvalidInput(
            "task_context must hold only JSON values (text, numbers, booleans, lists, objects)."
        ) from None
    if len(text) > MAX_CONTEXT_CHARS:
        raise InvalidInput(
            f"task_context is {len(text)} characters as JSON, over the {MAX_CONTEXT_CHARS} limit; "
            "keep only the facts that should steer retrieval."
        )
    check_no_secrets(text, field="task_context")  # sees `"password": "..."` as a pair
    check_strings(dict(value), field="task_context")  # sees each text as given (no escaping)
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def merged_context(session: Session | None, task_context: object) -> dict[str, Any]:
    """The session's context with this call's facts laid over it (later facts win)."""
    base = dict(session.task_context) if session is not None else {}
    base.update(check_context(task_context))
    if len(json.dumps(base, ensure_ascii=False)) > MAX_CONTEXT_CHARS:
        raise InvalidInput(
            f"the session's task_context would grow past {MAX_CONTEXT_CHARS} characters; "
            "send fewer or shorter facts."
        )
    return base


def context_cue(query: str, task_context: Mapping[str, Any]) -> tuple[str, ...]:
    """One extra phrasing: the query followed by the context's facts, or nothing."""
    facts = " ".join(_flatten(task_context))[:CUE_CHARS].strip()
    return (f"{query} {facts}",) if facts else ()


def _flatten(value: object) -> list[str]:
    if isinstance(value, Mapping):
        return [word for k, v in value.items() for word in (str(k), *_flatten(v))]
    if isinstance(value, (list, tuple)):
        return [word for item in value for word in _flatten(item)]
    if value is None or isinstance(value, bool):
        return []
    return [str(value)]


def record_retrieval(
    ctx: Context,
    session: Session,
    event_id: int,
    source: str,
    refs: Sequence[str],
    task_context: Mapping[str, Any] | None = None,
) -> Retrieval:
    """Note a retrieval on the session (inside the caller's transaction)."""
    retrieval = Retrieval(event_id, session.id, ctx.clock(), source, tuple(dict.fromkeys(refs)))
    ctx.store.add_retrieval(retrieval)
    if task_context is not None and dict(task_context) != dict(session.task_context):
        ctx.store.update_session(session.id, {"task_context": dict(task_context)})
    return retrieval


def pending_retrievals(ctx: Context, session_id: str) -> list[Retrieval]:
    return [r for r in ctx.store.session_retrievals(session_id) if r.needs_feedback]
