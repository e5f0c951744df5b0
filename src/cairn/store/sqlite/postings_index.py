"""The postings pool of a large SQLite store (`cairn.store.sqlite.postings`), kept in step with
the store by every process's writes.

Built from FTS5 itself: the `fts5vocab` table of type 'instance' lists every token the
tokenizer made (term, document, column), read term by term in one query; the table's rows are
FTS5's own `lexical_docsize` ids. Then, on each use, the pool applies what changed since: the
`lexical_log` rows (migration 0010, kept by triggers on `lexical_lengths`) past the sequence it
last applied name the documents written or deleted since; each is masked and, when it still
exists, re-read from FTS5's content and tokenized by a private in-memory FTS5 table declared
exactly as the store's `lexical` (its CREATE statement), so no token is made by Python.

The pool is rebuilt when the store's `lexepoch` moves (a purge moves it: the pool then holds
no word of a purged memory), when the log has a gap (more than its 50,000 rows were written
since) or runs behind the pool (a file restored from a backup), when the documents appended or
masked since the build pass 5% of the store, and when its count of documents parts from the
store's (`lexical_totals`). A status change moves `epoch` (the dense caches reload) but not the
pool: a filter's statuses are read from `memories` (`postings_filter`). The statistics
(documents, tokens) are kept exact through every change, so the averages cannot drift.

A pool of `PERSIST_MIN` documents or more is saved under `<store>-dense/` (`postings_files`)
and mapped by the next process when the store's identity and `lexepoch` are those it was saved
at; purge deletes that folder (`dense_files.drop`), so no saved file keeps a purged word.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

import numpy as np

from cairn.store.base import LEXICAL_FIELDS, MemoryFilter
from cairn.store.sqlite import dense_files, postings_files
from cairn.store.sqlite.dialect import SQLITE
from cairn.store.sqlite.postings import Built, Pool, from_instances
from cairn.store.sqlite.postings_filter import Admissions

T = TypeVar("T")

PERSIST_MIN = dense_files.PERSIST_MIN
REBUILD_SHARE = 0.05  # appended + masked documents, over the store's, that make a rebuild

_COLUMN = "CASE col " + " ".join(f"WHEN '{name}' THEN {n}" for n, name in enumerate(LEXICAL_FIELDS))
_INSTANCES = "cairn_lexical_instances"
_DECLARED = re.compile(r'^\s*CREATE\s+VIRTUAL\s+TABLE\s+("lexical"|lexical)\s+USING\s', re.I)


class PostingsIndex:
    """The pool of one store file, shared by the store's threads."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._pool: Pool | None = None
        self._epoch = ""
        self._seq = 0
        self._offset = 0
        self._tokenizer: sqlite3.Connection | None = None
        self._unreadable: tuple[str, int] | None = None
        self._admissions = Admissions()

    def ranked(
        self,
        conn: sqlite3.Connection,
        terms: Sequence[str],
        limit: int,
        filt: MemoryFilter | None = None,
    ) -> list[tuple[int, float]] | None:
        """The `limit` best documents for `terms` by FTS5's `bm25()` with the pool's weights
        (memory id, score), ascending by id, among those `filt` admits (None: every one); None
        when a term may not be one FTS5 token (the caller asks FTS5)."""

        def read(pool: Pool, keep: bool) -> list[tuple[int, float]]:
            if filt is None:
                return pool.top(terms, limit)
            return self._admissions.top(conn, pool, filt, terms, limit, keep=keep)

        return self._answer(conn, terms, read)

    def frequencies(
        self, conn: sqlite3.Connection, terms: Sequence[str], filt: MemoryFilter | None = None
    ) -> dict[str, int] | None:
        """Documents holding each term (among those `filt` admits, when given), or None when a
        term may not be one FTS5 token."""

        def read(pool: Pool, keep: bool) -> dict[str, int]:
            mask = None if filt is None else self._admissions.mask(conn, pool, filt, keep=keep)
            return {term: pool.frequency(term, mask) for term in terms}

        return self._answer(conn, terms, read)

    def _answer(
        self, conn: sqlite3.Connection, terms: Sequence[str], read: Callable[[Pool, bool], T]
    ) -> T | None:
        """`read(pool, keep)` on the pool brought up to the store, or None when there is no
        pool or a term may not be one FTS5 token; a snapshot built on the way is saved after
        the lock is let go. `keep` is False inside a caller's transaction, which may yet roll
        back: what `read` works out there is not cached."""
        with self._lock:
            keep = not conn.in_transaction
            with self._current(conn) as (pool, built):
                found = None
                if pool is not None and all(pool.knows(term) for term in terms):
                    found = read(pool, keep)
        self._save(conn, built)
        return found

    @contextmanager
    def _current(self, conn: sqlite3.Connection) -> Iterator[tuple[Pool | None, Built | None]]:
        """The pool as the store is (and a snapshot just built, to save), with the snapshot it
        was brought up to held open, so what the caller reads next agrees with it: the
        caller's transaction, or a read transaction of its own."""
        if conn.in_transaction:
            yield self._unchanged(conn), None
            return
        with _snapshot(conn):
            yield self._synced(conn)

    def _synced(self, conn: sqlite3.Connection) -> tuple[Pool | None, Built | None]:
        """The pool, brought up to the store, inside a read transaction."""
        epoch = pool_epoch(conn)
        low, high = _log_bounds(conn)
        docs = int(conn.execute("SELECT docs FROM lexical_totals").fetchone()[0])
        same = self._pool is not None and self._epoch == epoch
        if same and self._advance(conn, low, high, docs):
            return self._pool, None
        saved = postings_files.load(self._path, epoch)
        if saved is not None and _continues(conn, saved, low):
            self._adopt(saved)
            if self._advance(conn, low, high, docs):
                return self._pool, None
        self._pool = None
        if self._unreadable == (epoch, high):
            return None, None
        try:
            built = _build(conn, epoch, high, docs)
        except ValueError:
            # An index this code cannot read: FTS5 answers, until the store changes.
            self._unreadable = (epoch, high)
            return None, None
        self._adopt(built)
        return self._pool, built

    def _unchanged(self, conn: sqlite3.Connection) -> Pool | None:
        """The pool, if the caller's transaction sees the store exactly as the pool holds it.

        The pool only ever takes in committed writes: one applied from inside a transaction
        that then rolled back would leave it holding a document the store does not, while the
        next write reuses the sequence numbers and is never applied."""
        if self._pool is None or pool_epoch(conn) != self._epoch:
            return None
        docs = int(conn.execute("SELECT docs FROM lexical_totals").fetchone()[0])
        if _log_bounds(conn)[1] != self._seq or self._pool.documents + self._offset != docs:
            return None
        return self._pool

    def _adopt(self, built: Built) -> None:
        self._pool = Pool(built.postings)
        self._epoch, self._seq, self._offset = built.epoch, built.seq, built.offset

    def _advance(self, conn: sqlite3.Connection, low: int | None, high: int, docs: int) -> bool:
        """Apply the log past the pool's sequence; False when the pool must be rebuilt."""
        pool = self._pool
        if pool is None or high < self._seq:
            return False
        if high > self._seq:
            if low is not None and low > self._seq + 1:
                return False  # trimmed past what this pool applied
            changed = [
                int(row[0])
                for row in conn.execute(
                    "SELECT DISTINCT memory_id FROM lexical_log WHERE seq > ? AND seq <= ?",
                    (self._seq, high),
                )
            ]
            for memory_id in changed:
                pool.remove(memory_id)
            pool.add(self._documents(conn, changed))
            self._seq = high
        if pool.added + pool.dead > REBUILD_SHARE * max(pool.documents, 1):
            return False
        return pool.documents + self._offset == docs

    def _documents(
        self, conn: sqlite3.Connection, ids: list[int]
    ) -> dict[int, dict[str, list[int]]]:
        """The current documents of `ids` (those still indexed), as FTS5 tokenizes them."""
        if not ids:
            return {}
        fields = ", ".join(LEXICAL_FIELDS)
        rows = []
        for chunk in SQLITE.chunks(ids):
            rows += conn.execute(
                f"SELECT rowid, {fields} FROM lexical WHERE rowid IN "
                f"({', '.join('?' for _ in chunk)})",
                chunk,
            ).fetchall()
        tokenizer = self._tokenizer_for(conn)
        marks = ", ".join("?" for _ in LEXICAL_FIELDS)
        tokenizer.executemany(f"INSERT INTO doc (rowid, {fields}) VALUES (?, {marks})", rows)
        found: dict[int, dict[str, list[int]]] = {int(row[0]): {} for row in rows}
        try:
            for term, doc, column in tokenizer.execute(
                f"SELECT term, doc, {_COLUMN} END FROM doc_instances"
            ):
                counts = found[int(doc)].setdefault(str(term), [0] * len(LEXICAL_FIELDS))
                counts[int(column)] += 1
        finally:
            tokenizer.execute("DELETE FROM doc")
        return found

    def _tokenizer_for(self, conn: sqlite3.Connection) -> sqlite3.Connection:
        """A private in-memory FTS5 table declared as the store's `lexical` is."""
        if self._tokenizer is None:
            declared = conn.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'lexical'"
            ).fetchone()[0]
            if not _DECLARED.match(declared):
                raise ValueError("the lexical table is not declared as this code expects")
            tokenizer = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            tokenizer.execute(_DECLARED.sub("CREATE VIRTUAL TABLE doc USING ", declared, count=1))
            tokenizer.execute("CREATE VIRTUAL TABLE doc_instances USING fts5vocab(doc, 'instance')")
            self._tokenizer = tokenizer
        return self._tokenizer

    def _save(self, conn: sqlite3.Connection, built: Built | None) -> None:
        """Save a snapshot just built, when it is large, outside any read transaction."""
        if built is None or built.postings.ids.shape[0] < PERSIST_MIN:
            return
        postings_files.save(self._path, built, lambda: pool_epoch(conn))

    def close(self) -> None:
        with self._lock:
            if self._tokenizer is not None:
                self._tokenizer.close()
                self._tokenizer = None
            self._pool = None


