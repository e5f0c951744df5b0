"""Stored records of the pages index (DESIGN §1 "Page", migration 0004): documentation files
and their chunks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from cairn.models import Numbered


@dataclass(frozen=True, slots=True)
class PageFile:
    """A documentation file as last indexed: enough to tell, cheaply, whether it changed."""

    path: str  # relative to the repository root, forward slashes
    mtime_ns: int
    size: int
    digest: str  # sha256 of the bytes


@dataclass(frozen=True, slots=True)
class PageChunk:
    """One section of a file, split at headings, before it has a ref."""

    path: str
    heading: str  # the heading trail, "Install › From source"
    line_start: int  # 1-based, inclusive
    line_end: int
    text: str
    digest: str  # sha256 of heading + text: an unchanged section keeps its ref


@dataclass(frozen=True, slots=True)
class Page(PageChunk, Numbered):
    """An indexed chunk with its ref number (`doc_<id>`) and the scope whose index holds it.

    Its fields are not in the `pages` column order (`scope` comes last), so the store reads
    it by name."""

    REF: ClassVar[str] = "doc"
    scope: str
