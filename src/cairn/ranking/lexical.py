"""Lexical matching: folding, stemming and a multi-field BM25 (BM25F) scorer.

Text is folded before anything else (Unicode NFKD, accents stripped, casefolded, punctuation
turned into spaces), so "Préproduction," and "preproduction" are the same word, then each word is
reduced to its Snowball English stem so "refused" finds "refusal".

Stopwords are kept in the index but dropped from queries (`query_terms`). Letting idf alone damp
them was measured and lost: on LoCoMo BM25 recall@10 fell from 0.62 to 0.57, because in a scope
of a few hundred short memories "did", "what" or "the" still carry a visible idf and reward long
chatty memories; they would also let a question made of common words look as if a memory covered
it, which the coverage gate relies on not happening. Inside documents they cost nothing.

The scorer is BM25F: each field's term frequency is length-normalised against that field's
average length, weighted (content > tags > source_ref > reason), summed, and saturated once, so a
word repeated in two fields does not count twice as much as one well-placed occurrence. Corpus
statistics (`CorpusStats`: document count, document frequency per term, average field lengths)
are a plain value: an in-memory corpus computes them with `CorpusStats.from_docs`, a database
backend hands in the per-scope numbers it keeps, and the scorer never looks at any other
document than the ones it is asked to score.
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import snowballstemmer

FIELDS: tuple[str, ...] = ("content", "tags", "source_ref", "reason", "context")

# Relative importance of a match in each field (DESIGN §3: content > tags > source_ref > reason).
# `context` holds the text of the memory's session neighbours (see fusion.neighbour_context); 0.45
# was the best of 0.1-0.6 on LoCoMo (recall@10 0.62 -> 0.73 for BM25 alone).
DEFAULT_FIELD_WEIGHTS: Mapping[str, float] = {
    "content": 1.0,
    "tags": 0.7,
    "source_ref": 0.5,
    "context": 0.45,
    "reason": 0.3,
}

# BM25 saturation and length normalisation: short memories and low saturation won on LoCoMo
# (k1 0.9, b 0.4 beat the textbook 1.2 / 0.75 by 1-2 points of recall@10).
DEFAULT_K1 = 0.9
DEFAULT_B = 0.4

# Short English function words. Kept small on purpose: words such as "not", "never" or "after"
# carry meaning in memories ("never push to main") and are left in.
STOPWORDS: frozenset[str] = frozenset(
    [
        "a",
        "about",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "being",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "for",
        "from",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "my",
        "myself",
        "of",
        "on",
        "or",
        "our",
        "ours",
        "she",
        "should",
        "so",
        "some",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "too",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "s",
        "t",
        "d",
        "ll",
        "m",
        "re",
        "ve",
    ]
)

_stemmer = snowballstemmer.stemmer("english")


def fold(text: str) -> str:
    """Decompose (NFKD), drop accents, casefold, and turn everything but letters/digits into spaces.

    Apostrophes vanish with the other punctuation, so "Caroline's" becomes "caroline s".
    """
    decomposed = unicodedata.normalize("NFKD", text)
    chars: list[str] = []
    for ch in decomposed:
        if unicodedata.combining(ch):
            continue
        chars.append(ch if ch.isalnum() else " ")
    return "".join(chars).casefold()


def tokenize(text: str) -> list[str]:
    """Folded words, in order."""
    return fold(text).split()


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Snowball English stem of an already folded word (cached: the same words recur)."""
    result: str = _stemmer.stemWord(word)
    return result


def analyze(text: str) -> list[str]:
    """Index terms of a document field: folded, stemmed words, stopwords included."""
    return [stem(w) for w in tokenize(text)]


def query_terms(text: str) -> list[str]:
    """Distinct search terms of a query, in order: stemmed words without stopwords.

    A query made only of stopwords keeps them, so "who is it" still searches something.
    """
    words = tokenize(text)
    kept = [w for w in words if w not in STOPWORDS] or words
    return list(dict.fromkeys(stem(w) for w in kept))


@dataclass(frozen=True, slots=True)
class AnalysedDoc:
    """A document's analysed fields, keyed by field name (missing fields are empty)."""

    id: str
    fields: Mapping[str, Sequence[str]]

    @classmethod
    def from_text(cls, doc_id: str, **texts: str | None) -> AnalysedDoc:
        return cls(doc_id, {name: analyze(text) for name, text in texts.items() if text})

    def terms(self) -> set[str]:
        return {t for tokens in self.fields.values() for t in tokens}


@dataclass(frozen=True, slots=True)
class CorpusStats:
    """What BM25 needs to know about the whole scope, computed here or handed in by a backend."""

    doc_count: int
    df: Mapping[str, int]
    avg_field_len: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def from_docs(cls, docs: Iterable[AnalysedDoc]) -> CorpusStats:
        df: Counter[str] = Counter()
        lengths: Counter[str] = Counter()
        count = 0
        for doc in docs:
            count += 1
            df.update(doc.terms())
            for name, tokens in doc.fields.items():
                lengths[name] += len(tokens)
        avg = {name: total / count for name, total in lengths.items()} if count else {}
        return cls(count, dict(df), avg)


def _count(tokens: Sequence[str], term: str) -> int:
    return tokens.count(term) if isinstance(tokens, list) else sum(1 for t in tokens if t == term)


