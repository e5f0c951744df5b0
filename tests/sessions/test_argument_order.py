"""Every tool reports an invalid argument before any state conflict.

A call that is wrong in two ways (an invalid argument, and a session or memory whose state
forbids the call) gets the message about the argument: fixing the argument is what the caller
can do now, and the state conflict still stands when it calls again.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cairn import Cairn, Conflict, InvalidInput

SCOPE = "project:example/api"
WRONG_USED = {"ref": "mem_1", "used": "yes", "effect": "helped"}


def pending_session(mem: Cairn, seeded: dict[str, str]) -> str:
    """An open session with a retrieval that has no feedback yet."""
    session_id = mem.activate("work on sessions", scope=SCOPE).session_id
    assert mem.recall("sessions postgres", session_id=session_id).hits
    return session_id


def closed_session(mem: Cairn) -> str:
    session_id = mem.activate("short task", scope=SCOPE).session_id
    mem.end(session_id)
    return session_id


def test_commit_with_an_invalid_outcome_and_pending_feedback(
    mem: Cairn, seeded: dict[str, str]
) -> None:
    session_id = pending_session(mem, seeded)
    with pytest.raises(InvalidInput, match="outcome 'great'"):
        mem.commit(session_id, outcome="great", summary="done")
    with pytest.raises(InvalidInput, match="summary is blank"):
        mem.commit(session_id, outcome="success", summary=" ")
    with pytest.raises(InvalidInput, match="steps is empty"):
        mem.commit(session_id, outcome="success", summary="done", procedure={"steps": []})
    with pytest.raises(InvalidInput, match="mem_999"):
        mem.commit(session_id, outcome="success", summary="done", used=["mem_999"])
    with pytest.raises(Conflict, match="without feedback"):  # valid arguments: the state
        mem.commit(session_id, outcome="success", summary="done")


def test_a_closed_session_is_reported_after_the_arguments(
    mem: Cairn, seeded: dict[str, str]
) -> None:
    session_id = closed_session(mem)
    wrong: list[tuple[Callable[[], object], str]] = [
        (lambda: mem.commit(session_id, outcome="great", summary="done"), "outcome"),
        (lambda: mem.feedback(session_id, "ret_1", []), "empty"),
        (
            lambda: mem.feedback(
                session_id, "ret_1", [{"ref": "mem_1", "used": "yes", "effect": "helped"}]
            ),
            "true or false",
        ),
        (lambda: mem.log_progress(session_id, "   "), "blank|empty"),
        (lambda: mem.pin("", session_id=session_id), "blank|empty"),
        (
            lambda: mem.remember("A fact.", type="fact", session_id=session_id, weight=7.0),
            "weight",
        ),
        (lambda: mem.remember("A fact.", type="nonsense", session_id=session_id), "type"),
        (lambda: mem.recall("anything", session_id=session_id, limit=99), "limit"),
        (lambda: mem.recall("anything", session_id=session_id, evidence="all"), "evidence"),
        (lambda: mem.recall("anything", session_id=session_id, kind="files"), "kind"),
        (lambda: mem.recall("anything", session_id=session_id, as_of="yesterday-ish"), "as_of"),
    ]
    for call, match in wrong:
        with pytest.raises(InvalidInput, match=match):
            call()
    with pytest.raises(Conflict, match="already ended"):
        mem.commit(session_id, outcome="success", summary="done")


def test_correct_and_forget_check_their_arguments_before_the_memory(
    mem: Cairn, seeded: dict[str, str]
) -> None:
    ref = seeded["db"]
    mem.forget(ref, reason="moved to another store", scope=SCOPE)  # now retired: a conflict
    with pytest.raises(InvalidInput, match="correct needs a reason"):
        mem.correct(ref, "We store sessions in SQLite.", reason=" ", scope=SCOPE)
    with pytest.raises(InvalidInput, match=r"blank|empty"):
        mem.correct(ref, "   ", reason="fixed", scope=SCOPE)
    with pytest.raises(InvalidInput, match="forget needs a reason"):
        mem.forget(ref, reason="", scope=SCOPE)
    with pytest.raises(Conflict, match="forgotten"):
        mem.forget(ref, reason="again", scope=SCOPE)


def test_a_refused_call_writes_nothing(mem: Cairn, seeded: dict[str, str]) -> None:
    session_id = closed_session(mem)
    with pytest.raises(InvalidInput):
        mem.remember("A fact.", type="fact", session_id=session_id, weight=-1.0)
    with pytest.raises(Conflict):
        mem.remember("A fact about sessions.", type="fact", session_id=session_id)
    texts = [m.content for m in mem.store.iter_memories()]
    assert "A fact about sessions." not in texts and "A fact." not in texts
    assert len(texts) == len(seeded)
