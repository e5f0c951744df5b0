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
class Page(Numbered):
    """An indexed chunk with its ref number (`doc_<id>`)."""

    REF: ClassVar[str] = "doc"
    id: int
    scope: str
    path: str
    heading: str
    line_start: int
    line_end: int
    text: str
    digest: str
