"""The value-difference check on its own: lexical, deterministic, over whole texts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from value_change_pairs import LONG_CHANGED, LONG_SAME, RESTATEMENTS, VALUE_CHANGES

from cairn.embeddings.base import MAX_EMBED_CHARS
from cairn.values import compare, same_values, value_diff


def test_the_pair_set_is_large_enough() -> None:
    assert len(RESTATEMENTS) >= 20 and len(VALUE_CHANGES) >= 20


@pytest.mark.parametrize(("old", "new"), RESTATEMENTS)
def test_restatements_carry_the_same_values(old: str, new: str) -> None:
    assert same_values(old, new), value_diff(old, new)
    assert not compare(new, old, MAX_EMBED_CHARS).changed


@pytest.mark.parametrize(("old", "new"), VALUE_CHANGES)
def test_value_changes_are_seen_both_ways(old: str, new: str) -> None:
    forward, backward = value_diff(old, new), value_diff(new, old)
    assert forward.changed and backward.changed
    assert forward.only_left == backward.only_right
    assert forward.describe()


@pytest.mark.parametrize(
    ("old", "new", "described"),
    [
        ("Python 3.11 is required for CI.", "Python 3.12 is required for CI.", "3.11 → 3.12"),
        ("The primary database is db-blue.", "The primary database is db-green.",
         "db-blue → db-green"),
        ("We use Redis for caching.", "We use Memcached for caching.", "Redis → Memcached"),
        ("Redis is the session store.", "Memcached is the session store.",
         "Redis → Memcached"),
        ("We deploy on Fridays.", "We don't deploy on Fridays.", "negation"),
        ("Deploys to staging are manual.", "Deploys to staging are no longer manual.",
         "negation"),
        ("Enable the query cache.", "Disable the query cache.", "enable/disable"),
        ("Retry five times.", "Retry six times.", "five → six"),
        ("Pin v3.12 in CI.", "Pin 3.13 in CI.", "3.12 → 3.13"),
    ],
)  # fmt: skip
def test_what_differs_is_named(old: str, new: str, described: str) -> None:
    assert described in value_diff(old, new).describe()


def test_versions_with_and_without_a_v_are_one_value() -> None:
    assert same_values("Pin v3.12 in CI.", "Pin 3.12 in CI.")


def test_a_sentence_initial_word_counts_only_as_a_substitution() -> None:
    # `Always` starts a sentence and the other text has nothing in its place: a rewording.
    assert same_values("Always run the linter before pushing.", "Run the linter before pushing.")
    # `Redis` and `Memcached` both start their sentences, each missing from the other.
    assert not same_values("Redis is the cache.", "Memcached is the cache.")
    # Inside a sentence a capitalised word is a name on its own.
    assert not same_values("The cache is Redis.", "The cache is fast.")


def test_identifiers_match_their_spelled_out_words() -> None:
    assert same_values("The replica is read-only.", "The replica is read only.")
    assert same_values("Set `max_retries` to 5.", "Set max retries to 5.")
    assert not same_values("Read config.yaml first.", "Read config.toml first.")


def test_added_and_dropped_values_count_one_sided_not_as_substitutions() -> None:
    short = "Run migrations with the lock flag."
    added = value_diff(short, short + " Without it two deploys race.")
    assert added.changed and not added.substituted and added.only_right == ("two",)
    swapped = value_diff("Python 3.11 is required.", "Python 3.12 is required.")
    assert swapped.substituted


def test_long_texts_are_compared_whole_not_by_their_embedded_start() -> None:
    assert LONG_CHANGED[0][:MAX_EMBED_CHARS] == LONG_CHANGED[1][:MAX_EMBED_CHARS]
    assert "8080 → 9090" in compare(LONG_CHANGED[1], LONG_CHANGED[0], MAX_EMBED_CHARS).describe()
    assert not compare(LONG_SAME[1], LONG_SAME[0], MAX_EMBED_CHARS).changed


def test_long_texts_whose_unembedded_ends_say_other_words_differ() -> None:
    start = "word " * (MAX_EMBED_CHARS // 5)
    old = start + "the rollout goes region by region with a manual gate between them"
    new = start + "every region gets the release at once and nobody approves anything"
    diff = compare(new, old, MAX_EMBED_CHARS)
    assert diff.changed and diff.beyond
    assert not diff.only_left and not diff.only_right  # no value: the words themselves differ
    assert not compare(old + " ", old, MAX_EMBED_CHARS).changed
    # One text ends where the embedder stops reading, the other goes on: not the same.
    assert compare(start + "and more words follow here", start, MAX_EMBED_CHARS).beyond


@given(st.text(max_size=400), st.text(max_size=400))
def test_any_text_pair_is_checked_without_error_and_symmetrically(a: str, b: str) -> None:
    forward, backward = value_diff(a, b), value_diff(b, a)
    assert forward.changed == backward.changed
    assert forward.negation == backward.negation
    assert not value_diff(a, a).changed


def test_the_description_stays_short_however_many_values_differ() -> None:
    left = " ".join(f"port {n}" for n in range(100))
    right = " ".join(f"port {n}" for n in range(100, 200))
    described = value_diff(left, right).describe()
    assert "(+95 more)" in described and len(described) < 200


versions = st.tuples(st.integers(0, 30), st.integers(0, 99)).map(lambda v: f"{v[0]}.{v[1]}")
names = st.from_regex(r"[a-z]{2,8}-[a-z]{2,8}", fullmatch=True)
templates = st.sampled_from(
    [
        "Python {} is required for CI.",
        "The primary database is {}.",
        "Deploys go through {} first.",
        "Set the pool size to {} on the primary.",
    ]
)


@given(templates, st.one_of(versions, names), st.one_of(versions, names))
def test_any_changed_version_or_identifier_is_a_value_change(
    template: str, old: str, new: str
) -> None:
    assert value_diff(template.format(old), template.format(new)).changed == (old != new)


def test_an_identifier_with_its_parts_swapped_is_another_identifier() -> None:
    # Hypothesis found this pair reported unchanged: each part was present on the other side.
    assert value_diff("Deploys go through aaaaa-aaaaaaaa first.",
                      "Deploys go through aaaaaaaa-aaaaa first.").changed  # fmt: skip
    assert value_diff(
        "The primary database is db-blue.", "The primary database is blue-db."
    ).changed
    assert not value_diff("The table is read-only.", "The table is read only.").changed
    assert not value_diff("Raise max_retries to 5.", "Raise the max retries to 5.").changed
