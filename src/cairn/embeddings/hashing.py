"""A deterministic embedder with no model: signed feature hashing of words and trigrams.

Unit tests need an embedder that is fast, identical on every machine and every run, and still
behaves like an embedding: the same text gives the same vector, texts that share most of their
words are close, unrelated texts are far apart. This one hashes two feature families into one
vector:

- folded word tokens (NFKD, accents stripped, casefolded), so `Café` and `cafe` agree;
- character trigrams of each word padded with `#`, so `migration` and `migrations` overlap.

Each family is normalised on its own before they are mixed, so long words do not drown the word
signal in trigrams. Hashing uses blake2b, never `hash()`, whose per-process salt would make
vectors differ between runs. A feature's sign comes from the hash too: collisions then cancel on
average instead of piling up, which keeps unrelated texts near cosine 0.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
import unicodedata
from collections.abc import Sequence

import numpy as np

from cairn.embeddings.base import MAX_EMBED_CHARS, Matrix, normalise_rows
from cairn.errors import InvalidInput

_WORD = re.compile(r"\w+")
# Words carry most of the meaning; trigrams add tolerance for inflection and typos.
_WORD_WEIGHT = 0.8
_TRIGRAM_WEIGHT = 0.6
# A text with no word characters at all (blank, punctuation only) still gets a unit vector.
_EMPTY_FEATURE = "\x00empty"


def fold(text: str) -> str:
    """Lowercase and strip accents so spelling variants of a word hash alike."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return stripped.casefold()


def words(text: str) -> list[str]:
    return _WORD.findall(fold(text))


def trigrams(word: str) -> list[str]:
    padded = f"#{word}#"
    return [padded[i : i + 3] for i in range(len(padded) - 2)]


@functools.lru_cache(maxsize=65_536)
def _slot(feature: str, dimensions: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    sign = 1.0 if value & 1 else -1.0
    return (value >> 1) % dimensions, sign


class HashingEmbedder:
    """Deterministic stand-in for a real model; identity `hashing-v1/<dimensions>`."""

    __slots__ = ("_dimensions",)

    def __init__(self, dimensions: int = 384) -> None:
        if dimensions < 8:
            raise InvalidInput(
                f"a hashing embedder needs at least 8 dimensions, got {dimensions}; "
                "use the default 384."
            )
        self._dimensions = dimensions

    @property
    def identity(self) -> str:
        return f"hashing-v1/{self._dimensions}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed_many(self, texts: Sequence[str]) -> Matrix:
        out = np.zeros((len(texts), self._dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = self._embed_one(text[:MAX_EMBED_CHARS])
        return normalise_rows(out)

    def _embed_one(self, text: str) -> np.ndarray:
        tokens = words(text)
        if not tokens:
            tokens = [_EMPTY_FEATURE]
        word_part = self._hash_features([f"w:{t}" for t in tokens])
        tri_part = self._hash_features([f"t:{g}" for t in tokens for g in trigrams(t)])
        vec = _WORD_WEIGHT * word_part + _TRIGRAM_WEIGHT * tri_part
        if not vec.any():
            # Opposite-signed collisions cancelled every feature; fall back to the empty text.
            return self._hash_features([f"w:{_EMPTY_FEATURE}"])
        return vec

    def _hash_features(self, features: list[str]) -> np.ndarray:
        vec = np.zeros(self._dimensions, dtype=np.float64)
        for feature in features:
            index, sign = _slot(feature, self._dimensions)
            vec[index] += sign
        norm = math.sqrt(float(vec @ vec))
        return vec / norm if norm > 0 else vec
