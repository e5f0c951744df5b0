"""Claude Code hook configuration: install cairn's hooks into a `settings.json`, or remove them.

Claude Code reads hooks from `~/.claude/settings.json` (user) and `<project>/.claude/
settings.json` (project), as

    {"hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command",
               "command": "...", "timeout": 10}]}], "SessionStart": [...], "Stop": [...]}}

cairn adds one group per event, all running the same command (`cairn-hook claude-code`, which
reads the event from the hook's JSON and asks the resident hook server, see
`cairn.adapters.hook_client`): `PreToolUse` for the tools lessons read (file tools, Bash,
search, WebFetch), `SessionStart`, `Stop` and `SessionEnd` (the last two count the refs the
agent named in its replies, from the transcript). Everything else in the file is kept as it was, in
its order. A hook is cairn's when its command holds one of `HOOK_MARKS` (the older, slower
`cairn lessons --hook claude-code` included, so installing over it upgrades it and uninstalling
removes it); installing replaces cairn's hooks (so it is idempotent: a second install changes
nothing and leaves the file byte for byte), uninstalling removes them and any group or event
left empty.
The file is written atomically.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cairn.code.sourceref import resolved_inside
from cairn.errors import Conflict, InvalidInput
from cairn.lessons.models import ClaudeHookInstall

HOOK_MARK = "cairn-hook claude-code"
HOOK_MARKS = (HOOK_MARK, "hook_client import main", "lessons --hook claude-code")
CLIENT_CODE = "import sys; from cairn.adapters.hook_client import main; sys.exit(main())"
EVENTS = ("PreToolUse", "SessionStart", "Stop", "SessionEnd")
# The tools lessons speak about, and any MCP server's remember (so Stop knows the session did).
TOOL_MATCHER = "Edit|MultiEdit|Write|NotebookEdit|Read|Bash|Grep|Glob|WebFetch|mcp__.*__remember"
TIMEOUT_SECONDS = 10


def settings_file(*, project: Path | None, user_home: Path | None) -> Path:
    """`<project>/.claude/settings.json`, or `~/.claude/settings.json` with `user_home`."""
    if (project is None) == (user_home is None):
        raise InvalidInput("install the hooks for a project (--project DIR) or the user (--user).")
    base = user_home if user_home is not None else project
    assert base is not None
    path = base / ".claude" / "settings.json"
    # A hostile repository's `.claude` may link anywhere (the user's own settings, say); the
    # user's home may link its `.claude` where it likes.
    if project is not None and resolved_inside(project, ".claude/settings.json") is None:
        raise InvalidInput(
            f"{path} leads out of the project {project} through a link; cairn writes a "
            "project's hooks inside it only (remove the link, or install with --user)."
        )
    return path


def hook_command(store: str | None) -> str:
    """The shell command the hooks run: this installation's `cairn-hook claude-code`, pinned
    to `store` if one was named (a PostgreSQL URL holding a password is refused: it would be
    written in clear)."""
    script = Path(sys.executable).with_name("cairn-hook")
    if script.is_file() and os.access(script, os.X_OK):
        parts = [str(script), "claude-code"]
    else:
        parts = [sys.executable, "-c", CLIENT_CODE, "claude-code"]
    if store is not None:
        if "://" in store and urlsplit(store).password:
            raise InvalidInput(
                "the store URL holds a password, which the hook command would write into "
                "settings.json in clear; set CAIRN_URL in Claude Code's environment instead and "
                "install without --store."
            )
        parts += ["--store", store]
    # `|| true`: whatever happens to cairn (even before its own error handling runs, e.g. a
    # broken installation), the agent sees exit status 0 and is never blocked.
    return shlex.join(parts) + " || true"


def install(path: Path, command: str) -> ClaudeHookInstall:
    data = _load(path)
    hooks = _hooks_of(data, path, create=True)
    changed: list[str] = []
    for event in EVENTS:
        groups = _groups(hooks, event, path)
        before = json.dumps(groups, sort_keys=True)
        kept = _without_cairn(groups)
        kept.append(_group(event, command))
        hooks[event] = kept
        if json.dumps(kept, sort_keys=True) != before:
            changed.append(event)
    if changed:
        _save(path, data)
    unchanged = tuple(e for e in EVENTS if e not in changed)
    return ClaudeHookInstall(str(path), command, tuple(changed), unchanged)


def uninstall(path: Path) -> ClaudeHookInstall:
    if not path.exists():
        return ClaudeHookInstall(str(path), "", (), EVENTS)
    data = _load(path)
    hooks = _hooks_of(data, path, create=False)
    changed: list[str] = []
    for event in list(hooks):
        groups = _groups(hooks, event, path)
        kept = _without_cairn(groups)
        if kept == groups:
            continue
        changed.append(event)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if "hooks" in data and not hooks:
        del data["hooks"]
    if changed:
        _save(path, data)
    return ClaudeHookInstall(str(path), "", tuple(changed), tuple(e for e in EVENTS
                                                                  if e not in changed))  # fmt: skip


def installed(path: Path) -> list[str]:
    """The events whose hooks run cairn in this settings file."""
    if not path.exists():
        return []
    hooks = _hooks_of(_load(path), path, create=False)
    return [e for e in hooks if _without_cairn(_groups(hooks, e, path)) != hooks[e]]


def _group(event: str, command: str) -> dict[str, Any]:
    entry = {"type": "command", "command": command, "timeout": TIMEOUT_SECONDS}
    if event == "PreToolUse":
        return {"matcher": TOOL_MATCHER, "hooks": [entry]}
    return {"hooks": [entry]}


def _is_cairn(hook: object) -> bool:
    command = str(hook.get("command", "")) if isinstance(hook, dict) else ""
    return any(mark in command for mark in HOOK_MARKS)


def _without_cairn(groups: Sequence[Any]) -> list[Any]:
    kept: list[Any] = []
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list) or not any(_is_cairn(h) for h in inner):
            kept.append(group)
            continue
        others = [h for h in inner if not _is_cairn(h)]
        if others:
            kept.append({**group, "hooks": others})
    return kept


def _load(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise Conflict(f"cannot read {path}: {exc.strerror}; check its permissions.") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Conflict(
            f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}); fix it or move it aside, "
            "then install again."
        ) from None
    if not isinstance(data, dict):
        raise Conflict(f"{path} holds {type(data).__name__}, not a settings object; fix it first.")
    return data


def _hooks_of(data: dict[str, Any], path: Path, *, create: bool) -> dict[str, Any]:
    hooks = data.setdefault("hooks", {}) if create else data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise Conflict(f'"hooks" in {path} is not an object; fix it by hand, then run again.')
    return hooks


def _groups(hooks: dict[str, Any], event: str, path: Path) -> list[Any]:
    groups = hooks.get(event, [])
    if not isinstance(groups, list):
        raise Conflict(f'"hooks.{event}" in {path} is not a list; fix it by hand, then run again.')
    return groups


def _save(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    handle, temporary = tempfile.mkstemp(prefix=".settings.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        # mkstemp makes the file private; a settings file is normally readable like any other.
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
