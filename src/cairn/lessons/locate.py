"""Where a parsed tool call lands in the checkout: repository paths and the lines it touches.

Paths an agent gives are absolute (Claude Code) or relative to its working directory (or to a
`cd` earlier in a shell line); memories cite paths relative to the repository root. A path
outside the checkout is dropped: it cannot be what a memory of this project cites. Symlinks
are resolved on both sides, so `/tmp/x` and `/private/tmp/x` are one file.

An edit's lines are found by looking its `old_string` up in the file as it is now, before the
edit: the first occurrence (every occurrence with `replace_all`). Text not found (a stale
edit, a new file) leaves the lines unknown, and lessons then speak of the file, not its lines.
A read with `offset`/`limit` covers those lines; `Write` rewrites the whole file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from cairn.lessons.calls import Invocation, RawCall, RawPath
from cairn.lessons.phrases import NO_COMMAND

MAX_FILE_BYTES = 5 * 1024 * 1024
_GIT_LOOKS = frozenset({"status", "log", "diff", "show", "blame", "grep", "ls-files",
                        "rev-parse", "describe", "shortlog", "reflog"})  # fmt: skip


@dataclass(frozen=True, slots=True)
class Target:
    """A file, directory or glob a call touches, relative to the repository root."""

    path: str
    is_dir: bool = False
    is_glob: bool = False
    lines: tuple[tuple[int, int], ...] = ()  # edited or read; empty means unknown or all
    whole: bool = False  # the call rewrites the whole file

    @property
    def basename(self) -> str:
        return PurePosixPath(self.path).name

    def ancestors(self) -> list[str]:
        parts = self.path.split("/")
        return ["/".join(parts[:n]) for n in range(1, len(parts))]


@dataclass(frozen=True, slots=True)
class ToolCall:
    tool: str
    action: str
    targets: tuple[Target, ...] = ()
    invocations: tuple[Invocation, ...] = ()
    urls: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()
    root: str | None = None
    writes: bool = False

    @property
    def changes(self) -> bool:
        """Whether the call may change the project (what the Stop reminder waits for): an edit,
        a write, or a command that does more than look around (`ls`, `git status`...)."""
        if self.action in ("edit", "write") or self.writes:
            return True
        return self.action == "run" and not all(_looks(inv) for inv in self.invocations)


def _looks(inv: Invocation) -> bool:
    if inv.program in NO_COMMAND and inv.program not in ("mkdir", "touch", "cp", "mv", "chmod"):
        return True
    return inv.program == "git" and bool(inv.words) and inv.words[0] in _GIT_LOOKS


def locate(raw: RawCall, cwd: Path | None, root: Path | None) -> ToolCall:
    real_root = _real(root) if root is not None else None
    start = _real(cwd) if cwd is not None else real_root
    targets: list[Target] = []
    for given in raw.paths:
        target = _target(given, start, real_root, raw.action)
        if target is not None and target not in targets:
            targets.append(target)
    return ToolCall(
        raw.tool, raw.action, tuple(targets), raw.invocations, raw.urls, raw.symbols,
        str(real_root) if real_root is not None else None, raw.writes,
    )  # fmt: skip


def _real(path: Path) -> Path:
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return path


def _target(given: RawPath, start: Path | None, root: Path | None, action: str) -> Target | None:
    relative = _relative(given, start, root)
    if relative is None:
        return None
    on_disk = root / relative if root is not None else None
    is_dir = given.path.endswith("/") or relative == "." or _is_dir(on_disk)
    if relative == ".":
        return None  # the whole repository: too broad to be what a lesson is about
    if given.glob:
        return Target(relative, is_glob=True)
    if is_dir:
        return Target(relative, is_dir=True)
    lines: tuple[tuple[int, int], ...] = ()
    if given.old_strings and on_disk is not None:
        lines = edited_lines(on_disk, given.old_strings, replace_all=given.replace_all)
    elif given.read_range is not None and action == "read":
        lines = (given.read_range,)
    return Target(relative, lines=lines, whole=given.whole)


def _relative(given: RawPath, start: Path | None, root: Path | None) -> str | None:
    text = given.path.replace("\\", "/")
    if text.startswith("~") or any(ord(ch) < 32 for ch in text):
        return None
    if root is None:
        joined = f"{given.base}/{text}" if given.base else text
        return None if os.path.isabs(joined) else _plain(joined)
    if os.path.isabs(text):
        absolute = Path(text)
    else:
        base = start or root
        absolute = Path(given.base) / text if given.base else base / text
        if given.base and not os.path.isabs(given.base):
            absolute = base / given.base / text
    absolute = Path(os.path.normpath(absolute))
    if not given.glob:
        absolute = _real(absolute)
    try:
        relative = absolute.relative_to(root).as_posix()
    except ValueError:
        return None
    return relative


def _plain(text: str) -> str | None:
    """A relative path with no checkout to resolve it in, taken as relative to the root."""
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def _is_dir(path: Path | None) -> bool:
    try:
        return path is not None and path.is_dir()
    except OSError:
        return False


def edited_lines(
    path: Path, old_strings: tuple[str, ...], *, replace_all: bool
) -> tuple[tuple[int, int], ...]:
    """The 1-based line ranges the `old_strings` occupy in the file now (none when missing)."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return ()
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return ()
    ranges: list[tuple[int, int]] = []
    for old in old_strings:
        position = text.find(old)
        while position >= 0:
            first = text.count("\n", 0, position) + 1
            ranges.append((first, first + old.count("\n", 0, len(old.rstrip("\n")))))
            if not replace_all:
                break
            position = text.find(old, position + max(1, len(old)))
    return tuple(dict.fromkeys(ranges))
