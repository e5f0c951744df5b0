"""remember over the whole pair set, on both backends: restatements boost, value changes are
stored and linked. With the deterministic embedder (every test run) and the real model (slow).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from value_change_pairs import RESTATEMENTS, VALUE_CHANGES

from cairn import Cairn
from cairn.config import Settings
from cairn.embeddings import Embedder
from cairn.embeddings.local import MiniLMInt8
from clocks import FakeClock


def remember_pairs(mem: Cairn, pairs: list[tuple[str, str]], kind: str) -> list[tuple]:  # type: ignore[type-arg]
    """Each pair in a scope of its own: (first result, second result, pair)."""
    out = []
    for n, (old, new) in enumerate(pairs):
        scope = f"project:example/{kind}-{n}"
        first = mem.remember(old, type="fact", scope=scope)
        second = mem.remember(new, type="fact", scope=scope)
        out.append((first, second, (old, new)))
    return out


def cosine(embedder: Embedder, a: str, b: str) -> float:
    matrix = embedder.embed_many([a, b])
    return float(np.dot(matrix[0], matrix[1]))


def check_value_changes(mem: Cairn, embedder: Embedder) -> int:
    """Every value change is stored; a near one is linked both ways. Returns how many were."""
    linked = 0
    for first, second, (old, new) in remember_pairs(mem, VALUE_CHANGES, "change"):
        assert second.disposition == "created", (old, new)
        assert second.memory_id != first.memory_id
        if cosine(embedder, old, new) >= mem.settings.dedup_threshold:
            assert second.may_update == first.memory_id and second.changed, (old, new)
            scope = second.scope
            records = mem.get_memory([first.memory_id, second.memory_id], scope=scope).records
            assert records[0].may_be_updated_by == (second.memory_id,)
            assert records[1].may_update == (first.memory_id,)
            linked += 1
        stored = mem.get_memory([second.memory_id], scope=second.scope).records[0]
        assert stored.memory.content == new
    return linked


def check_restatements(mem: Cairn, embedder: Embedder) -> int:
    """A restatement the embedder finds near is boosted. Returns how many were."""
    boosted = 0
    for first, second, (old, new) in remember_pairs(mem, RESTATEMENTS, "same"):
        if cosine(embedder, old, new) >= mem.settings.dedup_threshold:
            assert second.disposition == "boosted", (old, new)
            assert second.memory_id == first.memory_id and second.may_update is None
            boosted += 1
        else:
            assert second.disposition == "created" and second.may_update is None
    return boosted


def test_hashing_embedder_value_changes_are_stored(mem: Cairn, embedder: Embedder) -> None:
    # The deterministic embedder puts most of them above the threshold: the check is real.
    assert check_value_changes(mem, embedder) >= 15


def test_hashing_embedder_restatements_boost(mem: Cairn, embedder: Embedder) -> None:
    assert check_restatements(mem, embedder) >= 8


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(
    st.sampled_from(["Python {} is required for CI.", "The primary database is {}.",
                     "Run the billing worker with {} replicas in production."]),
    st.lists(st.one_of(st.integers(2, 500).map(str), st.from_regex(r"db-[a-z]{3,8}",
             fullmatch=True)), min_size=2, max_size=2, unique=True),
)  # fmt: skip
def test_no_changed_value_is_ever_boosted_away(mem: Cairn, template: str, values: list) -> None:  # type: ignore[type-arg]
    scope = f"project:example/hypothesis-{next(_SCOPES)}"
    old, new = (template.format(v) for v in values)
    first = mem.remember(old, type="fact", scope=scope)
    second = mem.remember(new, type="fact", scope=scope)
    assert second.disposition == "created" and second.memory_id != first.memory_id
    if second.similarity is not None:
        assert second.may_update == first.memory_id


_SCOPES = itertools.count()


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    """The real model (MiniLM int8), exported once into a cache of this module's own."""
    embedder = MiniLMInt8(tmp_path_factory.mktemp("models"))
    embedder.load()
    return embedder


@pytest.fixture
def real(
    store_location: str, settings: Settings, model: Embedder, clock: FakeClock, tmp_path: Path
) -> Iterator[Cairn]:
    with Cairn.open(
        store_location, settings=settings, embedder=model, clock=clock, cwd=tmp_path
    ) as opened:
        yield opened


@pytest.mark.slow
def test_real_model_every_restatement_boosts(real: Cairn, model: Embedder) -> None:
    assert check_restatements(real, model) == len(RESTATEMENTS)


@pytest.mark.slow
def test_real_model_no_value_change_is_lost(real: Cairn, model: Embedder) -> None:
    # Most value changes are near-duplicates to MiniLM (3.11/3.12 is 0.96): all are linked.
    assert check_value_changes(real, model) >= 15
