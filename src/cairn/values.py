"""Whether two similar texts carry different values: the check that keeps dedup from losing data.

An embedding says two texts are about the same thing; it barely notices that one says
`Python 3.11` and the other `Python 3.12` (cosine 0.96 with MiniLM). Before a near-duplicate is
boosted instead of stored, this lexical, deterministic check looks over both whole texts for:

- *values* present in one and not the other: numbers, versions, dates and times (any token
  with a digit), number words (`two`, `ten`, `twice`), code identifiers (`db-blue`,
  `config.yaml`, `max_retries`, `PostgreSQL`, `CI`, anything in backticks) and proper names
  (`Redis`, `Memcached`, a capitalised word inside a sentence);
- a *negation* (`not`, `never`, `no longer`, `don't`, ...) in one text only;
- *opposite words*, one on each side (`enable`/`disable`, `always`/`never`, `sync`/`async`).

A capitalised word that starts a sentence may be a name (`Redis is the cache.`) or just a
sentence's first word (`Always run the linter.`), so it counts only as part of a substitution:
when the other text also has a value or sentence-initial word of its own that this one lacks.
Words are compared by their Snowball stem, so a rewording (`Caching` / `cache`) is not a difference;
digits are compared exactly, so `3.11` never equals `3.12`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

from cairn.ranking.lexical import STOPWORDS, stem

_TOKEN = re.compile(r"`[^`\n]{1,200}`|\w(?:[\w.\-/:@+#]*[\w+#%])?")
_WORDS = re.compile(r"\w+")
_NEGATION = re.compile(
    r"\b(?:not|no|never|nor|neither|none|nobody|nothing|nowhere|cannot)\b|\w+n[’']t\b",
    re.IGNORECASE,
)
DESCRIBED = 5  # values per side named in `describe`
TAIL_OVERLAP = 0.8  # word overlap two long texts' unembedded tails need to count as the same
_SENTENCE_END = frozenset(".!?:;\n")
_LEADING = frozenset(" \t\r-*•>#\"'([“‘")  # skipped when looking back for a sentence start
_SEPARATORS = re.compile(r"[\-./:@_]+")
_PARTS = re.compile(r"[\W_]+")
NUMBER_WORDS = frozenset(
    (
        "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
        "nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
        "ninety", "hundred", "thousand", "million", "billion", "twice", "thrice", "half",
        "double", "triple", "zero", "dozen",
    )
)  # fmt: skip
OPPOSITES: tuple[tuple[str, str], ...] = (
    ("enable", "disable"), ("enabled", "disabled"), ("always", "never"), ("allow", "forbid"),
    ("allowed", "forbidden"), ("true", "false"), ("sync", "async"), ("required", "optional"),
    ("include", "exclude"), ("accept", "reject"), ("safe", "unsafe"), ("public", "private"),
    ("min", "max"), ("minimum", "maximum"), ("increase", "decrease"), ("higher", "lower"),
    ("more", "fewer"), ("more", "less"), ("ascending", "descending"), ("asc", "desc"),
    ("on", "off"), ("yes", "no"), ("add", "remove"),
    ("works", "fails"), ("passes", "fails"), ("blocking", "nonblocking"),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class ValueDiff:
    """What one text says that the other does not, value by value."""

    only_left: tuple[str, ...] = ()
    only_right: tuple[str, ...] = ()
    negation: bool = False  # a negation in one text only
    opposites: tuple[tuple[str, str], ...] = ()
    beyond: bool = False  # long texts whose ends (past what the embedder reads) differ

    @property
    def changed(self) -> bool:
        """The texts differ in some value: storing one as the other would lose it."""
        return bool(
            self.only_left or self.only_right or self.negation or self.opposites or self.beyond
        )

    @property
    def substituted(self) -> bool:
        """Each side has a value the other lacks, or they disagree: an update, not an addition."""
        return bool((self.only_left and self.only_right) or self.negation or self.opposites)

    def describe(self) -> str:
        """A short human line: `3.11 → 3.12`, `negation`, `enable/disable`."""
        parts: list[str] = []
        if self.only_left or self.only_right:
            parts.append(f"{_listed(self.only_left)} → {_listed(self.only_right)}")
        if self.negation:
            parts.append("negation")
        parts += [f"{x}/{y}" for x, y in self.opposites]
        if self.beyond:
            parts.append("the text after what the embedder reads")
        return "; ".join(parts)


def _listed(values: tuple[str, ...]) -> str:
    """At most `DESCRIBED` values, each clipped: two long texts may differ in hundreds."""
    shown = [v if len(v) <= 40 else v[:39] + "…" for v in values[:DESCRIBED]]
    more = f" (+{len(values) - DESCRIBED} more)" if len(values) > DESCRIBED else ""
    return (", ".join(shown) or "-") + more


@dataclass(frozen=True)
class _Side:
    strong: dict[str, str]  # key -> the token as written: values that count on their own
    weak: dict[str, str]  # sentence-initial capitalised words: count only in a substitution
    words: frozenset[str]  # every word, casefolded
    tokens: frozenset[str]  # every token, casefolded
    negated: bool
    sequence: tuple[str, ...]  # every word, casefolded, in the order written

    @cached_property
    def stems(self) -> frozenset[str]:
        # Stemming is the slow part; most values are found by their exact word first.
        return frozenset(stem(w) for w in self.words)


def value_diff(left: str, right: str) -> ValueDiff:
    """The values each whole text has that the other lacks (order: as they first appear)."""
    a, b = _side(left), _side(right)
    strong_a = [tok for key, tok in a.strong.items() if not _present(key, tok, b)]
    strong_b = [tok for key, tok in b.strong.items() if not _present(key, tok, a)]
    weak_a = [tok for key, tok in a.weak.items() if not _present(key, tok, b)]
    weak_b = [tok for key, tok in b.weak.items() if not _present(key, tok, a)]
    if (strong_b or weak_b) and weak_a:
        strong_a += weak_a
    if (strong_a or weak_a) and weak_b:
        strong_b += weak_b
    opposites = tuple(
        (x, y)
        for x, y in OPPOSITES
        if (x in a.words and y in b.words and y not in a.words and x not in b.words)
        or (y in a.words and x in b.words and x not in a.words and y not in b.words)
    )
    return ValueDiff(tuple(strong_a), tuple(strong_b), a.negated != b.negated, opposites)


def same_values(left: str, right: str) -> bool:
    return not value_diff(left, right).changed


# Deduplication compares one new claim with each of its near-duplicates: its side is read once.
@lru_cache(maxsize=64)
def _side(text: str) -> _Side:
    text = text.replace("’", "'")
    strong: dict[str, str] = {}
    weak: dict[str, str] = {}
    tokens: set[str] = set()
    for match in _TOKEN.finditer(text):
        token = match.group()
        tokens.add(_key(token))
        kind = _kind(token)
        if kind is None:
            continue
        key = _key(token)
        if kind == "weak" and not _starts_sentence(text, match.start()):
            kind = "strong"  # a capitalised word inside a sentence is a name
        (strong if kind == "strong" else weak).setdefault(key, token)
    for key in list(weak):
        if key in strong:
            del weak[key]
    sequence = tuple(w.casefold() for w in _PARTS.split(text) if w)
    negated = _NEGATION.search(text) is not None
    return _Side(strong, weak, frozenset(sequence), frozenset(tokens), negated, sequence)


def _kind(token: str) -> str | None:
    """`strong` for a value, `weak` for a capitalised word that may be a name, else None."""
    if token.startswith("`"):
        return "strong"
    if any(ch.isdigit() for ch in token):
        return "strong"
    lower = token.casefold()
    if lower in NUMBER_WORDS:
        return "strong"
    if len(token) == 1 or lower in STOPWORDS:
        return None
    if _SEPARATORS.search(token):
        # `e.g` and `i.e` are abbreviations, not identifiers.
        return "strong" if max(map(len, _SEPARATORS.split(token))) > 1 else None
    if token.isupper() or any(ch.isupper() for ch in token[1:]):
        return "strong"  # CI, AWS, PostgreSQL, macOS
    if token[0].isupper():
        return "weak"
    return None


def _key(token: str) -> str:
    lower = token.strip("`").casefold()
    if len(lower) > 1 and lower[0] == "v" and lower[1].isdigit():
        return lower[1:]  # v3.12 and 3.12 are one version
    return lower


def _present(key: str, token: str, other: _Side) -> bool:
    """Whether the other text states this value too (exactly for digits, by stem for words)."""
    if key in other.tokens or f"v{key}" in other.tokens:
        return True
    if any(ch.isdigit() for ch in key):
        return False
    parts = [p for p in _PARTS.split(key) if p]
    # `read-only` and `read only`, `max_retries` and `max retries`: the same words, in the
    # same order (`db-blue` and `blue-db` are two identifiers).
    if not parts or not all(p in other.words or stem(p) in other.stems for p in parts):
        return False
    return len(parts) == 1 or _in_order(parts, other.sequence)


def _in_order(parts: list[str], sequence: tuple[str, ...]) -> bool:
    """Whether the words `parts` stand next to each other, in this order, in `sequence`."""
    wanted = [stem(p) for p in parts]
    for start in range(len(sequence) - len(parts) + 1):
        if all(
            sequence[start + n] == part or stem(sequence[start + n]) == wanted[n]
            for n, part in enumerate(parts)
        ):
            return True
    return False


def _starts_sentence(text: str, start: int) -> bool:
    index = start - 1
    while index >= 0 and text[index] in _LEADING:
        index -= 1
    # A numbered list item (`1. Redis ...`) ends in `.` too, so it starts a sentence.
    return index < 0 or text[index] in _SENTENCE_END


def compare(new: str, old: str, window: int) -> ValueDiff:
    """`value_diff` over the whole texts, plus whether they differ where the embedding is blind.

    An embedder reads the first `window` characters only, so two long texts that differ after
    it look identical (cosine 1.0). Their unseen tails must say nearly the same words too.
    """
    diff = value_diff(old, new)
    if max(len(new), len(old)) <= window:
        return diff
    left = {w.casefold() for w in _WORDS.findall(old[window:])}
    right = {w.casefold() for w in _WORDS.findall(new[window:])}
    union = left | right
    if union and len(left & right) / len(union) < TAIL_OVERLAP:
        return replace(diff, beyond=True)
    return diff
