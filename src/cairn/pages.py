"""Pages: the project's own documentation, chunked at headings and searched beside memories.

What is indexed, under the scope's repository root (the caller's checkout, else the folder the
scope's memories were written from):

- `README*` at the root, everything under `docs/` ending in .md, .markdown, .rst or .txt, and
  every other `*.md` / `*.markdown` file, skipping hidden, vendored and build directories;
  at most `MAX_FILES` files of at most `MAX_FILE_BYTES` each, `MAX_DIRS` directories walked.
  Only a git checkout is read: a scope whose folder is not a repository has no pages.
- Markdown is split at ATX (`## Title`) and setext headings, outside fenced code; reST at
  underlined titles; plain text by size only. A section longer than `CHUNK_CHARS` is split at
  blank lines. Each chunk keeps its heading trail ("Install › From source") and line range, and
  gets a ref `doc_<n>` that stays the same while its text does.

Freshness: every recall that can return pages stats the files (the file list itself is cached
for `LIST_TTL_SECONDS`, so a new file shows up within seconds). A file whose size or mtime
changed is read; if its bytes changed (sha256) it is chunked again; a file that disappeared is
dropped with its chunks. Nothing is read in the background.

Matching (DESIGN §3.5): a page matches only when its text holds every word of the query (after
stemming and dropping stopwords); a page found by its title alone is not returned: at least one
word must be in the body. Matching pages are ranked with BM25F (body 1.0, heading 0.5) over the
scope's pages.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from cairn.page_records import Page, PageChunk, PageFile
from cairn.ranking.lexical import BM25F, AnalysedDoc, CorpusStats, analyze, query_terms
from cairn.store.base import Store

MAX_FILES = 400
MAX_FILE_BYTES = 512 * 1024
MAX_DEPTH = 6
MAX_DIRS = 2_000  # directories walked per listing, so a huge monorepo costs bounded time
CHUNK_CHARS = 2_000
LIST_TTL_SECONDS = 10.0
MAX_PAGES = 20
SNIPPET_CHARS = 200
PAGE_FIELD_WEIGHTS = {"text": 1.0, "heading": 0.5}
DOC_SUFFIXES = (".md", ".markdown", ".rst", ".txt")
MARKDOWN_SUFFIXES = (".md", ".markdown")
SKIP_DIRS = frozenset(
    {
        "node_modules",
        "venv",
        "env",
        "__pycache__",
        "dist",
        "build",
        "target",
        "vendor",
        "site-packages",
        "third_party",
        "bower_components",
    }
)

_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_UNDERLINE = re.compile(r"^(=+|-+|~+|\^+|\*+|\++|#+)\s*$")

_lists: dict[str, tuple[float, list[str]]] = {}
_indexes: dict[str, tuple[tuple[tuple[str, str], ...], _Index]] = {}
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class PageHit:
    page: Page
    score: float
    snippet: str


@dataclass(frozen=True, slots=True)
class _Index:
    pages: dict[str, Page]
    docs: dict[str, AnalysedDoc]
    scorer: BM25F


# files ------------------------------------------------------------------------------------
def doc_files(root: Path) -> list[str]:
    """The documentation files under `root`, relative, with forward slashes (cached briefly)."""
    key, now = str(root), time.monotonic()
    with _lock:
        cached = _lists.get(key)
        if cached is not None and now - cached[0] < LIST_TTL_SECONDS:
            return cached[1]
    found = sorted(_walk(root))[:MAX_FILES]
    with _lock:
        _lists[key] = (now, found)
    return found


def _walk(root: Path) -> Iterator[str]:
    if not (root / ".git").exists():
        return  # only a repository has "the project's documentation"
    for visited, (directory, subdirs, files) in enumerate(os.walk(root)):
        if visited >= MAX_DIRS:
            return
        relative = Path(directory).relative_to(root)
        depth = len(relative.parts)
        subdirs[:] = [
            d for d in subdirs if not d.startswith(".") and d not in SKIP_DIRS and depth < MAX_DEPTH
        ]
        in_docs = bool(relative.parts) and relative.parts[0] == "docs"
        for name in files:
            lowered = name.lower()
            wanted = (
                lowered.endswith(MARKDOWN_SUFFIXES)
                or (in_docs and lowered.endswith(DOC_SUFFIXES))
                or (depth == 0 and lowered.startswith("readme"))
            )
            if wanted:
                yield (relative / name).as_posix()


def refresh(store: Store, scope: str, root: Path) -> dict[str, PageFile]:
    """Bring the scope's pages in line with the files under `root`; returns the fingerprints."""
    stored = store.page_files(scope)
    listed = doc_files(root)
    current: dict[str, PageFile] = {}
    for path in listed:
        try:
            info = (root / path).stat()
        except OSError:
            continue
        known = stored.get(path)
        if known is not None and (known.mtime_ns, known.size) == (info.st_mtime_ns, info.st_size):
            current[path] = known
            continue
        fingerprint = _reindex(store, scope, root, path, info.st_mtime_ns, info.st_size, known)
        if fingerprint is not None:
            current[path] = fingerprint
    gone = [path for path in stored if path not in current]
    if gone:
        store.drop_page_files(scope, gone)
    return current


