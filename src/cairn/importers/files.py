"""Reading a source file as hostile input: a regular file, inside the folder it was looked
for in (a link may not lead out of it), at most 1 MiB, UTF-8 text. A file that fails any of
these is reported by name and skipped; it never stops the import of the others."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cairn.errors import InvalidInput

MAX_FILE_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class Read:
    text: str | None
    problem: str | None = None


def given_path(path: Path, is_kind: Callable[[Path], bool], refusal: str) -> Path:
    """`path` when `is_kind(path)` (`Path.is_file`, `Path.is_dir`) holds; else `InvalidInput`
    naming the path (clipped) and then saying `refusal` (what it is not, what to give)."""
    try:
        found = is_kind(path)
    except OSError:  # a name too long, a loop of links: not a file or folder either
        found = False
    if not found:
        raise InvalidInput(f"{str(path)[:200]} {refusal}")
    return path


def read_source(path: Path, inside: Path, shown: str) -> Read:
    """The text of `path` (named `shown` in messages), or why it was not read."""
    try:
        real = path.resolve(strict=True)
        root = inside.resolve(strict=True)
    except (OSError, RuntimeError):
        return Read(None, f"{shown}: cannot be resolved (a broken or looping link); skipped")
    if real != root and root not in real.parents:
        return Read(None, f"{shown}: leads outside {inside} (a link); skipped")
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        return Read(None, f"{shown}: cannot be opened ({exc.strerror}); skipped")
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)  # a directory, a FIFO or a device: never read
        return Read(None, f"{shown}: not a regular file; skipped")
    if info.st_size > MAX_FILE_BYTES:
        os.close(fd)
        return Read(None, f"{shown}: {info.st_size} bytes, over the 1 MiB limit; skipped")
    try:
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return Read(None, f"{shown}: cannot be read ({exc.strerror}); skipped")
    if len(data) > MAX_FILE_BYTES:
        return Read(None, f"{shown}: grew over the 1 MiB limit while read; skipped")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Read(None, f"{shown}: not UTF-8 text (byte {exc.start}); skipped")
    if "\x00" in text:
        return Read(None, f"{shown}: holds NUL bytes, so it is not text; skipped")
    return Read(text.removeprefix("\ufeff"))