@contextmanager
def _snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """One read transaction over the reads, so the log, the index and the counts agree."""
    conn.execute("BEGIN")
    try:
        yield
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")  # a read: nothing to keep or lose


def pool_epoch(conn: sqlite3.Connection) -> str:
    """The store's identity and `lexepoch`: what the pool, and a save of it, must match (a new
    store made at the same path starts at 0 too; a save keyed by `epoch`, before there was a
    `lexepoch`, matches neither)."""
    meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('store_id', 'lexepoch')"))
    return f"{meta.get('store_id', '')}/lexical-{meta.get('lexepoch', '0')}"


def _log_bounds(conn: sqlite3.Connection) -> tuple[int | None, int]:
    # Two subqueries: each is one b-tree seek, where min() and max() together scan the table.
    low, high = conn.execute(
        "SELECT (SELECT min(seq) FROM lexical_log), (SELECT max(seq) FROM lexical_log)"
    ).fetchone()
    return (None if low is None else int(low)), int(high or 0)


def _continues(conn: sqlite3.Connection, saved: Built, low: int | None) -> bool:
    """Whether the store's log goes on from where the save was made (and not from a restored
    file's other history)."""
    if saved.seq == 0 or low is None or saved.seq < low:
        return low is None or saved.seq + 1 >= low
    return _logged(conn, saved.seq) == saved.logged


