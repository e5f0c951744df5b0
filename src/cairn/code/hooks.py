"""Git hooks that report acts to cairn, and what to do when one fires.

`install` writes four small POSIX shell hooks into the repository's hooks directory (honouring
`core.hooksPath`; all worktrees share it):

- `post-merge` → the merged branch (from HEAD's reflog) is confirmed: `observe_merge`;
- `post-commit` → a commit saying "This reverts commit <sha>" contradicts: `observe_revert`;
- `reference-transaction` → a branch deleted without being merged is a discard:
  `observe_discard` (the shell filters first, so ordinary ref updates cost no Python start);
- `post-rewrite` → after `commit --amend` or `rebase`, commit citations follow the rewritten
  commits, so they do not read as `gone`.

Installing is idempotent: a hook cairn wrote is rewritten in place. A hook someone else wrote
is kept as `<hook>.pre-cairn` and run first, with the same arguments and input, and its exit
status is what git sees — cairn's part can never fail a git command.
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

from cairn.code import git
from cairn.code.records import HookInstall
from cairn.errors import Conflict, InvalidInput

MARKER = "# >>> cairn hook >>>"
CHAINED_SUFFIX = ".pre-cairn"
HOOK_NAMES = ("post-merge", "post-commit", "post-rewrite", "reference-transaction")
_STDIN_HOOKS = frozenset({"post-rewrite", "reference-transaction"})
_ZERO = frozenset("0")

# Shell run before cairn, per hook: exit early when the event cannot be an act.
_FILTERS = {
    "post-merge": "",
    "post-commit": (
        'git log -1 --format=%B HEAD 2>/dev/null | grep -q "This reverts commit" || exit $status'
    ),
    "post-rewrite": "",
    "reference-transaction": (
        '[ "$1" = committed ] || exit $status\n'
        "printf '%s\\n' \"$input\" | grep -q ' 0\\{40,64\\} refs/heads/' || exit $status"
    ),
}


def hook_script(name: str, command: Sequence[str]) -> str:
    """The text of one hook: the chained hook first, then cairn, never failing git."""
    call = " ".join(shlex.quote(part) for part in command)
    reads = name in _STDIN_HOOKS
    lines = [
        "#!/bin/sh",
        MARKER,
        "# Written by `cairn hook install`; reinstalling rewrites it. A hook that was here",
        f"# before is kept as {name}{CHAINED_SUFFIX} and runs first, unchanged.",
        'input=$(cat)' if reads else "input=",
        "status=0",
        f'if [ -x "$0{CHAINED_SUFFIX}" ]; then',
        (f"    printf '%s\\n' \"$input\" | \"$0{CHAINED_SUFFIX}\" \"$@\" || status=$?"
         if reads else f'    "$0{CHAINED_SUFFIX}" "$@" || status=$?'),
        "fi",
    ]  # fmt: skip
    if _FILTERS[name]:
        lines.append(_FILTERS[name])
    feed = "printf '%s\\n' \"$input\" |" if reads else "</dev/null"
    if reads:
        lines.append(f'{feed} {call} hook run {name} "$@" >/dev/null 2>&1 || true')
    else:
        lines.append(f'{call} hook run {name} "$@" {feed} >/dev/null 2>&1 || true')
    lines.append("exit $status")
    return "\n".join(lines) + "\n"


def cairn_command(store_location: str) -> list[str]:
    """How a hook starts this cairn: this interpreter, the CLI, this store."""
    return [
        sys.executable,
        "-c",
        "import sys; from cairn.adapters.cli import main; sys.exit(main())",
        "--store",
        store_location,
    ]


def install(directory: Path, store_location: str) -> HookInstall:
    hooks = git.hooks_dir(directory) if git.toplevel(directory) is not None else None
    if hooks is None:
        raise InvalidInput(
            f"{directory} is not inside a git repository; run `cairn hook install` from a "
            "checkout (or pass --cwd)."
        )
    hooks.mkdir(parents=True, exist_ok=True)
    command = cairn_command(store_location)
    written: list[str] = []
    chained: list[str] = []
    unchanged: list[str] = []
    for name in HOOK_NAMES:
        path = hooks / name
        text = hook_script(name, command)
        existing = _read(path)
        if existing == text:
            unchanged.append(name)
            continue
        if existing is not None and MARKER not in existing:
            _chain(path)
            chained.append(name)
        path.write_text(text, encoding="utf-8")
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        written.append(name)
    return HookInstall(str(hooks), tuple(written), tuple(chained), tuple(unchanged))


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None


def _chain(path: Path) -> None:
    kept = path.with_name(path.name + CHAINED_SUFFIX)
    if kept.exists():
        raise Conflict(
            f"{path} is not cairn's hook and {kept} already exists, so cairn cannot keep both; "
            f"merge them into {kept} by hand, delete {path}, and run `cairn hook install` again."
        )
    os.replace(path, kept)
    kept.chmod(kept.stat().st_mode | stat.S_IXUSR)


def rewritten_pairs(stdin: str) -> list[tuple[str, str]]:
    """(old, new) commit pairs from post-rewrite's input."""
    pairs: list[tuple[str, str]] = []
    for line in stdin.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] != parts[1]:
            pairs.append((parts[0].lower(), parts[1].lower()))
    return pairs


def deleted_branches(stdin: str) -> list[tuple[str, str | None]]:
    """(branch, old tip or None) for each branch a committed reference transaction deleted."""
    out: list[tuple[str, str | None]] = []
    for line in stdin.splitlines():
        parts = line.split()
        if len(parts) != 3 or set(parts[1]) != _ZERO or not parts[2].startswith("refs/heads/"):
            continue
        old = None if set(parts[0]) == _ZERO else parts[0].lower()
        out.append((parts[2].removeprefix("refs/heads/"), old))
    return out
