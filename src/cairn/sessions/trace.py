"""The episodic trace: pins, progress lines and every other event of a scope, in time order.

Pins and progress lines are events (`pin`, `progress`), so the trace is one stream that
`episodes` reads around a moment and `history` reads from the end. Neither is semantically
indexed: a pin only reaches later turns through `history` or `episodes`; what should be found
days later belongs in `remember`. Each event renders as one line
`YYYY-MM-DD HH:MM:SS kind: text`, whitespace collapsed and capped at `LINE_CHARS`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from cairn.context import Context
from cairn.errors import InvalidInput
from cairn.evidence import check_cites, record_cites
from cairn.models import Event, NewEvent
from cairn.records.sessions import Session
from cairn.refs import event_ref, memory_ref
from cairn.refusal import check_content, check_no_secrets
from cairn.sessions.ledger import load_session, require_open
from cairn.sessions.models import EpisodesResult, HistoryResult, TraceLine, TraceWrite
from cairn.timeutil import parse_when

LINE_CHARS = 400
MAX_HISTORY_CHARS = 1_000_000
_MIN_LINE = 22  # "YYYY-MM-DD HH:MM:SS k:" is the shortest line there can be


def pin(ctx: Context, note: str, scope: str, session: Session | None) -> TraceWrite:
    note = check_note(ctx, note, "note")
    return _append(ctx, "pin", scope, session, {"note": note})


def log_progress(
    ctx: Context, session_id: str, text: str, used: Sequence[str] | None
) -> TraceWrite:
    text = check_note(ctx, text, "text")
    refs = list(used or ())
    session = load_session(ctx, session_id)
    cites = check_cites(ctx, refs, session.scope)
    session = require_open(ctx, session_id)  # the arguments first, then the session's state
    with ctx.store.transaction():
        written = _append(ctx, "progress", session.scope, session, {"text": text, "used": refs})
        record_cites(ctx, cites, scope=session.scope, branch=session.branch, session_id=session.id)
    return written


def check_note(ctx: Context, value: object, name: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be text.")
    check_content(value, max_bytes=ctx.settings.max_content_bytes)
    check_no_secrets(value, field=name)
    return value.strip()


def _append(
    ctx: Context, kind: str, scope: str, session: Session | None, payload: Mapping[str, Any]
) -> TraceWrite:
    now = ctx.clock()
    session_id = session.id if session is not None else None
    event_id = ctx.store.add_event(
        NewEvent(kind, scope, session_id, now, ctx.integration, None, payload)
    )
    return TraceWrite(event_ref(event_id), scope, now, session_id)


def episodes(ctx: Context, timestamp: str | datetime, scope: str) -> EpisodesResult:
    """`max_episode_lines` lines of the trace centred on `timestamp`, oldest first."""
    at = parse_when(timestamp, field="timestamp", end_of_day=False)
    want = ctx.settings.max_episode_lines
    before = ctx.store.trace_before(scope, at, want)  # newest first
    after = ctx.store.trace_after(scope, at, want)  # oldest first
    take_after = min(len(after), want // 2)
    take_before = min(len(before), want - take_after)
    take_after = min(len(after), want - take_before)
    events = [*reversed(before[:take_before]), *after[:take_after]]
    return EpisodesResult(scope, at, tuple(render(e) for e in events))


def history(ctx: Context, max_chars: int | None, scope: str) -> HistoryResult:
    """The most recent lines of the trace, oldest first, within `max_chars` characters."""
    budget = ctx.settings.max_history if max_chars is None else max_chars
    if (
        isinstance(budget, bool)
        or not isinstance(budget, int)
        or not 1 <= budget <= MAX_HISTORY_CHARS
    ):
        raise InvalidInput(
            f"max_chars {max_chars!r} is out of range; give 1 to {MAX_HISTORY_CHARS} "
            f"(default max_history, {ctx.settings.max_history})."
        )
    newest = ctx.store.trace_before(scope, None, budget // _MIN_LINE + 2)
    kept: list[TraceLine] = []
    used = 0
    for event in newest:
        line = render(event)
        cost = len(line.line) + (1 if kept else 0)
        if used + cost > budget:
            if not kept:
                # Even the newest line alone is too long: show as much of it as fits.
                room = budget - (len(line.line) - len(line.text))
                if room > 1:
                    kept.append(_cut(line, room))
            break
        kept.append(line)
        used += cost
    return HistoryResult(scope, budget, tuple(reversed(kept)), len(kept) < len(newest))


def _cut(line: TraceLine, room: int) -> TraceLine:
    return TraceLine(
        line.at, line.kind, line.text[: room - 1] + "…", line.event_id, line.session_id
    )


def render(event: Event) -> TraceLine:
    payload = event.payload
    if "redacted" in payload:
        text = f"[redacted: {payload['redacted']}]"
    else:
        text = _RENDERERS.get(event.kind, _generic)(event, payload)
    text = " ".join(text.split())
    if len(text) > LINE_CHARS:
        text = text[: LINE_CHARS - 1] + "…"
    return TraceLine(event.at, event.kind, text, event.ref, event.session_id)


def _ref(event: Event) -> str:
    return memory_ref(event.memory_id) if event.memory_id is not None else "-"


def _generic(event: Event, payload: Mapping[str, Any]) -> str:
    return json.dumps(dict(payload), ensure_ascii=False, sort_keys=True, default=str)


def _used(payload: Mapping[str, Any]) -> str:
    used = payload.get("used") or []
    return f" (used {', '.join(map(str, used))})" if used else ""


_Renderer = Callable[[Event, Mapping[str, Any]], str]
_RENDERERS: dict[str, _Renderer] = {
    "pin": lambda e, p: str(p.get("note", "")),
    "progress": lambda e, p: str(p.get("text", "")) + _used(p),
    "remember": lambda e, p: (
        f"{_ref(e)} {p.get('disposition', '')} [{p.get('type', '')}] {p.get('content', '')}"
    ),
    "correct": lambda e, p: f"{_ref(e)} replaces {p.get('replaces', '')}: {p.get('content', '')}",
    "forget": lambda e, p: f"{_ref(e)} forgotten: {p.get('reason', '')}",
    "purge": lambda e, p: f"{p.get('purged', _ref(e))} purged",
    "recall": lambda e, p: (
        f"ret_{e.id} {p.get('query', '')!r} -> "
        f"{', '.join(map(str, p.get('refs', []))) or 'nothing'}"
    ),
    "activate": lambda e, p: f"{e.session_id} opened: {p.get('task', '')}",
    "feedback": lambda e, p: (
        f"{p.get('retrieval_id', '')}: "
        + ", ".join(
            f"{a.get('ref')} {'used' if a.get('used') else 'unused'} {a.get('effect')}"
            for a in p.get("assessments", [])
        )
    ),
    "commit": lambda e, p: (
        f"{e.session_id} {p.get('outcome', '')}: {p.get('summary', '')}" + _used(p)
    ),
    "end": lambda e, p: f"{e.session_id} ended: {p.get('summary', '')}",
}
