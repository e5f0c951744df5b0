"""`.cairn.toml`: a scope committed with the project, which every checkout and worktree shares.

A file `.cairn.toml` at the root of the checkout holding `scope = "project:acme/api"` names the
project's scope, overriding detection from the remote or the path: a fork, a mirror and a
renamed remote then share one memory, and so does every worktree (the file is committed, so
each worktree has it). The root is the nearest directory at or above the working directory
holding a `.git` entry (a directory, or the file a worktree has); with none, the working
directory itself.

The file comes with the repository, so it is read as hostile input: only a regular file (not a
symlink, device or FIFO), at most `MAX_BYTES`, valid TOML, and a valid scope other than
`global`; anything else is an error that names the file. A file without a `scope` key is left
to other tools and detection goes on as usual.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Callable
from pathlib import Path

from cairn.errors import InvalidScope

FILE_NAME = ".cairn.toml"
MAX_BYTES = 16 * 1024
# Never follow a symlink put in place after the check, never block on a FIFO.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_MAX_DEPTH = 64  # directories walked up looking for the root of the checkout


def checkout_root(directory: Path) -> Path:
    """The nearest directory at or above `directory` (resolved) holding `.git`, else itself."""
    current = directory
    for _ in range(_MAX_DEPTH):
        if os.path.lexists(current / ".git"):
            return current
        if current.parent == current:
            break
        current = current.parent
    return directory


def configured_scope(directory: Path, parse: Callable[[str], str]) -> str | None:
    """The scope `.cairn.toml` at the checkout's root names (checked by `parse`, which raises
    InvalidScope), or None when there is none."""
    path = checkout_root(directory) / FILE_NAME
    text = _read(path)
    if text is None:
        return None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _bad(path, f"is not valid TOML ({exc})") from None
    if "scope" not in data:
        return None
    value = data["scope"]
    if not isinstance(value, str):
        raise _bad(path, f'has scope = {value!r}; it must be a string such as "project:acme/api"')
    try:
        scope = parse(value)
    except InvalidScope as exc:
        raise _bad(path, f"names an invalid scope: {exc.message}") from None
    if scope == "global":
        raise _bad(path, "names the scope `global`; a project file names the project's scope")
    return scope


def _read(path: Path) -> str | None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _bad(path, f"cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise _bad(path, "is not a regular file (a symlink, directory, device or FIFO)")
    if info.st_size > MAX_BYTES:
        raise _bad(path, f"is {info.st_size} bytes; it may hold at most {MAX_BYTES}")
    try:
        fd = os.open(path, _OPEN_FLAGS)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise _bad(path, "is not a regular file")
            raw = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise _bad(path, f"cannot be read ({exc.strerror})") from None
    if len(raw) > MAX_BYTES:
        raise _bad(path, f"is over {MAX_BYTES} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _bad(path, "is not UTF-8 text") from None


def _bad(path: Path, problem: str) -> InvalidScope:
    return InvalidScope(
        f'{path} {problem}. Fix or remove it (it holds e.g. scope = "project:acme/api"), or '
        "pass scope explicitly."
    )
