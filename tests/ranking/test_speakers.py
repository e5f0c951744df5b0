"""Speaker-aware ranking: who a memory is attributed to, and whom a query names."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cairn.ranking.lexical import tokenize
from cairn.ranking.speakers import named_speaker, speaker_factors, speaker_of


def test_a_leading_name_and_colon_is_the_speaker() -> None:
    assert speaker_of("Caroline: I went to the support group.") == "caroline"
    assert speaker_of("  Mary Ann: hi") == "mary ann"
    assert speaker_of("Zoë: ça va?") == "zoe"
    assert speaker_of("alice: we roll back on Fridays") == "alice"


def test_urls_times_numbers_and_sentences_are_not_speakers() -> None:
    assert speaker_of("https://example.com: the docs") is None
    assert speaker_of("10:30 standup moved") is None
    assert speaker_of("3: the third point") is None
    assert speaker_of("We decided four things today: one, two") is None
    assert speaker_of("Caroline:no space after the colon") is None
    assert speaker_of("") is None
    assert speaker_of(": nobody") is None


def test_the_query_must_name_exactly_one_speaker() -> None:
    speakers = {"caroline", "melanie", "mary ann"}
    assert named_speaker("What did Caroline paint?", speakers) == "caroline"
    assert named_speaker("What did Caroline's sister say?", speakers) == "caroline"
    assert named_speaker("What do Caroline and Melanie share?", speakers) is None
    assert named_speaker("What was painted?", speakers) is None
    assert named_speaker("Where does Mary Ann live?", speakers) == "mary ann"
    assert named_speaker("Where does Ann live?", speakers) is None


def test_other_speakers_are_lowered_and_unattributed_memories_untouched() -> None:
    contents = {
        1: "Caroline: I painted a sunrise.",
        2: "Melanie: That is lovely!",
        3: "The deploy runs on Fridays.",
    }
    factors = speaker_factors("What did Caroline paint?", contents, 0.8)
    assert factors == {1: 1.0, 2: 0.8, 3: 1.0}
    assert speaker_factors("What was painted?", contents, 0.8) == dict.fromkeys(contents, 1.0)
    assert speaker_factors("What did Caroline paint?", contents, 1.0) == dict.fromkeys(
        contents, 1.0
    )


@given(st.text(max_size=120))
def test_any_text_gets_a_speaker_made_of_its_own_leading_words_or_none(text: str) -> None:
    name = speaker_of(text)
    if name is not None:
        assert name.split() and set(name.split()) <= set(tokenize(text[:60]))


@given(st.dictionaries(st.integers(), st.text(max_size=40), max_size=8), st.text(max_size=60))
def test_factors_are_one_or_the_other_speaker_value_for_every_memory(
    contents: dict[int, str], query: str
) -> None:
    factors = speaker_factors(query, contents, 0.7)
    assert set(factors) == set(contents)
    assert set(factors.values()) <= {1.0, 0.7}