def _reindex(
    store: Store,
    scope: str,
    root: Path,
    path: str,
    mtime_ns: int,
    size: int,
    known: PageFile | None,
) -> PageFile | None:
    if size > MAX_FILE_BYTES:
        return None
    try:
        data = (root / path).read_bytes()
    except OSError:
        return None
    fingerprint = PageFile(path, mtime_ns, size, hashlib.sha256(data).hexdigest())
    if known is not None and known.digest == fingerprint.digest:
        # Touched, not changed: record the new mtime so the next recall skips the read.
        store.sync_page_file(scope, fingerprint, _chunks_of(store, scope, path))
        return fingerprint
    text = data.decode("utf-8", errors="replace")
    store.sync_page_file(scope, fingerprint, chunk_file(path, text))
    return fingerprint


def _chunks_of(store: Store, scope: str, path: str) -> list[PageChunk]:
    return [
        PageChunk(p.path, p.heading, p.line_start, p.line_end, p.text, p.digest)
        for p in store.pages_in(scope)
        if p.path == path
    ]


# chunking ---------------------------------------------------------------------------------
def chunk_file(path: str, text: str) -> list[PageChunk]:
    """The file's sections as chunks, in order; empty sections are left out."""
    lines = text.splitlines()
    lowered = path.lower()
    if lowered.endswith(MARKDOWN_SUFFIXES) or "." not in Path(lowered).name:
        sections = _markdown_sections(lines)
    elif lowered.endswith(".rst"):
        sections = _underlined_sections(lines)
    else:
        sections = [([], 0, len(lines))]
    out: list[PageChunk] = []
    for trail, start, end in sections:
        heading = " › ".join(trail) if trail else Path(path).name
        for first, last in _split(lines, start, end):
            while first < last and not lines[first].strip():
                first += 1
            while last > first and not lines[last - 1].strip():
                last -= 1
            body = "\n".join(lines[first:last]).strip()
            if body:
                digest = hashlib.sha256(f"{heading}\n{body}".encode()).hexdigest()
                out.append(PageChunk(path, heading, first + 1, last, body, digest))
    return out


def _markdown_sections(lines: Sequence[str]) -> list[tuple[list[str], int, int]]:
    """(heading trail, first body line, end) per section; the lines before any heading too."""
    sections: list[tuple[list[str], int, int]] = []
    trail: list[tuple[int, str]] = []
    start, fenced, i = 0, False, 0
    while i < len(lines):
        if _FENCE.match(lines[i]):
            fenced = not fenced
        elif not fenced:
            level, title, body_start = _heading_at(lines, i)
            if level:
                sections.append(([t for _, t in trail], start, i))
                trail = [(lv, t) for lv, t in trail if lv < level] + [(level, title)]
                start = i = body_start
                continue
        i += 1
    sections.append(([t for _, t in trail], start, len(lines)))
    return [(t, s, e) for t, s, e in sections if e > s]


