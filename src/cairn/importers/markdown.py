"""Markdown cut into items: each top-level bullet (with what is indented under it) and each
paragraph is one block, carrying the headings above it and its lines in the file.

Frontmatter (`---` ... `---` at the top) is not content. Neither is a section cairn itself wrote
between its markers (`cairn export --to agent-files`), so importing a file cairn exported to
brings nothing back: no echo.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MARK_BEGIN = "<!-- cairn:begin -->"
MARK_END = "<!-- cairn:end -->"
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])\s+")
_FENCE = re.compile(r"^\s*(```|~~~)")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")


@dataclass(frozen=True, slots=True)
class Block:
    headings: tuple[str, ...]
    text: str
    start: int  # first line, counting from 1 in the whole file
    end: int


def split_frontmatter(text: str) -> tuple[list[str], list[str], int]:
    """(frontmatter lines, body lines, how many lines precede the body)."""
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        for index in range(1, len(lines)):
            if lines[index].strip() in ("---", "..."):
                return lines[1:index], lines[index + 1 :], index + 1
    return [], lines, 0


@dataclass
class _Cutter:
    blocks: list[Block] = field(default_factory=list)
    headings: list[tuple[int, str]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    start: int = 0
    bullet: bool = False
    blank: bool = False
    fence: bool = False

    def close(self) -> None:
        text = "\n".join(self.lines).strip()
        if text:
            # The block ends at its last line of text, not at the blank lines after it.
            end = self.start + len(text.splitlines()) - 1
            titles = tuple(title for _, title in self.headings)
            self.blocks.append(Block(titles, text, self.start, end))
        self.lines, self.bullet, self.blank = [], False, False

    def begin(self, number: int, line: str, *, bullet: bool) -> None:
        self.close()
        self.start, self.bullet = number, bullet
        self.lines = [_BULLET.sub("", line, count=1) if bullet else line]

    def heading(self, level: int, title: str) -> None:
        self.close()
        self.headings = [(lv, t) for lv, t in self.headings if lv < level] + [(level, title)]

    def feed(self, number: int, line: str) -> None:
        if self.fence or _FENCE.match(line):
            self.fence = self.fence != bool(_FENCE.match(line))
            self._extend(number, line)
        elif not line.strip():
            self.blank = bool(self.lines)
            if self.lines:
                self.lines.append("")
        elif heading := _HEADING.match(line):
            self.heading(len(heading[1]), heading[2])
        elif _COMMENT.match(line):
            return
        elif _BULLET.match(line):
            self.begin(number, line, bullet=True)
        elif self.lines and (not self.blank or (self.bullet and line[:1] in " \t")):
            self.lines.append(line)
            self.blank = False
        else:
            self.begin(number, line, bullet=False)

    def _extend(self, number: int, line: str) -> None:
        if not self.lines:
            self.begin(number, line, bullet=False)
        else:
            self.lines.append(line)
            self.blank = False


def cut(text: str) -> list[Block]:
    """The blocks of a markdown text, frontmatter and cairn's own section left out."""
    _, body, offset = split_frontmatter(text)
    cutter = _Cutter()
    inside_marks = False
    for index, line in enumerate(body):
        number = offset + index + 1
        if line.strip() == MARK_BEGIN:
            cutter.close()
            inside_marks = True
        elif line.strip() == MARK_END:
            inside_marks = False
        elif not inside_marks:
            cutter.feed(number, line)
    cutter.close()
    return cutter.blocks
