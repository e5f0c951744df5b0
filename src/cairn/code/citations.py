"""Citations: what a memory cites, fingerprinted at write and checked again at read.

At write (`prepare_citation`) the cited text is reduced to normalised lines (whitespace
collapsed, so re-indenting or re-wrapping spaces is not a change) and hashed: one digest for
the whole cited text plus one short hash per line, and hashes of a few lines of context on each
side. Only hashes are stored, never code.

At read (`check`) the file is looked up in the caller's checkout first, then in the folder the
memory was written from, and the cited text is searched for again:

- a whole file is `same` when its normalised text hashes the same;
- a line range is `same` when its run of line hashes occurs anywhere in the file; when edits
  above it moved it, the new line numbers are reported; several occurrences are told apart by
  the context hashes, then by closeness to the old position;
- a symbol is found again by name (`cairn.code.symbols`) and is `same` when its body hashes the
  same, wherever it moved to;
- a directory is `same` while its entries (names, not contents) are the ones it had;
- a commit is `same` when the repository still has it;
- anything else is `changed`; a missing file, directory, symbol or commit is `gone`; a URL, a
  glob, or a memory written where no checkout was known, is `unchecked`.

A path that is neither a file nor a directory of the checkout is refused at write, unless it is
a glob (`src/**/*.py`), which is kept as written for lessons to match calls against.

Checking is cached twice, so a recall of 25 hits stays fast: file contents by (path, size,
mtime, inode), and verdicts by (citation, content hash) — an unchanged file is never re-parsed.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from cairn.code import git
from cairn.code.records import UNCHECKED, CitationCheck
from cairn.code.sourceref import (
    SourceRef,
    directory_inside_root,
    escapes_root,
    inside_root,
    is_glob,
    parse_source_ref,
)
from cairn.code.symbols import Extent, find_symbol
from cairn.context import Context
from cairn.errors import CairnError, InvalidInput
from cairn.lru import Lru
from cairn.records.code import CitationRow
from cairn.scope import scope_from_cwd

CONTEXT_LINES = 2
_SIGNATURE_LINES = 8  # decorators and a wrapped signature may come before the name
SCOPE_TTL_SECONDS = 30.0
MAX_FILE_BYTES = 5 * 1024 * 1024  # larger files are not fingerprinted or checked


@dataclass(frozen=True, slots=True)
class _File:
    sha: str
    lines: tuple[str, ...]  # normalised

    @property
    def digest(self) -> str:
        return digest_lines(self.lines)


_FILES: Lru[tuple[str, int, int, int], _File] = Lru(512)
_VERDICTS: Lru[tuple[int, str, str], CitationCheck] = Lru(8192)
# Which checkout holds a directory, and which scope a checkout has: asked on every recall.
_ROOTS: dict[str, tuple[float, Path]] = {}
_SCOPES: dict[str, tuple[float, str | None]] = {}
_SCOPES_LOCK = threading.Lock()


def normalise(line: str) -> str:
    return " ".join(line.split())


def line_hash(line: str) -> str:
    return hashlib.blake2b(line.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


def digest_lines(lines: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()


def read_file(path: Path) -> _File | None:
    """The file's normalised lines and content hash, cached while the file is untouched."""
    try:
        info = path.stat()
    except OSError:
        return None
    if info.st_size > MAX_FILE_BYTES:
        return None
    key = (str(path), info.st_size, info.st_mtime_ns, info.st_ino)
    cached = _FILES.get(key)
    if cached is not None:
        return cached
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    text = raw.decode("utf-8", errors="replace")
    loaded = _File(hashlib.sha256(raw).hexdigest(), tuple(normalise(x) for x in text.splitlines()))
    _FILES.put(key, loaded)
    return loaded


def _raw_text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


# Write ----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PreparedCitation:
    """A citation checked and fingerprinted at write, before the memory has an id."""

    ref: SourceRef
    root: str | None
    start_line: int | None = None
    end_line: int | None = None
    digest: str | None = None
    line_hashes: tuple[str, ...] = ()
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    file_hash: str | None = None
    commit: str | None = None

    def row(self, memory_id: int, scope: str, at: datetime) -> CitationRow:
        return CitationRow(
            memory_id=memory_id, scope=scope, kind=self.ref.kind, path=self.ref.path,
            symbol=self.ref.symbol, commit=self.commit or self.ref.commit, root=self.root,
            start_line=self.start_line, end_line=self.end_line, digest=self.digest,
            line_hashes=self.line_hashes, before=self.before, after=self.after,
            file_hash=self.file_hash, created_at=at,
        )  # fmt: skip


