"""A basic-memory folder: markdown notes with frontmatter (title, type, permalink, tags),
observations under `## Observations` (`- [category] text #tag (context)`) and relations under
`## Relations` (`- relation_type [[Target]]`).

Each note becomes a fact keyed by its title (its text outside those two sections, or the title
alone); each observation a memory of the note, tagged with its category and hashtags and
associated with the note; each relation a fact ("<note> <relation> <target>") associated with
both notes. A note's `created` (or `date`) in the frontmatter is when it happened.
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path

from cairn.errors import InvalidInput
from cairn.importers.files import given_path, read_source
from cairn.importers.markdown import split_frontmatter
from cairn.importers.model import Batch, Item
from cairn.timeutil import parse_when

SYSTEM = "basic-memory"
MAX_NOTES = 5000
_OBSERVATION = re.compile(r"^\s*[-*]\s+\[([^\]]{1,64})\]\s+(.+?)\s*$")
_RELATION = re.compile(r"^\s*[-*]\s+([\w ./-]{1,64}?)\s+\[\[([^\]]{1,200})\]\]")
_HASHTAG = re.compile(r"(?<![\w#])#([A-Za-z][\w-]{0,40})")
_SECTION = re.compile(r"^##\s+(.*?)\s*$")


def batch(folder: Path, scope: str) -> Batch:
    given_path(folder, Path.is_dir, "is not a folder; give the basic-memory project folder.")
    items: list[Item] = []
    problems: list[str] = []
    for relative in _notes(folder):
        read = read_source(folder / relative, folder, relative)
        if read.text is None:
            problems.append(read.problem or relative)
            continue
        items.extend(note_items(read.text, relative))
    notes = [i for i in items if i.key is not None and i.key.startswith("note:")]
    rest = [i for i in items if i not in notes]
    return Batch(SYSTEM, folder.name, scope, (*notes, *rest), tuple(problems))


def _notes(folder: Path) -> list[str]:
    found: list[str] = []
    for top, dirs, files in os.walk(folder):  # links to folders are not followed
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".md") and len(found) < MAX_NOTES:
                found.append(os.path.relpath(os.path.join(top, name), folder))
    return found


def note_items(text: str, origin: str) -> list[Item]:
    front, body, _ = split_frontmatter(text)
    meta = _frontmatter(front)
    title = meta.get("title") or Path(origin).stem
    title = " ".join(title.split())[:200]
    when = _when(meta.get("created") or meta.get("date"))
    tags = tuple(t for t in (_tag(title), *_list(meta.get("tags", ""))) if t)[:10]
    key = f"note:{title}"
    sections = _sections(body)
    prose = "\n".join(sections.get("", [])).strip()
    items = [Item(origin, title, prose or title, "fact", tags, key=key, occurred_at=when)]
    for line in sections.get("observations", []):
        if match := _OBSERVATION.match(line):
            category, said = match[1].strip(), match[2]
            extra = [h.lower() for h in _HASHTAG.findall(said)]
            obs_tags = tuple(dict.fromkeys([_tag(title), _tag(category), *extra]))[:10]
            items.append(
                Item(origin, title, said, _type(category), obs_tags, occurred_at=when,
                     relates=(key,))
            )  # fmt: skip
    for line in sections.get("relations", []):
        if match := _RELATION.match(line):
            kind, target = match[1].strip(), " ".join(match[2].split())
            items.append(
                Item(origin, title, f"{title} {kind.replace('_', ' ')} {target}", "fact",
                     (_tag(title), _tag(target)), key=f"relation:{title}|{kind}|{target}",
                     occurred_at=when, relates=(key, f"note:{target}"))
            )  # fmt: skip
    return items


def _sections(body: list[str]) -> dict[str, list[str]]:
    """Lines under `## Observations`, `## Relations`, and the rest (under "")."""
    out: dict[str, list[str]] = {"": []}
    current = ""
    for line in body:
        heading = _SECTION.match(line)
        if heading:
            name = heading[1].strip().lower()
            current = name if name in ("observations", "relations") else ""
            if current:
                out.setdefault(current, [])
                continue
        out[current].append(line)
    return out


def _frontmatter(lines: list[str]) -> dict[str, str]:
    meta: dict[str, str] = {}
    last = ""
    for line in lines:
        if line.startswith((" ", "-")) and last:
            meta[last] = f"{meta[last]}, {line.strip().lstrip('-').strip()}".strip(", ")
            continue
        name, sep, value = line.partition(":")
        if sep and name.strip():
            last = name.strip().lower()
            meta[last] = value.strip().strip("'\"")
    return meta


def _list(value: str) -> list[str]:
    return [_tag(v.strip().strip("'\"")) for v in value.strip("[]").split(",") if v.strip()]


def _type(category: str) -> str:
    lowered = category.lower()
    for name in ("preference", "decision", "constraint", "instruction"):
        if lowered.startswith(name[:6]):
            return name
    return "fact"


def _tag(name: str) -> str:
    return name.lower()[:64].strip()


def _when(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return parse_when(value, field="created", end_of_day=False)
    except InvalidInput:
        return None
