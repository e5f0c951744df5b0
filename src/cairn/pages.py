"""Pages: the project's own documentation, chunked at headings and searched beside memories.

What is indexed, under the scope's repository root (the caller's checkout, else the folder the
scope's memories were written from) — see `cairn.page_source` for the listing and safe reading:

- `README*` at the root, everything under `docs/` ending in .md, .markdown, .rst or .txt, and
  every other `*.md` / `*.markdown` file, skipping hidden, vendored and build directories,
  nested repositories and whatever git ignores; at most `MAX_FILES` files of at most
  `MAX_FILE_BYTES` each. Only a git checkout is read: a scope whose folder is not a
  repository has no pages.
- Only regular files whose resolved path is inside the checkout are read; symlinks (pointing
  out or in), FIFOs, devices and sockets are never opened. A file holding something that
  looks like a credential (`cairn.refusal.find_secrets`) is not indexed, and chunks it had are
  dropped. Every skipped file is counted, by reason, in `stats` (`Refreshed.skipped`).
- Markdown is split at ATX (`## Title`) and setext headings, outside fenced code; reST at
  underlined titles; plain text by size only. A section longer than `CHUNK_CHARS` is split at
  blank lines. Each chunk keeps its heading trail ("Install › From source") and line range, and
  gets a ref `doc_<n>` that stays the same while its text does.

Freshness: every recall that can return pages stats the files (the file list itself is cached
for `LIST_TTL_SECONDS`, so a new file shows up within seconds). A file whose size or mtime
changed is read; if its bytes changed (sha256) it is chunked again; a file that disappeared or
is now skipped is dropped with its chunks. Nothing is read in the background. A stored
fingerprint without the `CHECKED` mark was indexed before these checks, so it is read again
once instead of trusted.

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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cairn import page_source
from cairn.page_source import Skipped
from cairn.ranking.lexical import BM25F, AnalysedDoc, CorpusStats, analyze, query_terms
from cairn.records.pages import Page, PageChunk, PageFile
from cairn.refusal import find_secrets
from cairn.store.base import Store

CHUNK_CHARS = 2_000
MAX_PAGES = 20
SNIPPET_CHARS = 200
PAGE_FIELD_WEIGHTS = {"text": 1.0, "heading": 0.5}
MARKDOWN_SUFFIXES = page_source.MARKDOWN_SUFFIXES
CHECKED = "checked:"  # prefixes a file's digest once it passed every check below
MAX_SKIP_MEMO = 4_096

_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_UNDERLINE = re.compile(r"^(=+|-+|~+|\^+|\*+|\++|#+)\s*$")

# Files skipped for a secret, by (root, path), with the stat identity they had: an unchanged
# file is not read and scanned again at every recall.
_secret_skips: dict[tuple[str, str], tuple[tuple[int, int, int, int, int], Skipped]] = {}
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
@dataclass(frozen=True, slots=True)
class Refreshed:
    """The scope's indexed files after a refresh, and the listed files left out and why."""

    files: dict[str, PageFile]
    skipped: tuple[Skipped, ...]
    ignored: int  # documentation files git ignores (never read)
    listing_failed: bool  # git could not tell what is ignored: nothing was indexed


def refresh(store: Store, scope: str, root: Path) -> Refreshed:
    """Bring the scope's pages in line with the files under `root`."""
    listing = page_source.list_docs(root)
    root_real = os.path.realpath(root)
    stored = store.page_files(scope)
    current: dict[str, PageFile] = {}
    skipped: list[Skipped] = []
    for path in listing.files:
        outcome = _refresh_file(store, scope, root_real, path, stored.get(path))
        if isinstance(outcome, Skipped):
            skipped.append(outcome)
        else:
            current[path] = outcome
    gone = [path for path in stored if path not in current]
    if gone:
        store.drop_page_files(scope, gone)
    return Refreshed(current, tuple(skipped), listing.ignored, listing.failed)


def _refresh_file(
    store: Store, scope: str, root_real: str, path: str, known: PageFile | None
) -> PageFile | Skipped:
    found = page_source.examine(root_real, path)
    if isinstance(found, Skipped):
        return found
    if (
        known is not None
        and known.digest.startswith(CHECKED)
        and (known.mtime_ns, known.size) == (found.mtime_ns, found.size)
    ):
        return known
    signature = (*found.identity, found.mtime_ns, found.size)
    with _lock:
        memo = _secret_skips.get((root_real, path))
    if memo is not None and memo[0] == signature:
        return memo[1]
    read = page_source.read_bounded(root_real, found)
    if isinstance(read, Skipped):
        return read
    data, info = read
    text = data.decode("utf-8", errors="replace")
    secrets = find_secrets(text)
    if secrets:
        skip = Skipped(path, page_source.SECRET, tuple(dict.fromkeys(s.kind for s in secrets)))
        with _lock:
            if len(_secret_skips) >= MAX_SKIP_MEMO:
                _secret_skips.clear()
            _secret_skips[(root_real, path)] = (signature, skip)
        return skip
    digest = CHECKED + hashlib.sha256(data).hexdigest()
    fingerprint = PageFile(path, info.st_mtime_ns, len(data), digest)
    if known is not None and known.digest == digest:
        # Touched, not changed: record the new mtime so the next recall skips the read.
        store.sync_page_file(scope, fingerprint, _chunks_of(store, scope, path))
    else:
        store.sync_page_file(scope, fingerprint, chunk_file(path, text))
    return fingerprint


def _chunks_of(store: Store, scope: str, path: str) -> list[PageChunk]:
    # A stored page is the chunk it was indexed from, so it is written back as it is.
    return [page for page in store.pages_in(scope) if page.path == path]


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