def prepare_citation(source_ref: str, root: Path | None) -> PreparedCitation:
    """Parse `source_ref`, check it against the checkout at `root` and fingerprint what it cites.

    With no checkout known only the form is checked, and the citation stays `unchecked`.
    """
    ref = parse_source_ref(source_ref)
    if root is None or ref.kind == "url":
        return PreparedCitation(ref, None if root is None else str(root))
    if ref.kind == "commit":
        return _prepare_commit(ref, root)
    assert ref.path is not None
    target = inside_root(root, ref.path) if ref.kind != "directory" else None
    if target is None:
        return _prepare_path_pattern(ref, root)
    loaded = read_file(target)
    if loaded is None:
        return PreparedCitation(ref, str(root))
    if ref.kind == "file":
        return PreparedCitation(ref, str(root), digest=loaded.digest, file_hash=loaded.sha)
    extent = _extent_at_write(ref, target, loaded, root)
    return _fingerprint(ref, str(root), loaded, extent)


def _prepare_path_pattern(ref: SourceRef, root: Path) -> PreparedCitation:
    """A path that is not a file: a directory (fingerprinted by its listing) or a glob."""
    assert ref.path is not None
    if ref.kind in ("file", "directory"):
        folder = directory_inside_root(root, ref.path)
        if folder is not None:
            return PreparedCitation(
                replace(ref, kind="directory"), str(root), digest=listing(folder)
            )
    if ref.kind == "file" and is_glob(ref.path):
        return PreparedCitation(replace(ref, kind="glob"), str(root))
    raise InvalidInput(_missing_message(ref, root))


def listing(folder: Path) -> str | None:
    """A digest of a directory's entries (names, `/` after subdirectories), or None if unreadable.

    Only the directory's own entries count, not their contents: a cited directory is `changed`
    when files were added, removed or renamed in it. Hidden entries and `__pycache__` are
    left out, since tools create them as a matter of course.
    """
    try:
        names = sorted(
            entry.name + ("/" if entry.is_dir() else "")
            for entry in os.scandir(folder)
            if not entry.name.startswith(".") and entry.name != "__pycache__"
        )
    except OSError:
        return None
    return digest_lines(names)


def _missing_message(ref: SourceRef, root: Path) -> str:
    assert ref.path is not None
    if escapes_root(root, ref.path):
        return (
            f"source_ref {ref.text!r} leads through a symlink out of the repository at {root}; "
            "cite the file inside the repository instead."
        )
    what = "directory" if ref.kind == "directory" else "file or directory"
    return (
        f"source_ref {ref.text!r}: {ref.path} is not a {what} in the repository at {root}; "
        "give a path relative to the repository root that exists (or a glob such as "
        "src/**/*.py), or omit source_ref."
    )


def _prepare_commit(ref: SourceRef, root: Path) -> PreparedCitation:
    assert ref.commit is not None
    if git.toplevel(root) is None:
        return PreparedCitation(ref, str(root))
    full = git.resolve_commit(root, ref.commit)
    if full is None:
        raise InvalidInput(
            f"source_ref {ref.text!r} names no commit of the repository at {root}; check the "
            "sha (git log --oneline) or cite the file instead."
        )
    return PreparedCitation(ref, str(root), commit=full)


def _extent_at_write(ref: SourceRef, target: Path, loaded: _File, root: Path) -> Extent:
    if ref.kind == "lines":
        assert ref.start is not None and ref.end is not None
        if ref.end > len(loaded.lines):
            raise InvalidInput(
                f"source_ref {ref.text!r} cites lines {ref.start}-{ref.end}, but {ref.path} has "
                f"{len(loaded.lines)} lines in the repository at {root}; check the range."
            )
        return Extent(ref.start, ref.end)
    assert ref.symbol is not None and ref.path is not None
    extent = find_symbol(ref.path, _raw_text(target), ref.symbol)
    if extent is None:
        raise InvalidInput(
            f"source_ref {ref.text!r}: no function, class or method {ref.symbol!r} was found "
            f"in {ref.path}; check the name (dotted for methods, e.g. Class.method) or cite "
            "a line range instead."
        )
    return extent


