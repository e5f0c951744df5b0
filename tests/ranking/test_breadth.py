"""Breadth for list questions: which questions ask for many things, and the session decay."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from cairn import Cairn
from cairn.ranking.breadth import asks_for_many, session_spread
from cairn.ranking.fusion import RECIPE
from cairn.ranking.recall import RecallQuery, retrieve
from cairn.scope import visible_scopes
from cairn.store.base import MemoryFilter

SCOPE = "project:example/breadth"


def test_list_questions_are_told_from_questions_about_one_thing() -> None:
    for text in (
        "What books has Tim read?",
        "What activities does Melanie partake in?",
        "Which events has Jon participated in to promote his business?",
        "What pets does Nate have?",
        "how many screenplays has Joanna written?",
        "WHAT SHELTERS DOES MARIA VOLUNTEER AT?",
    ):
        assert asks_for_many(text), text
    for text in (
        "What is Caroline's identity?",  # no plural
        "What does Melanie do?",  # "does" is not a plural noun
        "When did Melanie paint a sunrise?",  # not a list question word
        "Tell me which books Tim has read",  # does not start as a question
        "What books?",  # no auxiliary after the plural
        "What was his business?",
        "",
    ):
        assert not asks_for_many(text), text


def test_each_session_keeps_its_best_and_lowers_the_rest() -> None:
    order = [(1, "a"), (2, "a"), (3, "b"), (4, "a"), (5, None), (6, None)]
    factors = session_spread(order, 0.9)
    assert factors == {1: 1.0, 2: 0.9, 3: 1.0, 4: 0.9**2, 5: 1.0, 6: 1.0}
    assert set(session_spread(order, 1.0).values()) == {1.0}


@given(st.text(max_size=200))
def test_any_text_is_judged_without_error(text: str) -> None:
    assert isinstance(asks_for_many(text), bool)


@given(
    st.lists(st.sampled_from(["a", "b", "c", None]), max_size=30),
    st.floats(min_value=0.1, max_value=1.0),
)
def test_factors_are_powers_of_the_decay_and_the_first_of_a_session_is_untouched(
    sessions: list[str | None], decay: float
) -> None:
    order = list(enumerate(sessions))
    factors = session_spread(order, decay)
    assert set(factors) == {i for i, _ in order}
    firsts = {s: i for i, s in reversed(order) if s is not None}
    for i, session in order:
        assert 0.0 < factors[i] <= 1.0
        if session is None or firsts.get(session) == i:
            assert factors[i] == 1.0


def _session(mem: Cairn, texts: list[str]) -> list[str]:
    opened = mem.activate("a chat", scope=SCOPE)
    items = [
        {"content": t, "type": "fact", "scope": SCOPE, "session_id": opened.session_id}
        for t in texts
    ]
    done = [d.data.memory_id for d in mem.remember_many(items, dedup=False) if d.data]
    mem.end(opened.session_id)
    return done


def test_a_list_question_gives_another_session_a_place(mem: Cairn) -> None:
    first = _session(
        mem,
        [
            "Tim: I read the Name of the Wind, a fantasy book.",
            "Tim: That fantasy book has great world building.",
            "Tim: The fantasy book took me a week.",
            "Tim: Fantasy books are my favourite.",
        ],
    )
    later = _session(mem, ["Tim: I finished a dragon book last night."])
    ctx, filt = mem._ctx, MemoryFilter(scopes=visible_scopes(SCOPE))
    query = RecallQuery("What fantasy books has Tim read?", filt, 5, cut=False)
    off = retrieve(ctx, query, replace(RECIPE, session_decay=1.0))
    on = retrieve(ctx, query, replace(RECIPE, session_decay=0.5))
    order_off, order_on = [s.memory.ref for s in off], [s.memory.ref for s in on]
    assert order_on.index(later[0]) < order_off.index(later[0])
    parts = {s.memory.ref: s.parts for s in on}
    assert "breadth" not in parts[order_on[0]] and "breadth" not in parts[later[0]]
    assert sum("breadth" in p for p in parts.values()) == len(first) - 1
    # A question about one thing is ranked as before.
    single = RecallQuery("Which fantasy book did Tim like?", filt, 5, cut=False)
    assert [s.memory.ref for s in retrieve(ctx, single, replace(RECIPE, session_decay=0.5))] == [
        s.memory.ref for s in retrieve(ctx, single, replace(RECIPE, session_decay=1.0))
    ]