class BM25F:
    """Multi-field BM25 over analysed documents with externally supplied corpus statistics."""

    def __init__(
        self,
        stats: CorpusStats,
        *,
        field_weights: Mapping[str, float] = DEFAULT_FIELD_WEIGHTS,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
    ) -> None:
        self.stats = stats
        self.field_weights = dict(field_weights)
        self.k1 = k1
        self.b = b

    def idf(self, term: str) -> float:
        """Rarity of a term in the scope: the BM25 idf, floored at zero-plus so it never subtracts.

        The `1 +` inside the log keeps a term found in most documents slightly positive instead
        of negative, which matters for small scopes (a term in 3 of 4 memories still counts).
        """
        n = self.stats.doc_count
        df = self.stats.df.get(term, 0)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def score(self, terms: Sequence[str], doc: AnalysedDoc) -> float:
        """BM25F score of one document for distinct query terms (0 when nothing matches).

        Term frequencies are counted per query term with `list.count` (in C) rather than by
        building a Counter of every field: queries are a handful of terms, fields are short.
        """
        weighted = list(self._scaled_fields(doc))
        total = 0.0
        for term in terms:
            tf = sum(scale * _count(tokens, term) for scale, tokens in weighted)
            if tf:
                total += self.from_weight(term, tf)
        return total

    def _scale(self, name: str, weight: float, length: int) -> float:
        """BM25F's length normalisation: a field's weight against its length and the average."""
        avg = self.stats.avg_field_len.get(name) or 1.0
        return weight / (1.0 - self.b + self.b * length / avg)

    def _scaled_fields(self, doc: AnalysedDoc) -> Iterator[tuple[float, Sequence[str]]]:
        """Each non-empty field's tokens, with its length-normalised weight."""
        for name, weight in self.field_weights.items():
            tokens = doc.fields.get(name)
            if tokens:
                yield self._scale(name, weight, len(tokens)), tokens

    def score_joined(
        self, terms: Sequence[str], fields: Mapping[str, str], idf: Mapping[str, float]
    ) -> float:
        """`score` for fields given as space-joined analysed terms, the way stores keep them.

        Same value as `score`, computed faster: a field is read only when one of the terms
        occurs in its text, tokens are counted in C without splitting, and `idf` (each term's
        `idf`, computed once per query) is passed in. Fields hold single-space-joined terms.
        A recall scores a few hundred candidates whose long `context` field rarely holds a
        query term, so most fields are skipped after a substring test.
        """
        k1 = self.k1
        tf: dict[str, float] = {}
        for name, weight in self.field_weights.items():
            text = fields.get(name)
            if not text:
                continue
            present = [t for t in terms if t in text]
            if not present:
                continue
            # Whole-token counts without splitting: with every separator doubled, " term "
            # occurrences never overlap, so str.count (in C) counts tokens exactly.
            padded = " " + text.replace(" ", "  ") + " "
            scale = self._scale(name, weight, text.count(" ") + 1)
            for term in present:
                count = padded.count(" " + term + " ")
                if count:
                    tf[term] = tf.get(term, 0.0) + scale * count
        return sum(idf[t] * value * (k1 + 1.0) / (k1 + value) for t, value in tf.items())

    def term_weights(self, doc: AnalysedDoc) -> dict[str, float]:
        """Field-weighted, length-normalised frequency of every term of the document.

        Independent of the query, so an index can compute it once per document and score a query
        with `from_weight` alone.
        """
        weights: dict[str, float] = {}
        for scale, tokens in self._scaled_fields(doc):
            for term, tf in Counter(tokens).items():
                weights[term] = weights.get(term, 0.0) + scale * tf
        return weights

    def from_weight(self, term: str, tf: float) -> float:
        """One term's BM25F contribution given its weighted frequency (see `term_weights`)."""
        return self.idf(term) * tf * (self.k1 + 1.0) / (self.k1 + tf)

    def score_all(self, terms: Sequence[str], docs: Iterable[AnalysedDoc]) -> dict[str, float]:
        """Scores of the documents matching at least one term, by document id."""
        wanted = set(terms)
        scores: dict[str, float] = {}
        for doc in docs:
            if wanted.isdisjoint(doc.terms()):
                continue
            scores[doc.id] = self.score(terms, doc)
        return scores

    def coverage(self, terms: Sequence[str], doc: AnalysedDoc) -> float:
        """Share of the query's rarity that the document holds: sum of idf of matched terms / all.

        1.0 means every query term appears; a document matching only common words covers little.
        """
        total = sum(self.idf(t) for t in terms)
        if total <= 0.0:
            return 0.0
        present = doc.terms()
        return sum(self.idf(t) for t in terms if t in present) / total


class LexicalIndex:
    """An in-memory inverted index over analysed documents, scored with `BM25F`.

    Used for small corpora (a scope's pages, benchmarks); the database backends keep their own
    index and hand candidate documents plus `CorpusStats` to `BM25F` directly.
    """

    def __init__(
        self,
        docs: Iterable[AnalysedDoc],
        *,
        field_weights: Mapping[str, float] = DEFAULT_FIELD_WEIGHTS,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
    ) -> None:
        self.docs: dict[str, AnalysedDoc] = {d.id: d for d in docs}
        stats = CorpusStats.from_docs(self.docs.values())
        self.scorer = BM25F(stats, field_weights=field_weights, k1=k1, b=b)
        # Postings carry each document's query-independent weighted frequency, so a search is a
        # walk over the query terms' postings with no per-document work beyond one addition.
        self.postings: dict[str, list[tuple[str, float]]] = {}
        for doc in self.docs.values():
            for term, tf in self.scorer.term_weights(doc).items():
                self.postings.setdefault(term, []).append((doc.id, tf))

    def search(self, terms: Sequence[str]) -> dict[str, float]:
        """BM25F scores of every document holding at least one of the terms."""
        scores: dict[str, float] = {}
        for term in dict.fromkeys(terms):
            for doc_id, tf in self.postings.get(term, ()):
                scores[doc_id] = scores.get(doc_id, 0.0) + self.scorer.from_weight(term, tf)
        return scores
