"""Which documentation files pages may read, and reading one without leaving the checkout.

A cloned repository is hostile input: a `docs/passwd.md` symlinked to `/etc/passwd`, a FIFO
that blocks the first `open`, a link to `/dev/zero` that never ends. So, for each file:

- Listing: the walk below the repository root (hidden, vendored and build directories, nested
  repositories and symlinked directories are not entered), then `git check-ignore`, so a file
  git ignores is not a page. When git cannot answer, no file is listed (fail closed).
- `examine` decides from `lstat`/`stat` alone, without opening anything: the path must not be
  a symlink, must resolve inside the checkout, and must be a regular file (FIFOs, devices,
  sockets and directories are skipped) of at most `MAX_FILE_BYTES`. Every symlink is skipped,
  the ones pointing inside the checkout too (counted apart from those pointing out): a target
  that is documentation is listed, and indexed, under its own path anyway, while following
  links would let a committed `docs/env.md -> ../.env` turn the user's own ignored, hidden
  files into pages.
- `read_bounded` opens the resolved path one component at a time below the root with
  `O_NOFOLLOW` (so a directory or file swapped for a symlink after `examine` is refused) and
  `O_NONBLOCK` (so a FIFO swapped in does not block the open), checks with `fstat` that the
  descriptor is a regular file, and reads at most `MAX_FILE_BYTES + 1` bytes, however much the
  file grows meanwhile.
"""

from __future__ import annotations

import os
import stat
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from cairn.gitproc import git_process

MAX_FILES = 400
MAX_FILE_BYTES = 1024 * 1024
MAX_DEPTH = 6
MAX_DIRS = 2_000  # directories walked per listing, so a huge monorepo costs bounded time
MAX_CANDIDATES = 10_000  # documentation-looking files handed to `git check-ignore`
LIST_TTL_SECONDS = 10.0
GIT_TIMEOUT_SECONDS = 10.0
READ_BLOCK = 64 * 1024
DOC_SUFFIXES = (".md", ".markdown", ".rst", ".txt")
MARKDOWN_SUFFIXES = (".md", ".markdown")
SKIP_DIRS = frozenset(
    {
        "node_modules",
        "venv",
        "env",
        "__pycache__",
        "dist",
        "build",
        "target",
        "vendor",
        "site-packages",
        "third_party",
        "bower_components",
    }
)

# Why a listed file is not a page (the keys of `stats` → pages → skipped).
IGNORED = "ignored"
OUTSIDE = "outside_checkout"
SYMLINK = "symlink"  # a link to something inside the checkout
NOT_REGULAR = "not_regular"
TOO_LARGE = "too_large"
SECRET = "secret"
UNREADABLE = "unreadable"
REASONS = (IGNORED, OUTSIDE, SYMLINK, NOT_REGULAR, TOO_LARGE, SECRET, UNREADABLE)

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_FILE_FLAGS = (
    os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | _CLOEXEC
)

_lists: dict[str, tuple[float, Listing]] = {}
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Listing:
    """The files pages may index (relative, forward slashes, sorted, at most MAX_FILES)."""

    files: tuple[str, ...]
    ignored: int  # documentation-looking files git ignores
    failed: bool = False  # git could not say what is ignored, so nothing is listed


@dataclass(frozen=True, slots=True)
class Skipped:
    """A listed file that is not indexed, and why; `kinds` names the secrets found, if any."""

    path: str
    reason: str
    kinds: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Found:
    """A listed file that passed `examine`: where it really is and what `stat` said."""

    path: str  # as listed
    parts: tuple[str, ...]  # the resolved path's components below the root
    mtime_ns: int
    size: int
    identity: tuple[int, int, int]  # device, inode and ctime: a changed file changes these


# listing --------------------------------------------------------------------------------
def list_docs(root: Path) -> Listing:
    """The documentation files under `root` that git does not ignore (cached briefly)."""
    key, now = str(root), time.monotonic()
    with _lock:
        cached = _lists.get(key)
        if cached is not None and now - cached[0] < LIST_TTL_SECONDS:
            return cached[1]
    listing = _listing(root)
    with _lock:
        _lists[key] = (now, listing)
    return listing


def _listing(root: Path) -> Listing:
    if not (root / ".git").exists():
        return Listing((), 0)  # only a repository has "the project's documentation"
    candidates = sorted(_walk(root))
    if not candidates:
        return Listing((), 0)
    ignored = _ignored(root, candidates)
    if ignored is None:
        return Listing((), 0, failed=True)
    kept = [path for path in candidates if path not in ignored]
    return Listing(tuple(kept[:MAX_FILES]), len(ignored))