def _logged(conn: sqlite3.Connection, seq: int) -> str | None:
    """The memory logged at `seq` and a digest of its document now: a file restored from a
    backup reuses the same ids and sequences for other documents, so the id alone would not
    tell its history from the one a save was made in."""
    row = conn.execute("SELECT memory_id FROM lexical_log WHERE seq = ?", (seq,)).fetchone()
    if row is None:
        return None
    fields = ", ".join(LEXICAL_FIELDS)
    text = conn.execute(f"SELECT {fields} FROM lexical WHERE rowid = ?", (row[0],)).fetchone()
    digest = hashlib.sha256(json.dumps([row[0], text]).encode("utf-8")).hexdigest()
    return f"{int(row[0])}:{digest}"


def _build(conn: sqlite3.Connection, epoch: str, high: int, docs: int) -> Built:
    """Read every posting of the store's FTS5 index (inside the caller's snapshot)."""
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_INSTANCES} "
        "USING fts5vocab(main, 'lexical', 'instance')"
    )
    ids = np.fromiter(
        (row[0] for row in conn.execute("SELECT id FROM lexical_docsize ORDER BY id")),
        dtype=np.int64,
    )
    terms: list[str] = []
    per_term: list[int] = []
    texts: list[str] = []
    # The instances come term by term, by document within a term: grouping by term needs no
    # sort, and one string of codes per term parses in C.
    for term, count, codes in conn.execute(
        f"SELECT term, count(*), group_concat(doc * 8 + {_COLUMN} END) "
        f"FROM temp.{_INSTANCES} GROUP BY term"
    ):
        terms.append(str(term))
        per_term.append(int(count))
        texts.append(str(codes))
    joined = ",".join(texts)
    codes = np.fromstring(joined, dtype=np.int64, sep=",") if joined else np.zeros(0, np.int64)
    if codes.shape[0] != sum(per_term):
        raise ValueError("an instance without a known column")
    postings = from_instances(terms, np.asarray(per_term, dtype=np.int64), codes, ids)
    return Built(postings, epoch, high, _logged(conn, high), docs - int(ids.shape[0]))
