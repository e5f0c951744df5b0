"""Repository paths as lessons compare them: globs with `**`, directories and mentions in text.

A glob's `*` and `?` stay within one path segment and `**` spans any number of them
(`docs/**` holds `docs/a/b.md`; `migrations/*.py` does not hold `migrations/old/x.py`). A
pattern without glob characters names that path and, as a directory, everything under it.

Mentions are the paths a memory's text names: `src/billing.py`, `billing/`, `migrations/*.py`,
or a bare file name such as `invoice.py`. URLs are left out.
"""

from __future__ import annotations

import re
from functools import lru_cache

GLOB_CHARS = frozenset("*?[")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")
# A path with at least one `/`, or a file name with an extension starting with a letter.
_MENTION = re.compile(
    r"(?<![\w@/.*?-])"
    r"((?:[\w.*?\[\]-]+/)+[\w.*?\[\]-]*|[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,9})"
    r"(?![\w/])"
)


def is_glob(text: str) -> bool:
    return any(ch in GLOB_CHARS for ch in text)


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    index = 0
    while index < len(pattern):
        ch = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
            continue
        if pattern.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        out.append("[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch))
        index += 1
    return re.compile("".join(out))


def glob_match(pattern: str, path: str) -> bool:
    """Whether `path` is named by `pattern` (a glob, or a path that may be a directory)."""
    clean = pattern.strip().strip("/") if not pattern.startswith("**") else pattern.strip()
    if not clean:
        return False
    if not is_glob(clean):
        return path == clean or path.startswith(clean + "/")
    return bool(_compiled(clean).fullmatch(path))


def fixed_prefix(pattern: str) -> str:
    """The directory part of a glob before its first glob character ("" for `**/*.py`)."""
    cut = min((pattern.index(ch) for ch in GLOB_CHARS if ch in pattern), default=len(pattern))
    head = pattern[:cut]
    return head.rsplit("/", 1)[0] if "/" in head else ""


def under(path: str, directory: str) -> bool:
    directory = directory.strip("/")
    return bool(directory) and path.startswith(directory + "/")


def mentions(text: str) -> list[str]:
    """Paths, directories, globs and file names that `text` names, in order, without repeats."""
    cleaned = _URL.sub(" ", text)
    found: list[str] = []
    for match in _MENTION.finditer(cleaned):
        value = match.group(1).rstrip(".,;:")
        if value.startswith("./"):
            value = value[2:]
        if len(value) < 3 or value.strip("./*") == "" or value.startswith(("../", "/")):
            continue
        found.append(value)
    return list(dict.fromkeys(found))
