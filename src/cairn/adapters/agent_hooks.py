"""The JSON agents' hooks speak: Claude Code's hook events, and a generic form for any agent.

Claude Code (documented hook input and output):

- `PreToolUse` gives `session_id`, `cwd`, `tool_name`, `tool_input`; lessons go back as
  `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": text}}`, which
  Claude Code adds to the model's context before the tool runs. No `permissionDecision` is
  given: lessons inform, they never allow or deny a call. Nothing to say prints nothing.
- `SessionStart` (with `source`: startup, resume, clear, compact) gets the standing brief as
  `hookSpecificOutput.additionalContext`.
- `Stop` answers `{"decision": "block", "reason": reminder}` once per session, when the
  session changed something and was not seen calling an MCP `remember` (PreToolUse sees
  `mcp__<server>__remember`), which makes Claude continue once with the reminder as its
  instruction; with `stop_hook_active` (Claude is already continuing because of a Stop hook)
  it says nothing, so it can never loop.
- `Stop` and `SessionEnd` give `transcript_path`, the session's JSON Lines transcript: the refs
  (`mem_12`) the agent named in its replies count as cites, once per session per ref
  (`cairn.lessons.transcript` reads it as hostile input). SessionEnd answers nothing.

Generic (`cairn lessons --stdin`): `{"tool" | "tool_name", "args" | "tool_input", "cwd",
"scope", "session_id", "limit", "client"}` in, the `lessons` result as JSON out.

`answer_hook` turns the raw bytes of a hook's stdin into what the hook prints (`HookReply`),
for both the in-process command (`cairn lessons --hook claude-code`, `--stdin`) and the
resident hook server (`cairn.adapters.hook_server`), so the two answer byte for byte alike.
It is the hook's top level: no failure of cairn's own escapes it. A Claude Code hook that
fails prints one line on stderr (which Claude Code does not feed to the model on exit 0) and
nothing on stdout; the generic form answers `{"lessons": [], "text": "", "error": ...}`. The
store is opened with a short busy timeout, so a long write by another process delays a tool
call by at most about a second.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass
from typing import Any

from cairn.config import Settings
from cairn.core import Cairn
from cairn.errors import CairnError
from cairn.lessons.transcript import reply_text
from cairn.models import to_jsonable

CLAUDE_CODE = "claude-code"
GENERIC = "stdin"
GENERIC_CLIENT = "agent-hook"
MAX_CLIENT_CHARS = 100
HOOK_BUSY_TIMEOUT_MS = 1_000
# Claude Code names an MCP tool mcp__<server>__<tool>: a remember on any memory server counts.
REMEMBER_TOOL = re.compile(r"mcp__.+__remember")

# How a reply gets its Cairn for an integration name: the in-process command opens one and
# closes it after the call; the server lends one it keeps open.
MemFor = Callable[[str], AbstractContextManager[Cairn]]


@dataclass(frozen=True, slots=True)
class HookReply:
    stdout: str  # printed as is (complete lines or nothing)
    stderr: str
    failed: bool = False  # cairn itself failed (the server then reopens the store)


def answer_hook(
    kind: str, mem_for: MemFor, raw: bytes, overrides: Mapping[str, Any] | None = None
) -> HookReply:
    """What a hook of `kind` (`claude-code` or `stdin`) prints for this input.

    `overrides` (the generic form only) are fields given on the command line (`--cwd`,
    `--scope`, `--session-id`, `--limit`): they win over the same fields of the input."""
    if kind == CLAUDE_CODE:
        return _claude_code_reply(mem_for, raw)
    if kind == GENERIC:
        return _generic_reply(mem_for, raw, overrides or {})
    raise ValueError(f"unknown hook kind {kind!r}; use {CLAUDE_CODE!r} or {GENERIC!r}.")


def answer_in_process(kind: str, raw: bytes, store: str | None,
                      settings: Settings | None = None,
                      overrides: Mapping[str, Any] | None = None) -> HookReply:  # fmt: skip
    """The slow path: open the store for this one call (as `cairn lessons --hook` does)."""

    def mem_for(integration: str) -> Cairn:
        found = settings or Settings.from_env()  # inside the reply: a bad variable is reported
        return open_for_hook(store or found.store_location, found, integration)

    return answer_hook(kind, mem_for, raw, overrides)


def open_for_hook(location: str, settings: Settings, integration: str) -> Cairn:
    quick = settings.with_overrides(busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS)
    return Cairn.open(location, settings=quick, integration=integration)


def parse_payload(raw: bytes) -> dict[str, Any]:
    payload = json.loads(raw) if raw.strip() else {}
    if not isinstance(payload, dict):
        raise ValueError("the hook's input is not a JSON object")
    return payload


def _claude_code_reply(mem_for: MemFor, raw: bytes) -> HookReply:
    try:
        payload = parse_payload(raw)
        with mem_for(CLAUDE_CODE) as mem:
            answer = claude_code_answer(mem, payload)
    except Exception as exc:  # noqa: BLE001 - the hook's top level: never block the agent
        return HookReply("", f"cairn: lessons hook skipped: {exc}\n", failed=True)
    # ASCII JSON: safe whatever the locale of the hook
    return HookReply("" if answer is None else json.dumps(answer) + "\n", "")


def _generic_reply(mem_for: MemFor, raw: bytes, overrides: Mapping[str, Any]) -> HookReply:
    failed = False
    try:
        payload = {**parse_payload(raw), **overrides}
        with mem_for(client_name(payload, GENERIC_CLIENT)) as mem:
            answer = generic_answer(mem, payload)
    except Exception as exc:  # noqa: BLE001 - like the hook: an answer, never a failure
        message = getattr(exc, "message", None) or str(exc)
        code = getattr(exc, "code", "error")
        answer = {"lessons": [], "text": "", "error": {"code": code, "message": message}}
        failed = code != "invalid_input"
    return HookReply(json.dumps(answer) + "\n", "", failed=failed)


def claude_code_answer(mem: Cairn, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """The hook's answer to one Claude Code event, or None to print nothing."""
    event = payload.get("hook_event_name")
    session = _text(payload.get("session_id"))
    cwd = _text(payload.get("cwd"))
    if event == "PreToolUse":
        tool = _text(payload.get("tool_name"))
        args = payload.get("tool_input")
        if tool is None:
            return None
        if REMEMBER_TOOL.fullmatch(tool) and session is not None:
            mem.agent_remembered(session_id=session)  # the Stop reminder is not needed now
            return None
        result = mem.lessons(tool, args if isinstance(args, Mapping) else {}, cwd=cwd,
                             session_id=session)  # fmt: skip
        return _context("PreToolUse", result.text) if result.lessons else None
    if event == "SessionStart":
        brief = mem.agent_start(cwd=cwd, session_id=session, source=_text(payload.get("source")))
        return _context("SessionStart", brief.text)
    if event in ("Stop", "SessionEnd") and session is not None:
        _cite_replies(mem, payload.get("transcript_path"), session, cwd)
    if event == "Stop":
        if payload.get("stop_hook_active") is True or session is None:
            return None
        reminder = mem.agent_stop(session_id=session)
        return None if reminder is None else {"decision": "block", "reason": reminder}
    return None


def _cite_replies(mem: Cairn, transcript: object, session: str, cwd: str | None) -> None:
    """Refs the agent named in its replies count as cites (once per session per ref)."""
    text = reply_text(transcript)
    if not text:
        return
    # e.g. a cwd that no longer exists: the hook's other answer still goes out
    with suppress(CairnError):
        mem.cite_replies(text, session_id=session, cwd=cwd)


def generic_answer(mem: Cairn, payload: Mapping[str, Any]) -> dict[str, Any]:
    tool = payload.get("tool", payload.get("tool_name"))
    args = payload.get("args", payload.get("tool_input"))
    limit = payload.get("limit", 3)
    result = mem.lessons(
        tool,  # type-checked by lessons: a clear error when missing
        args,
        scope=_text(payload.get("scope")),
        cwd=_text(payload.get("cwd")),
        session_id=_text(payload.get("session_id")),
        limit=limit,
    )
    data = to_jsonable(result)
    assert isinstance(data, dict)
    return data


def client_name(payload: Mapping[str, Any], default: str) -> str:
    name = _text(payload.get("client"))
    return name[:MAX_CLIENT_CHARS] if name else default


def _context(event: str, text: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def _text(value: object) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None
