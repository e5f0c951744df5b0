"""The lexical pool of a large SQLite store ranked in numpy from postings, not by FTS5's `bm25()`.

`bm25()` runs once per matching row (`cairn.store.sqlite.lexical`): at 100k memories a query of
common words ranks tens of thousands of rows, 12-20 ms of a recall. The postings here hold, per
term, the documents holding it (as positions, ascending) with the term's count in each of the
five `LEXICAL_FIELDS`, and per document its length in tokens; ranking every match from them is
a few vector operations per term.

The score is FTS5's `bm25()` with the pool's column weights (fts5_aux.c, `fts5Bm25Function`):
for each query phrase, `f` is the sum of the weights of the columns of its hits in the row, and

    score = sum(idf * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl))),   k1 = 1.2, b = 0.75

where `D` is the row's size in tokens over all columns, `avgdl` the table's tokens over its
rows, and `idf = log((N - n + 0.5) / (n + 0.5))` with `N` the table's rows and `n` those holding
the phrase, floored at 1e-6 when not positive. FTS5 returns `-score`. The statistics are the
whole table's, as FTS5's are under any filter: a filter that refuses some documents is a mask
over the pool's positions (`postings_filter`), applied to the scored matches before the cut.

The postings come from FTS5 itself (`postings_index`), so a term is what FTS5's tokenizer made
of the text. `Postings` is one snapshot (immutable, possibly mapped from a saved file);
`Pool` lays the documents written since over it and masks the deleted ones.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from cairn.store.base import LEXICAL_FIELDS

# The pool's column weights, in LEXICAL_FIELDS order: those of `lexical.POOL_RANK`.
WEIGHTS = np.array([1.0, 0.7, 0.5, 0.3, 0.45], dtype=np.float64)
K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6
FIELDS = len(LEXICAL_FIELDS)
# unicode61 (remove_diacritics 0, tokenchars '_') makes exactly this string of such a term:
# lower-case ASCII letters, digits and '_' are kept and folded to themselves.
_PLAIN = re.compile(r"[a-z0-9_]+\Z")

Ints = npt.NDArray[np.int64]
Counts = npt.NDArray[Any]  # (postings, FIELDS), an unsigned integer type
Mask = npt.NDArray[np.bool_]  # one flag per position of a `Pool`


@dataclass(frozen=True)
class Vocabulary:
    """The terms, ascending by their UTF-8 bytes (FTS5's order), as one buffer and the end of
    each: a new process maps it and searches it, where a dict of 100k terms costs ~100 ms to
    build before the first recall."""

    blob: bytes
    ends: Ints

    @classmethod
    def of(cls, terms: Sequence[str]) -> Vocabulary:
        encoded = [term.encode("utf-8") for term in terms]
        if any(a >= b for a, b in itertools.pairwise(encoded)):
            raise ValueError("the terms are not in ascending order")
        ends = np.cumsum([len(term) for term in encoded], dtype=np.int64)
        return cls(b"".join(encoded), ends if len(encoded) else np.zeros(0, dtype=np.int64))

    def __len__(self) -> int:
        return int(self.ends.shape[0])

    def _at(self, row: int) -> bytes:
        return self.blob[int(self.ends[row - 1]) if row else 0 : int(self.ends[row])]

    def find(self, term: str) -> int | None:
        """The row of `term`, or None."""
        key, low, high = term.encode("utf-8"), 0, len(self)
        while low < high:
            middle = (low + high) // 2
            if self._at(middle) < key:
                low = middle + 1
            else:
                high = middle
        return low if low < len(self) and self._at(low) == key else None

    def check(self) -> bool:
        ends = self.ends
        if ends.ndim != 1 or (ends.size and (int(ends[0]) < 0 or int(ends[-1]) != len(self.blob))):
            return False
        return not ends.size or not np.any(np.diff(ends) < 0)


@dataclass(frozen=True)
class Postings:
    """A snapshot of the index: `terms` gives a term's row in `offsets`; the term's
    postings are `docs[offsets[t]:offsets[t + 1]]` (document positions, ascending) with their
    per-field counts `counts[...]` and weighted hits `hits[...]` (bm25()'s `f`); position p
    is memory `ids[p]` (ascending), of `lengths[p]` tokens per field."""

    terms: Vocabulary
    offsets: Ints
    docs: npt.NDArray[np.int32]
    counts: Counts
    hits: npt.NDArray[np.float64]
    ids: Ints
    lengths: npt.NDArray[np.int32]  # (documents, FIELDS)

    def postings(self, term: str) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]] | None:
        row = self.terms.find(term)
        if row is None:
            return None
        start, stop = int(self.offsets[row]), int(self.offsets[row + 1])
        return self.docs[start:stop], self.hits[start:stop]

    def check(self) -> bool:
        """Whether the arrays fit together (a saved file may be truncated or foreign)."""
        n_docs, n_terms = self.ids.shape[0], len(self.terms)
        if not self.terms.check():
            return False
        if self.offsets.shape != (n_terms + 1,) or self.lengths.shape != (n_docs, FIELDS):
            return False
        if self.counts.shape != (self.docs.shape[0], FIELDS) or int(self.offsets[0]) != 0:
            return False
        if self.hits.shape != self.docs.shape:
            return False
        if int(self.offsets[-1]) != self.docs.shape[0] or np.any(np.diff(self.offsets) < 0):
            return False
        if n_docs > 1 and np.any(np.diff(self.ids) <= 0):
            return False
        docs = np.asarray(self.docs)
        return not docs.size or (int(docs.min()) >= 0 and int(docs.max()) < n_docs)


def from_instances(terms: Sequence[str], per_term: Ints, codes: Ints, ids: Ints) -> Postings:
    """Postings from FTS5's instances: term `terms[t]` has `per_term[t]` of them, listed in
    `codes` term by term as `document id * 8 + column`, ascending by document within a term;
    `ids` are every document of the table (ascending), those without a token included."""
    term_of = np.repeat(np.arange(len(terms), dtype=np.int64), per_term)
    if codes.size > 1 and np.any(
        (term_of[1:] == term_of[:-1]) & (codes[1:] >> 3 < codes[:-1] >> 3)
    ):
        order = np.lexsort((codes, term_of))  # FTS5 lists them in order; never rely on it blindly
        codes = codes[order]
    doc = np.searchsorted(ids, codes >> 3)
    column = codes & 7
    if codes.size and (
        np.any(doc >= ids.shape[0]) or np.any(ids[np.minimum(doc, ids.shape[0] - 1)] != codes >> 3)
    ):
        raise ValueError("an instance names a document the table does not hold")
    # A posting is a run of one term's instances in one document.
    starts = np.ones(codes.shape[0], dtype=bool)
    starts[1:] = (term_of[1:] != term_of[:-1]) | (doc[1:] != doc[:-1])
    posting = np.cumsum(starts) - 1
    n_postings = int(posting[-1]) + 1 if codes.size else 0
    flat = np.bincount(posting * FIELDS + column, minlength=n_postings * FIELDS)
    dtype = np.uint16 if not flat.size or int(flat.max()) <= np.iinfo(np.uint16).max else np.uint32
    lengths = np.bincount(doc * FIELDS + column, minlength=ids.shape[0] * FIELDS)
    offsets = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(np.bincount(term_of[starts], minlength=len(terms)), out=offsets[1:])
    return Postings(
        terms=Vocabulary.of(terms),
        offsets=offsets,
        docs=doc[starts].astype(np.int32),
        counts=flat.reshape(n_postings, FIELDS).astype(dtype),
        hits=weighted_hits(flat.reshape(n_postings, FIELDS)),
        ids=ids.astype(np.int64),
        lengths=lengths.reshape(ids.shape[0], FIELDS).astype(np.int32),
    )


def weighted_hits(counts: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    """bm25()'s `f` of each row of per-field `counts`, summed as FTS5 sums it (one weight per
    hit, column by column), so scores, and rows tied at the pool's cut, agree to the bit."""
    counts = np.asarray(counts, dtype=np.int64)
    found = np.zeros(counts.shape[0], dtype=np.float64)
    for column in range(FIELDS):
        held, rows, taken = counts[:, column], np.flatnonzero(counts[:, column]), 0
        while rows.size:
            found[rows] += WEIGHTS[column]
            taken += 1
            rows = rows[held[rows] > taken]
    return found


@dataclass(frozen=True, slots=True)
class Built:
    """A snapshot read from the store: the postings, the log sequence and epoch it is true at,
    the memory logged at that sequence with a digest of its document (a check against a
    restored file), and the store's document count (`lexical_totals`) less FTS5's rows."""

    postings: Postings
    epoch: str
    seq: int
    logged: str | None
    offset: int


@dataclass
class _Added:
    """Documents written since the snapshot, each at a position past the snapshot's."""

    ids: list[int] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    terms: dict[str, tuple[list[int], list[float]]] = field(default_factory=dict)


class Pool:
    """A snapshot with the documents written since laid over it: deleted or rewritten ones are
    masked, new or rewritten ones appended. Not thread-safe (`postings_index` locks it)."""

    def __init__(self, base: Postings) -> None:
        self.base = base
        n = int(base.ids.shape[0])
        self._alive = np.ones(n, dtype=bool)
        self._length = np.asarray(base.lengths, dtype=np.int64).sum(axis=1)
        self._ids = np.asarray(base.ids, dtype=np.int64)
        self._added = _Added()
        self._slot: dict[int, int] = {}  # memory id -> position, for the added documents
        self.documents = n
        self.tokens = int(self._length.sum())
        self.dead = 0

    @property
    def added(self) -> int:
        return len(self._added.ids)

    @property
    def ids(self) -> Ints:
        """The memory id at each position: the snapshot's (ascending), then those added."""
        return self._ids

    def remove(self, memory_id: int) -> None:
        """Mask the document of `memory_id` (nothing when none is held)."""
        position = self._slot.pop(memory_id, None)
        if position is None:
            found = int(np.searchsorted(self.base.ids, memory_id))
            if found >= self.base.ids.shape[0] or int(self.base.ids[found]) != memory_id:
                return
            position = found
        if self._alive[position]:
            self._alive[position] = False
            self.documents -= 1
            self.tokens -= int(self._length[position])
            self.dead += 1

    def add(self, documents: dict[int, dict[str, list[int]]]) -> None:
        """Append documents, each {term: its count per field}; the id must have been removed."""
        start = self._ids.shape[0]
        new_lengths = []
        for offset, (memory_id, terms) in enumerate(documents.items()):
            position = start + offset
            self._slot[memory_id] = position
            self._added.ids.append(memory_id)
            length = sum(sum(counts) for counts in terms.values())
            new_lengths.append(length)
            self._added.lengths.append(length)
            for term, counts in terms.items():
                slots, rows = self._added.terms.setdefault(term, ([], []))
                slots.append(position)
                rows.append(float(weighted_hits(np.asarray([counts]))[0]))
            self.documents += 1
            self.tokens += length
        count = len(documents)
        self._alive = np.concatenate([self._alive, np.ones(count, dtype=bool)])
        self._length = np.concatenate([self._length, np.asarray(new_lengths, dtype=np.int64)])
        self._ids = np.concatenate([self._ids, np.asarray(list(documents), dtype=np.int64)])

    def knows(self, term: str) -> bool:
        """Whether `term` is certainly one FTS5 token, so its postings here are its matches: a
        term FTS5 holds, or one the tokenizer keeps as it is (held by no document, then)."""
        return (
            bool(_PLAIN.match(term))
            or self.base.terms.find(term) is not None
            or term in self._added.terms
        )

    def _matches(self, term: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """Positions of the live documents holding `term`, and its weighted hits in each."""
        parts: list[tuple[npt.NDArray[Any], npt.NDArray[Any]]] = []
        found = self.base.postings(term)
        if found is not None:
            parts.append(found)
        extra = self._added.terms.get(term)
        if extra is not None:
            slots, rows = extra
            parts.append((np.asarray(slots), np.asarray(rows, dtype=np.float64)))
        if not parts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        docs = np.concatenate([np.asarray(p[0], dtype=np.int64) for p in parts])
        hits = np.concatenate([np.asarray(p[1], dtype=np.float64) for p in parts])
        keep = self._alive[docs]
        return docs[keep], hits[keep]

    def frequency(self, term: str, admitted: Mask | None = None) -> int:
        """Live documents holding `term` (among the `admitted` positions, when given)."""
        docs = self._matches(term)[0]
        return int(docs.shape[0] if admitted is None else np.count_nonzero(admitted[docs]))

    def top(
        self, terms: Sequence[str], limit: int, admitted: Mask | None = None
    ) -> list[tuple[int, float]]:
        """The `limit` best documents for the distinct `terms` as (memory id, FTS5's `bm25()`
        value), by ascending id; every match is ranked, then those outside `admitted` (a mask
        over the positions, when given) are dropped, as a filter joined to FTS5 drops them."""
        if self.documents <= 0 or limit <= 0:
            return []
        rows, avgdl = float(self.documents), float(self.tokens) / float(self.documents)
        scores = np.zeros(self._ids.shape[0], dtype=np.float64)
        for term in dict.fromkeys(terms):
            docs, hits = self._matches(term)
            if not docs.size:
                continue
            held = float(docs.shape[0])
            idf = math.log((rows - held + 0.5) / (held + 0.5))
            idf = idf if idf > 0.0 else IDF_FLOOR
            size = self._length[docs].astype(np.float64)
            scores[docs] += idf * ((hits * (K1 + 1.0)) / (hits + K1 * (1 - B + B * size / avgdl)))
        matched = np.flatnonzero(scores > 0.0)
        if admitted is not None:
            matched = matched[admitted[matched]]
        matched = self._best(matched, scores, limit)
        order = np.argsort(self._ids[matched], kind="stable")
        chosen = matched[order]
        return [(int(i), -float(s)) for i, s in zip(self._ids[chosen], scores[chosen], strict=True)]

    def _best(
        self, matched: npt.NDArray[np.intp], scores: npt.NDArray[np.float64], limit: int
    ) -> npt.NDArray[np.intp]:
        """The `limit` best of `matched`; among rows tied at the cut, the lowest ids, which is
        what FTS5's `ORDER BY bm25() LIMIT` keeps (it meets rows by ascending id, and a full
        sorter turns away a row no better than its worst)."""
        if matched.shape[0] <= limit:
            return matched
        values = scores[matched]
        cut = np.partition(values, matched.shape[0] - limit)[matched.shape[0] - limit]
        better = matched[values > cut]
        tied = matched[values == cut]
        tied = tied[np.argsort(self._ids[tied], kind="stable")][: limit - better.shape[0]]
        return np.concatenate([better, tied])