def _heading_at(lines: Sequence[str], i: int) -> tuple[int, str, int]:
    """(level, title, first body line) when line i starts a heading, else (0, "", 0)."""
    atx = _ATX.match(lines[i])
    if atx:
        return len(atx.group(1)), atx.group(2).strip(), i + 1
    nxt = lines[i + 1] if i + 1 < len(lines) else ""
    paragraph = lines[i].strip() and not lines[i].lstrip().startswith(("-", "*", "+", ">", "|"))
    if paragraph and re.fullmatch(r" {0,3}(=+|-+)\s*", nxt):
        return (1 if nxt.strip().startswith("=") else 2), lines[i].strip(), i + 2
    return 0, "", 0


def _underlined_sections(lines: Sequence[str]) -> list[tuple[list[str], int, int]]:
    """reST: a title line underlined by a repeated punctuation character at least as long."""
    levels: list[str] = []
    sections: list[tuple[list[str], int, int]] = []
    trail: list[tuple[int, str]] = []
    start = 0
    for i in range(len(lines) - 1):
        title, under = lines[i].strip(), lines[i + 1].strip()
        if title and _UNDERLINE.match(under) and len(under) >= len(title) and title[0].isalnum():
            char = under[0]
            if char not in levels:
                levels.append(char)
            level = levels.index(char) + 1
            sections.append(([t for _, t in trail], start, i))
            trail = [(lv, t) for lv, t in trail if lv < level] + [(level, title)]
            start = i + 2
    sections.append(([t for _, t in trail], start, len(lines)))
    return [(t, s, e) for t, s, e in sections if e > s]


def _split(lines: Sequence[str], start: int, end: int) -> list[tuple[int, int]]:
    """Line ranges of at most about CHUNK_CHARS, cut at blank lines when a section is long."""
    parts: list[tuple[int, int]] = []
    first, size, last_blank = start, 0, -1
    for i in range(start, end):
        size += len(lines[i]) + 1
        if not lines[i].strip():
            last_blank = i
        if size > CHUNK_CHARS and i > first:
            cut = last_blank + 1 if last_blank > first else i
            parts.append((first, cut))
            first, size, last_blank = cut, sum(len(x) + 1 for x in lines[cut : i + 1]), -1
    if first < end:
        parts.append((first, end))
    return parts


# search -----------------------------------------------------------------------------------
def search(
    store: Store, scope: str, files: dict[str, PageFile], query: str, limit: int
) -> list[PageHit]:
    """Pages holding every word of the query, best first (at most `limit`)."""
    terms = query_terms(query)
    if not terms or limit <= 0:
        return []
    index = _index(store, scope, files)
    matching: dict[str, float] = {}
    for page_id, doc in index.docs.items():
        body = set(doc.fields.get("text", ()))
        words = body | set(doc.fields.get("heading", ()))
        if all(t in words for t in terms) and any(t in body for t in terms):
            matching[page_id] = index.scorer.score(terms, doc)
    ordered = sorted(matching, key=lambda i: (-matching[i], int(i)))[:limit]
    return [
        PageHit(index.pages[i], matching[i], snippet(index.pages[i].text, terms)) for i in ordered
    ]


def _index(store: Store, scope: str, files: dict[str, PageFile]) -> _Index:
    key = tuple(sorted((path, f.digest) for path, f in files.items()))
    with _lock:
        cached = _indexes.get(scope)
        if cached is not None and cached[0] == key:
            return cached[1]
    pages = {str(p.id): p for p in store.pages_in(scope)}
    docs = {
        page_id: AnalysedDoc(page_id, {"text": analyze(p.text), "heading": analyze(p.heading)})
        for page_id, p in pages.items()
    }
    scorer = BM25F(CorpusStats.from_docs(docs.values()), field_weights=PAGE_FIELD_WEIGHTS)
    built = _Index(pages, docs, scorer)
    with _lock:
        _indexes[scope] = (key, built)
    return built


def snippet(text: str, terms: Sequence[str]) -> str:
    """The first line holding a query word (else the first line), cut to SNIPPET_CHARS."""
    wanted = set(terms)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    chosen = next(
        (line for line in lines if wanted & set(analyze(line))), lines[0] if lines else ""
    )
    return chosen if len(chosen) <= SNIPPET_CHARS else chosen[: SNIPPET_CHARS - 1] + "…"