def _fingerprint(ref: SourceRef, root: str, loaded: _File, extent: Extent) -> PreparedCitation:
    lines = loaded.lines
    cited = lines[extent.start - 1 : extent.end]
    before = lines[max(0, extent.start - 1 - CONTEXT_LINES) : extent.start - 1]
    after = lines[extent.end : extent.end + CONTEXT_LINES]
    return PreparedCitation(
        ref, root, start_line=extent.start, end_line=extent.end, digest=digest_lines(cited),
        line_hashes=tuple(line_hash(x) for x in cited),
        before=tuple(line_hash(x) for x in before), after=tuple(line_hash(x) for x in after),
        file_hash=loaded.sha,
    )  # fmt: skip


# Read -----------------------------------------------------------------------------------------
def check(row: CitationRow, checkout: Path | None) -> CitationCheck:
    """The citation's status, read in `checkout` first, then in the folder it was written from."""
    if row.kind == "url":
        return UNCHECKED
    roots = _roots(checkout, row.root)
    if not roots:
        return UNCHECKED
    if row.kind == "commit":
        return _check_commit(row, roots)
    if row.kind == "glob":
        return CitationCheck("unchecked", checked_in=str(roots[0]))
    if row.kind == "directory":
        return _check_directory(row, roots)
    assert row.path is not None
    for root in roots:
        target = inside_root(root, row.path)
        if target is None:
            continue
        if row.digest is None:
            return CitationCheck("unchecked", checked_in=str(root))
        loaded = read_file(target)
        if loaded is None:
            return CitationCheck("unchecked", checked_in=str(root))
        key = (row.memory_id, row.digest, loaded.sha)
        verdict = _VERDICTS.get(key)
        if verdict is None:
            verdict = _judge(row, target, loaded)
            _VERDICTS.put(key, verdict)
        return replace(verdict, checked_in=str(root))
    return CitationCheck("gone", checked_in=str(roots[0]))


def _roots(checkout: Path | None, recorded: str | None) -> list[Path]:
    roots: list[Path] = []
    for candidate in (checkout, Path(recorded) if recorded else None):
        if candidate is not None and candidate.is_dir() and candidate not in roots:
            roots.append(candidate)
    return roots


def _check_directory(row: CitationRow, roots: Sequence[Path]) -> CitationCheck:
    assert row.path is not None
    for root in roots:
        folder = directory_inside_root(root, row.path)
        if folder is None:
            continue
        now = listing(folder)
        if row.digest is None or now is None:
            return CitationCheck("unchecked", checked_in=str(root))
        return CitationCheck("same" if now == row.digest else "changed", checked_in=str(root))
    return CitationCheck("gone", checked_in=str(roots[0]))


def _check_commit(row: CitationRow, roots: Sequence[Path]) -> CitationCheck:
    assert row.commit is not None
    repos = [root for root in roots if git.toplevel(root) is not None]
    if not repos:
        return UNCHECKED
    for root in repos:
        if git.resolve_commit(root, row.commit) is not None:
            return CitationCheck("same", checked_in=str(root))
    return CitationCheck("gone", checked_in=str(repos[0]))


def _judge(row: CitationRow, target: Path, loaded: _File) -> CitationCheck:
    if row.kind == "file":
        return CitationCheck("same" if loaded.digest == row.digest else "changed")
    if loaded.sha == row.file_hash and row.start_line is not None and row.end_line is not None:
        return CitationCheck("same", (row.start_line, row.end_line))  # the file is untouched
    if row.kind == "symbol":
        assert row.symbol is not None and row.path is not None
        moved = relocate(row, loaded.lines)
        if moved is not None and _defines(loaded.lines[moved[0] - 1 : moved[1]], row.symbol):
            # The whole body, its definition line included, is there verbatim: no need to
            # parse the file to know the symbol is unchanged.
            return CitationCheck("same", moved)
        extent = find_symbol(row.path, _raw_text(target), row.symbol)
        if extent is None:
            return CitationCheck("gone")
        body = loaded.lines[extent.start - 1 : extent.end]
        if digest_lines(body) == row.digest:
            return CitationCheck("same", (extent.start, extent.end))
        return CitationCheck("changed", (extent.start, extent.end))
    found = relocate(row, loaded.lines)
    if found is None:
        return CitationCheck("changed")
    return CitationCheck("same", found)


