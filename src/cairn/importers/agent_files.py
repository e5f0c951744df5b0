"""The agents' own memory files: Claude Code's CLAUDE.md, Codex's AGENTS.md, Cursor's rules,
Copilot's instructions and Gemini's GEMINI.md, in the checkout (and, asked for, the user-level
ones each tool documents in the home directory).

Each bullet or paragraph is one memory: a constraint when it forbids ("never", "must not",
"don't"), a preference when it prefers, else an instruction; the headings above it are its
tags, with the tool's name. Its `source_ref` is `file:first-last`, so a citation reports
`changed` once the file moves on. Repository items go to the checkout's scope, user-level ones
to `global`; a source_ref names a file of the checkout, so theirs is given as the reason
("from ~/.claude/CLAUDE.md:3-5").
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from cairn.importers.files import read_source
from cairn.importers.markdown import cut
from cairn.importers.model import Batch, Item

SYSTEM = "agent-files"
# (path in the checkout, tool); a directory entry ends in "/" and names the files' suffix.
REPO_FILES: tuple[tuple[str, str], ...] = (
    ("CLAUDE.md", "claude"),
    (".claude/CLAUDE.md", "claude"),
    ("CLAUDE.local.md", "claude"),
    ("AGENTS.md", "codex"),
    ("GEMINI.md", "gemini"),
    (".github/copilot-instructions.md", "copilot"),
    (".cursorrules", "cursor"),
)
REPO_FOLDERS: tuple[tuple[str, str, str], ...] = (
    (".cursor/rules", ".mdc", "cursor"),
    (".github/instructions", ".instructions.md", "copilot"),
)
USER_FILES: tuple[tuple[str, str, str], ...] = (
    (".claude", "CLAUDE.md", "claude"),
    (".gemini", "GEMINI.md", "gemini"),
    (".codex", "AGENTS.md", "codex"),
)
MAX_FOLDER_FILES = 200
_CONSTRAINT = re.compile(
    r"\b(never|must not|mustn't|do not|don't|shall not|should not|shouldn't|cannot|can't|"
    r"avoid|forbidden|not allowed)\b",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(r"\b(prefer|prefers|preferred|rather than|instead of)\b", re.IGNORECASE)
_TAG_CHARS = 64


def classify(text: str) -> str:
    if _CONSTRAINT.search(text):
        return "constraint"
    if _PREFERENCE.search(text):
        return "preference"
    return "instruction"


def repo_batch(root: Path, scope: str) -> Batch:
    items: list[Item] = []
    problems: list[str] = []
    for relative, tool in _repo_files(root):
        _read_into(root / relative, root, relative, tool, items, problems, cite=True)
    return Batch(SYSTEM, "checkout", scope, tuple(items), tuple(problems), cwd=str(root))


def user_batch(home: Path) -> Batch:
    items: list[Item] = []
    problems: list[str] = []
    for folder, name, tool in USER_FILES:
        path = home / folder / name
        if os.path.lexists(path):
            shown = f"~/{folder}/{name}"
            _read_into(path, home / folder, shown, tool, items, problems, cite=False)
    return Batch(SYSTEM, "user", "global", tuple(items), tuple(problems))


def _repo_files(root: Path) -> Iterator[tuple[str, str]]:
    for relative, tool in REPO_FILES:
        if os.path.lexists(root / relative):
            yield relative, tool
    for folder, suffix, tool in REPO_FOLDERS:
        where = root / folder
        if where.is_symlink() or not where.is_dir():
            continue
        names = sorted(e.name for e in os.scandir(where) if e.name.endswith(suffix))
        for name in names[:MAX_FOLDER_FILES]:
            yield f"{folder}/{name}", tool


def _read_into(
    path: Path,
    inside: Path,
    shown: str,
    tool: str,
    items: list[Item],
    problems: list[str],
    *,
    cite: bool,
) -> None:
    read = read_source(path, inside, shown)
    if read.text is None:
        problems.append(read.problem or f"{shown}: unreadable; skipped")
        return
    items.extend(file_items(read.text, shown, tool, cite=cite))


def file_items(text: str, shown: str, tool: str, *, cite: bool = True) -> list[Item]:
    """The items of one file's text, named `shown` in their source_refs (or reasons)."""
    out: list[Item] = []
    for block in cut(text):
        tags = [tool, *(_tag(h) for h in block.headings[-3:])]
        lines = f"{shown}:{block.start}-{block.end}"
        out.append(
            Item(
                origin=shown,
                section=" > ".join(block.headings),
                content=block.text,
                type=classify(block.text),
                tags=tuple(t for t in tags if t),
                source_ref=lines if cite else None,
                reason=None if cite else f"from {lines}",
            )
        )
    return out


def _tag(heading: str) -> str:
    words = " ".join(re.sub(r"[`*_\[\]()#]", " ", heading).lower().split())
    return words[:_TAG_CHARS].strip()
