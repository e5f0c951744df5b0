"""Out again: the scope's pinned constraints, instructions and preferences written into an agent
file (`AGENTS.md`, `CLAUDE.md`, ...) as a section between cairn's markers.

Only the text between the markers is cairn's: everything outside them is kept byte for byte,
and a file without markers gets the section appended. The section is the same for the same
memories (ordered by type, then ref; no dates), so exporting again changes nothing, and
importing the file skips it (`cairn.importers.markdown`), so nothing echoes back. The file is
replaced atomically; one that is not a regular file, lies outside the checkout, is over 1 MiB,
is not UTF-8 or holds unpaired markers is refused.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cairn.errors import CairnError, InvalidInput
from cairn.importers.files import read_source
from cairn.importers.markdown import MARK_BEGIN, MARK_END
from cairn.models import Memory
from cairn.store.base import Store

EXPORTED_TYPES: tuple[str, ...] = ("constraint", "instruction", "preference")
TITLE = "## Project memory (kept by cairn: edit with `cairn correct`, not here)"


@dataclass(frozen=True, slots=True)
class AgentFileExport:
    path: str
    memories: int
    changed: bool  # False when the file already held exactly this section


def pinned_rules(store: Store, scope: str) -> list[Memory]:
    found = store.current_memories(
        [scope], types=EXPORTED_TYPES, statuses=("active", "resting"), limit=10_000
    )
    order = {name: n for n, name in enumerate(EXPORTED_TYPES)}
    return sorted((m for m in found if m.pinned), key=lambda m: (order[m.type], m.id))


def render(memories: list[Memory]) -> str:
    lines = [MARK_BEGIN, TITLE, ""]
    for memory in memories:
        first, *rest = memory.content.strip().splitlines() or [""]
        lines.append(f"- {memory.type}: {first}")
        lines.extend(f"  {line}".rstrip() for line in rest)
    if not memories:
        lines.append("(no pinned constraints, instructions or preferences in this scope)")
    lines.append(MARK_END)
    return "\n".join(lines) + "\n"


def merged(text: str, section: str, shown: str) -> str:
    """`text` with cairn's section replaced by `section` (or appended when it has none)."""
    lines = text.splitlines(keepends=True)
    begins = [n for n, line in enumerate(lines) if line.strip() == MARK_BEGIN]
    ends = [n for n, line in enumerate(lines) if line.strip() == MARK_END]
    if not begins and not ends:
        gap = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
        return f"{text}{gap}{section}"
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise InvalidInput(
            f"{shown} holds {len(begins)} {MARK_BEGIN} and {len(ends)} {MARK_END} markers out "
            "of order; leave exactly one pair (begin before end) or none, then export again."
        )
    return "".join(lines[: begins[0]]) + section + "".join(lines[ends[0] + 1 :])


def export_rules(store: Store, scope: str, root: Path, relative: str) -> AgentFileExport:
    """Write the scope's pinned rules into `relative` (a file of the checkout at `root`)."""
    try:
        return _export(store, scope, root, relative)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        shown = relative[:200]
        raise CairnError(f"cannot write {shown} ({reason}); choose another file.") from None


def _export(store: Store, scope: str, root: Path, relative: str) -> AgentFileExport:
    target = root / relative
    text = ""
    if os.path.lexists(target):
        read = read_source(target, root, relative)
        if read.text is None:
            problem = (read.problem or relative).removesuffix("; skipped")
            raise InvalidInput(f"cannot export to {problem}; choose another file.")
        text = read.text
    elif root.resolve() not in target.resolve().parents:
        raise InvalidInput(f"{relative} is outside the checkout {root}; name a file inside it.")
    rules = pinned_rules(store, scope)
    new = merged(text, render(rules), relative)
    if new == text:
        return AgentFileExport(str(target), len(rules), changed=False)
    _write(target.resolve() if os.path.lexists(target) else target, new)
    return AgentFileExport(str(target), len(rules), changed=True)


def _write(path: Path, text: str) -> None:
    # A temporary file beside it, then a rename: a crash leaves the old file or the new one.
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise
