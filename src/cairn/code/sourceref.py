"""What a memory is about: the `source_ref` forms and the path rules that keep them in the repo.

Forms (DESIGN §4):

    src/app.py                 a whole file
    src/billing/               a directory (also without the slash, when the checkout has one)
    src/**/*.py                a glob (kept as written; matching files are not compared)
    src/app.py:10-24           a line range (`:10` is one line; `#L10-L24` is read the same)
    src/app.py::Billing.charge a symbol: a function, class or method (dotted for nesting)
    commit:3f2c9ab             a commit
    https://example.com/spec   a URL (nothing to compare, so never checked)

Paths are relative to the repository root and use `/`. An absolute path, a `~` path, a drive
letter, or `..` climbing out of the root is refused: a memory must say which file *of this
project* it is about, in a form every checkout of the project understands. `..` that stays
inside (`src/../lib/a.py`) is folded away. Symlinks are resolved only to check that they stay
in the root; a link leading out is treated as if the file were not there.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cairn.errors import InvalidInput

RefKind = Literal["file", "directory", "glob", "lines", "symbol", "commit", "url"]

MAX_SOURCE_REF_CHARS = 1000
MAX_SYMBOL_CHARS = 200

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")
_COMMIT = re.compile(r"commit:(?P<sha>\S*)", re.IGNORECASE)
_SHA = re.compile(r"[0-9a-fA-F]{4,64}")
_SYMBOL = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
_LINES = re.compile(r"(?P<path>.+?)(?::(?P<a>\d+)(?:-(?P<b>\d+))?|#L(?P<c>\d+)(?:-L?(?P<d>\d+))?)")
_DRIVE = re.compile(r"[A-Za-z]:")
GLOB_CHARS = frozenset("*?[")
_FORMS = (
    "Use a path relative to the repository root (src/app.py, or a directory: src/billing/), a "
    "line range (src/app.py:10-24), a symbol (src/app.py::Billing.charge), a glob "
    "(src/**/*.py), commit:<sha>, or a URL."
)


@dataclass(frozen=True, slots=True)
class SourceRef:
    """A parsed `source_ref`; `path` is normalised (relative, `/`-separated, no `.` or `..`)."""

    kind: RefKind
    text: str
    path: str | None = None
    start: int | None = None
    end: int | None = None
    symbol: str | None = None
    commit: str | None = None

    @property
    def checkable(self) -> bool:
        return self.kind != "url"


def parse_source_ref(text: str) -> SourceRef:
    """Parse and validate one `source_ref`; InvalidInput says which form was expected."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput(f"source_ref is blank. {_FORMS}")
    ref = text.strip()
    if len(ref) > MAX_SOURCE_REF_CHARS:
        raise InvalidInput(
            f"source_ref is {len(ref)} characters long; the limit is {MAX_SOURCE_REF_CHARS}. "
            f"{_FORMS}"
        )
    if _URL.fullmatch(ref):
        return SourceRef("url", ref)
    if commit := _COMMIT.fullmatch(ref):
        return _commit_ref(ref, commit["sha"])
    if "::" in ref:
        return _symbol_ref(ref)
    if lines := _LINES.fullmatch(ref):
        return _lines_ref(ref, lines)
    if ref.endswith(("/", "\\")):
        return SourceRef("directory", ref, path=normalise_path(ref))
    return SourceRef("file", ref, path=normalise_path(ref))


def is_glob(path: str) -> bool:
    return any(ch in GLOB_CHARS for ch in path)


def _commit_ref(ref: str, sha: str) -> SourceRef:
    if not _SHA.fullmatch(sha):
        raise InvalidInput(
            f"source_ref {ref!r} does not name a commit; write commit: followed by 4 to 64 hex "
            "digits, e.g. commit:3f2c9ab."
        )
    return SourceRef("commit", ref, commit=sha.lower())


def _symbol_ref(ref: str) -> SourceRef:
    raw_path, _, symbol = ref.partition("::")
    if not _SYMBOL.fullmatch(symbol) or len(symbol) > MAX_SYMBOL_CHARS:
        raise InvalidInput(
            f"source_ref {ref!r} names symbol {symbol!r}, which is not an identifier path; "
            "write path::Name or path::Class.method, e.g. src/billing.py::Invoice.total."
        )
    return SourceRef("symbol", ref, path=normalise_path(raw_path), symbol=symbol)


def _lines_ref(ref: str, match: re.Match[str]) -> SourceRef:
    first = match["a"] or match["c"]
    last = match["b"] or match["d"] or first
    start, end = int(first), int(last)
    if start < 1 or end < start:
        raise InvalidInput(
            f"source_ref {ref!r} has line range {start}-{end}; lines count from 1 and the range "
            "must not run backwards (e.g. src/app.py:10-24)."
        )
    return SourceRef("lines", ref, path=normalise_path(match["path"]), start=start, end=end)


def normalise_path(raw: str) -> str:
    """A repository-relative path, or InvalidInput saying how to write one."""
    text = raw.strip().replace("\\", "/")
    if not text:
        raise InvalidInput(f"source_ref has an empty path. {_FORMS}")
    if any(ord(ch) < 32 for ch in text):
        raise InvalidInput("source_ref path holds a control character; cite a plain file path.")
    if text.startswith(("/", "~")) or _DRIVE.match(text):
        raise InvalidInput(
            f"source_ref path {raw!r} is absolute; give it relative to the repository root "
            "(e.g. src/app.py), so every checkout of the project can find it."
        )
    parts: list[str] = []
    for part in text.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise InvalidInput(
                    f"source_ref path {raw!r} climbs out of the repository root with `..`; "
                    "cite a file inside the repository, relative to its root."
                )
            parts.pop()
            continue
        parts.append(part)
    if not parts:
        raise InvalidInput(
            f"source_ref path {raw!r} names the repository root itself; cite a file in it."
        )
    return "/".join(parts)


def inside_root(root: Path, relative: str) -> Path | None:
    """The file `relative` names under `root`, or None when it is missing, not a regular file,
    or a symlink (anywhere on the way) leads out of the root."""
    return _existing(resolved_inside(root, relative), Path.is_file)


def directory_inside_root(root: Path, relative: str) -> Path | None:
    """The directory `relative` names under `root`, on the same terms as `inside_root`."""
    return _existing(resolved_inside(root, relative), Path.is_dir)


def _existing(path: Path | None, test: Callable[[Path], bool]) -> Path | None:
    try:
        return path if path is not None and test(path) else None
    except OSError:
        return None


def resolved_inside(root: Path, relative: str) -> Path | None:
    """Where `relative` really leads under `root`, links followed (it need not exist yet), or
    None when that is the root itself or outside it: what a file read or written inside a
    repository must be checked with, since any folder of a hostile one may be a link."""
    try:
        real_root = os.path.realpath(root)
        real = os.path.realpath(os.path.join(real_root, *relative.split("/")))
    except (OSError, ValueError):
        return None
    if real == real_root or not real.startswith(real_root.rstrip(os.sep) + os.sep):
        return None
    return Path(real)


def escapes_root(root: Path, relative: str) -> bool:
    """True when the path exists under root only through a symlink that leads outside it."""
    candidate = Path(root, *relative.split("/"))
    try:
        exists = candidate.exists()
    except OSError:
        return False
    return exists and inside_root(root, relative) is None and candidate.is_file()
