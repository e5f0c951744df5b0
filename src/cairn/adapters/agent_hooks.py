"""The JSON agents' hooks speak: Claude Code's hook events, and a generic form for any agent.

Claude Code (documented hook input and output):

- `PreToolUse` gives `session_id`, `cwd`, `tool_name`, `tool_input`; lessons go back as
  `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": text}}`, which
  Claude Code adds to the model's context before the tool runs. No `permissionDecision` is
  given: lessons inform, they never allow or deny a call. Nothing to say prints nothing.
- `SessionStart` (with `source`: startup, resume, clear, compact) gets the standing brief as
  `hookSpecificOutput.additionalContext`.
- `Stop` answers `{"decision": "block", "reason": reminder}` when the session changed
  something since the last reminder, which makes Claude continue once with the reminder as its
  instruction; with `stop_hook_active` (Claude is already continuing because of a Stop hook)
  it says nothing, so it can never loop.

Generic (`cairn lessons --stdin`): `{"tool" | "tool_name", "args" | "tool_input", "cwd",
"scope", "session_id", "limit", "client"}` in, the `lessons` result as JSON out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cairn.core import Cairn
from cairn.models import to_jsonable

CLAUDE_CODE = "claude-code"
MAX_CLIENT_CHARS = 100


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
        result = mem.lessons(tool, args if isinstance(args, Mapping) else {}, cwd=cwd,
                             session_id=session)  # fmt: skip
        return _context("PreToolUse", result.text) if result.lessons else None
    if event == "SessionStart":
        brief = mem.agent_start(cwd=cwd, session_id=session, source=_text(payload.get("source")))
        return _context("SessionStart", brief.text)
    if event == "Stop":
        if payload.get("stop_hook_active") is True or session is None:
            return None
        reminder = mem.agent_stop(session_id=session)
        return None if reminder is None else {"decision": "block", "reason": reminder}
    return None


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
