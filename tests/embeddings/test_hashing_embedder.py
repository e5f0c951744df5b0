"""The deterministic embedder: stable across processes, unit vectors, word-overlap similarity."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.embeddings import Embedder
from cairn.embeddings.base import MAX_EMBED_CHARS
from cairn.embeddings.hashing import HashingEmbedder, fold, trigrams
from cairn.errors import InvalidInput

SENTENCE = (
    "The billing worker retries each failed webhook delivery five times with backoff "
    "before giving up"
)  # 15 words


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_satisfies_the_protocol_and_names_itself() -> None:
    embedder = HashingEmbedder()
    assert isinstance(embedder, Embedder)
    assert embedder.identity == "hashing-v1/384"
    assert embedder.dimensions == 384
    assert HashingEmbedder(64).identity == "hashing-v1/64"


def test_too_few_dimensions_is_refused() -> None:
    with pytest.raises(InvalidInput, match="at least 8"):
        HashingEmbedder(4)


def test_shape_dtype_and_empty_batch() -> None:
    embedder = HashingEmbedder(128)
    matrix = embedder.embed_many(["one", "two words", "three whole words"])
    assert matrix.shape == (3, 128)
    assert matrix.dtype == np.float32
    assert embedder.embed_many([]).shape == (0, 128)


def test_identical_text_gives_identical_vectors_within_a_batch() -> None:
    m = HashingEmbedder().embed_many([SENTENCE, "something else", SENTENCE])
    assert np.array_equal(m[0], m[2])


def test_vectors_do_not_depend_on_the_process_hash_seed() -> None:
    """Python's hash() is salted per process; the embedder must not use it."""
    code = (
        "import json; from cairn.embeddings.hashing import HashingEmbedder; "
        f"print(json.dumps(HashingEmbedder(32).embed_many([{SENTENCE!r}])[0].tolist()))"
    )
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        outputs.append(json.loads(done.stdout))
    here = HashingEmbedder(32).embed_many([SENTENCE])[0].tolist()
    assert outputs[0] == outputs[1] == pytest.approx(here)


def test_one_changed_word_in_fifteen_stays_above_the_dedup_threshold() -> None:
    variants = [SENTENCE.replace("five", "six"), SENTENCE.replace("billing", "invoicing")]
    m = HashingEmbedder().embed_many([SENTENCE, *variants])
    assert len(SENTENCE.split()) == 15
    for row in m[1:]:
        assert cos(m[0], row) > 0.82


def test_unrelated_sentences_are_far_apart() -> None:
    other = "Photosynthesis converts sunlight into chemical energy stored inside green leaves"
    m = HashingEmbedder().embed_many([SENTENCE, other])
    assert cos(m[0], m[1]) < 0.3


def test_more_shared_words_means_closer() -> None:
    words = SENTENCE.split()
    one_changed = " ".join(["zebra", *words[1:]])
    five_changed = " ".join(["zebra", "yak", "xylophone", "walrus", "vole", *words[5:]])
    m = HashingEmbedder().embed_many([SENTENCE, one_changed, five_changed])
    assert cos(m[0], m[1]) > cos(m[0], m[2])


def test_case_and_accents_are_folded() -> None:
    m = HashingEmbedder().embed_many(["Café DÉJÀ Vu", "cafe deja vu"])
    assert cos(m[0], m[1]) == pytest.approx(1.0, abs=1e-6)
    assert fold("Ñandú") == "nandu"


def test_inflections_share_trigrams() -> None:
    assert set(trigrams("migration")) & set(trigrams("migrations"))
    m = HashingEmbedder().embed_many(["migrations", "migration", "photosynthesis"])
    assert cos(m[0], m[1]) > cos(m[0], m[2])


def test_only_the_first_max_embed_chars_count() -> None:
    head = ("alpha beta gamma " * 200)[:MAX_EMBED_CHARS]
    m = HashingEmbedder().embed_many([head, head + " tail words that are ignored"])
    assert np.array_equal(m[0], m[1])


@pytest.mark.parametrize("text", ["", "   ", "?!…", "\n\t"])
def test_texts_without_words_still_get_a_unit_vector(text: str) -> None:
    vector = HashingEmbedder().embed_many([text])[0]
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_gives_a_finite_unit_vector(text: str) -> None:
    vector = HashingEmbedder(64).embed_many([text])[0]
    assert np.all(np.isfinite(vector))
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(max_size=80), min_size=1, max_size=6))
def test_a_text_embeds_the_same_alone_and_in_a_batch(texts: list[str]) -> None:
    embedder = HashingEmbedder(64)
    batch = embedder.embed_many(texts)
    for i, text in enumerate(texts):
        assert np.array_equal(embedder.embed_many([text])[0], batch[i])