def _defines(body: Sequence[str], symbol: str) -> bool:
    name = re.escape(symbol.rsplit(".", 1)[-1])
    return any(re.search(rf"\b{name}\b", line) for line in body[:_SIGNATURE_LINES])


def relocate(row: CitationRow, lines: Sequence[str]) -> tuple[int, int] | None:
    """Where the cited run of lines is now (1-based, inclusive), or None when it is not found."""
    wanted = list(row.line_hashes)
    if not wanted:
        return None
    hashes = [line_hash(x) for x in lines]
    width = len(wanted)
    starts = [
        i
        for i in range(len(hashes) - width + 1)
        if hashes[i] == wanted[0] and hashes[i : i + width] == wanted
    ]
    if not starts:
        return None
    old = (row.start_line or 1) - 1
    best = max(starts, key=lambda i: (_context_score(row, hashes, i, width), -abs(i - old)))
    return best + 1, best + width


def _context_score(row: CitationRow, hashes: Sequence[str], start: int, width: int) -> int:
    before = hashes[max(0, start - len(row.before)) : start]
    after = hashes[start + width : start + width + len(row.after)]
    score = sum(1 for a, b in zip(reversed(before), reversed(row.before), strict=False) if a == b)
    return score + sum(1 for a, b in zip(after, row.after, strict=False) if a == b)


def checkout_for(cwd: Path | None) -> Path | None:
    """The root of the checkout holding `cwd`, or the directory itself outside git.

    Remembered for a few seconds, like `checkout_scope`: every recall asks it.
    """
    if cwd is None:
        return None
    try:
        directory = Path(cwd).expanduser().resolve()
        if not directory.is_dir():
            return None
    except (OSError, RuntimeError):
        return None
    key, now = str(directory), time.monotonic()
    with _SCOPES_LOCK:
        cached = _ROOTS.get(key)
        if cached is not None and now - cached[0] < SCOPE_TTL_SECONDS and cached[1].is_dir():
            return cached[1]
    root = git.toplevel(directory) or directory
    with _SCOPES_LOCK:
        _ROOTS[key] = (now, root)
    return root


def checkout_scope(root: Path) -> str | None:
    """The scope of a checkout, remembered for a few seconds: a recall asks it per call."""
    key, now = str(root), time.monotonic()
    with _SCOPES_LOCK:
        cached = _SCOPES.get(key)
        if cached is not None and now - cached[0] < SCOPE_TTL_SECONDS:
            return cached[1]
    try:
        scope: str | None = scope_from_cwd(root)
    except CairnError:
        scope = None
    with _SCOPES_LOCK:
        _SCOPES[key] = (now, scope)
    return scope


def prepare_for_claim(
    ctx: Context,
    source_ref: str | None,
    cwd: str | Path | None,
    scope: str,
    default_cwd: Path,
) -> PreparedCitation | None:
    """The citation of a remember call: checked against the checkout the call names (`cwd`),
    else the default directory when it is a checkout of `scope`, else the folder the scope's
    memories were last written from; with none of those only the form is checked."""
    if source_ref is None:
        return None
    ref = parse_source_ref(source_ref)
    root = _claim_root(ctx, cwd, scope, default_cwd) if ref.checkable else None
    return prepare_citation(source_ref, root)


def _claim_root(ctx: Context, cwd: str | Path | None, scope: str, default_cwd: Path) -> Path | None:
    if cwd is not None:
        return checkout_for(Path(cwd))
    here = checkout_for(default_cwd)
    if here is not None and checkout_scope(here) == scope:
        return here
    for root in ctx.store.citation_roots(scope, 5):
        if Path(root).is_dir():
            return Path(root)
    return None