def _walk(root: Path) -> Iterator[str]:
    found = 0
    # os.walk does not follow symlinked directories (followlinks=False): they are not entered.
    for visited, (directory, subdirs, files) in enumerate(os.walk(root)):
        if visited >= MAX_DIRS:
            return
        relative = Path(directory).relative_to(root)
        depth = len(relative.parts)
        subdirs[:] = [
            d
            for d in subdirs
            if not d.startswith(".")
            and d not in SKIP_DIRS
            and depth < MAX_DEPTH
            # A nested repository or submodule is another project (and git will not answer
            # for paths inside a submodule).
            and not os.path.lexists(os.path.join(directory, d, ".git"))
        ]
        in_docs = bool(relative.parts) and relative.parts[0] == "docs"
        for name in files:
            lowered = name.lower()
            wanted = (
                lowered.endswith(MARKDOWN_SUFFIXES)
                or (in_docs and lowered.endswith(DOC_SUFFIXES))
                or (depth == 0 and lowered.startswith("readme"))
            )
            if wanted:
                yield (relative / name).as_posix()
                found += 1
                if found >= MAX_CANDIDATES:
                    return


def _ignored(root: Path, paths: Sequence[str]) -> set[str] | None:
    """The paths git ignores (.gitignore, info/exclude, core.excludesFile); None if unknown."""
    # check-ignore reads pathspecs and refuses magic (`--literal-pathspecs` included), so a file
    # named `:!x.md` would fail the whole batch; a leading `./` is never magic, and git
    # answers with each path as it was given.
    try:
        proc = git_process(
            root,
            ("check-ignore", "-z", "--stdin"),
            GIT_TIMEOUT_SECONDS,
            stdin_text="".join(f"./{path}\0" for path in paths),
        )
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    if proc.returncode not in (0, 1):  # 1: nothing is ignored
        return None
    return {path.removeprefix("./") for path in proc.stdout.split("\0") if path}


# examining and reading --------------------------------------------------------------------
def examine(root_real: str, path: str) -> Found | Skipped:
    """Whether `path` (below the resolved root) may be read, from stat calls alone."""
    full = os.path.join(root_real, *path.split("/"))
    try:
        info = os.lstat(full)
        real = os.path.realpath(full)
    except (OSError, ValueError):
        return Skipped(path, UNREADABLE)
    if not _inside(real, root_real):
        return Skipped(path, OUTSIDE)
    if stat.S_ISLNK(info.st_mode) or real != os.path.normpath(full):
        # The file, or a directory on its way (swapped after the walk), is a link.
        return Skipped(path, SYMLINK)
    if not stat.S_ISREG(info.st_mode):
        return Skipped(path, NOT_REGULAR)
    if info.st_size > MAX_FILE_BYTES:
        return Skipped(path, TOO_LARGE)
    parts = tuple(path.split("/"))
    identity = (info.st_dev, info.st_ino, info.st_ctime_ns)
    return Found(path, parts, info.st_mtime_ns, info.st_size, identity)


def _inside(real: str, root_real: str) -> bool:
    return real.startswith(root_real.rstrip(os.sep) + os.sep)


def read_bounded(root_real: str, found: Found) -> tuple[bytes, os.stat_result] | Skipped:
    """The file's bytes and the `fstat` of the descriptor read, or why it was not read."""
    try:
        fd = _open_beneath(root_real, found.parts)
    except (OSError, ValueError):
        return Skipped(found.path, UNREADABLE)  # includes ELOOP: a symlink swapped in
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return Skipped(found.path, NOT_REGULAR)  # swapped for a FIFO or device after stat
        if info.st_size > MAX_FILE_BYTES:
            return Skipped(found.path, TOO_LARGE)
        blocks: list[bytes] = []
        remaining = MAX_FILE_BYTES + 1
        while remaining > 0:
            block = os.read(fd, min(READ_BLOCK, remaining))
            if not block:
                break
            blocks.append(block)
            remaining -= len(block)
    except OSError:
        return Skipped(found.path, UNREADABLE)
    finally:
        os.close(fd)
    if remaining <= 0:
        return Skipped(found.path, TOO_LARGE)  # grew past the cap while being read
    return b"".join(blocks), info


def _open_beneath(root_real: str, parts: Sequence[str]) -> int:
    """A read-only descriptor of root/parts, refusing a symlink at every step below root."""
    if not parts or any(part in ("", ".", "..") for part in parts):
        raise ValueError("not a path below the root")
    if os.open not in os.supports_dir_fd:
        return os.open(os.path.join(root_real, *parts), _FILE_FLAGS)
    directory = os.open(root_real, _DIR_FLAGS)
    try:
        for part in parts[:-1]:
            inner = os.open(part, _DIR_FLAGS, dir_fd=directory)
            os.close(directory)
            directory = inner
        return os.open(parts[-1], _FILE_FLAGS, dir_fd=directory)
    finally:
        os.close(directory)
