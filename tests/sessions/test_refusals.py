"""Every way a session call is refused, each with a message that says what to do."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cairn import Cairn, Conflict, InvalidInput, InvalidRef, InvalidScope, NotFound, Refused

SCOPE = "project:example/api"
OTHER = "project:example/web"
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.fixture
def opened(mem: Cairn, seeded: dict[str, str]) -> tuple[str, str, str]:
    """An open session with one recall: (session id, retrieval id, a ref it returned)."""
    brief = mem.activate("work on sessions", scope=SCOPE)
    found = mem.recall("sessions postgres", session_id=brief.session_id)
    return brief.session_id, found.retrieval_id, found.hits[0].ref


def closed_session(mem: Cairn) -> str:
    session_id = mem.activate("short task", scope=SCOPE).session_id
    mem.end(session_id)
    return session_id


# sessions named by other calls ----------------------------------------------------------------
@pytest.mark.parametrize("session_id", ["ses_" + "0" * 24, "ses_nope", "", "mem_1"])
def test_unknown_session_is_refused_everywhere(mem: Cairn, session_id: str) -> None:
    calls: list[Callable[[], object]] = [
        lambda: mem.recall("anything", session_id=session_id),
        lambda: mem.feedback(
            session_id, "ret_1", [{"ref": "mem_1", "used": True, "effect": "helped"}]
        ),
        lambda: mem.commit(session_id, outcome="success", summary="done"),
        lambda: mem.end(session_id),
        lambda: mem.log_progress(session_id, "step one"),
        lambda: mem.pin("a note", session_id=session_id),
        lambda: mem.remember("A fact.", type="fact", session_id=session_id),
    ]
    for call in calls:
        with pytest.raises(NotFound, match="activate"):
            call()


def test_closed_session_is_refused_everywhere(mem: Cairn, seeded: dict[str, str]) -> None:
    session_id = mem.activate("short task", scope=SCOPE).session_id
    found = mem.recall("sessions postgres", session_id=session_id)
    retrieval_id, ref = found.retrieval_id, found.hits[0].ref
    mem.end(session_id)
    calls: list[Callable[[], object]] = [
        lambda: mem.recall("anything", session_id=session_id),
        lambda: mem.commit(session_id, outcome="success", summary="done"),
        lambda: mem.end(session_id),
        lambda: mem.log_progress(session_id, "step one"),
        lambda: mem.pin("a note", session_id=session_id),
        lambda: mem.remember("A fact.", type="fact", session_id=session_id),
        lambda: mem.feedback(
            session_id, retrieval_id, [{"ref": ref, "used": True, "effect": "helped"}]
        ),
    ]
    for call in calls:
        with pytest.raises(Conflict, match=r"already ended.*activate"):
            call()


def test_scope_mismatch_is_refused(mem: Cairn, seeded: dict[str, str]) -> None:
    session_id = mem.activate("work", scope=SCOPE).session_id
    with pytest.raises(InvalidScope, match=f"belongs to scope {SCOPE}, not {OTHER}"):
        mem.recall("anything", session_id=session_id, scope=OTHER)
    with pytest.raises(InvalidScope):
        mem.remember("A web fact.", type="fact", scope=OTHER, session_id=session_id)
    with pytest.raises(InvalidScope):
        mem.pin("note", scope=OTHER, session_id=session_id)
    with pytest.raises(InvalidScope):
        mem.remember_typed("A web fact.", "fact", scope=OTHER, session_id=session_id)
    assert all(m.scope != OTHER for m in mem.store.iter_memories())


def test_remember_in_a_session_takes_its_scope(mem: Cairn) -> None:
    session_id = mem.activate("work", scope=SCOPE).session_id
    result = mem.remember("Sessions expire after 30 minutes.", type="fact", session_id=session_id)
    assert result.scope == SCOPE
    stored = mem.get_memory(result.memory_id, scope=SCOPE).records[0].memory
    assert stored.session_id == session_id


# feedback ---------------------------------------------------------------------------------------
def test_unknown_retrieval_is_refused(mem: Cairn, opened: tuple[str, str, str]) -> None:
    session_id, _, ref = opened
    item = [{"ref": ref, "used": True, "effect": "helped"}]
    with pytest.raises(NotFound, match="is not a retrieval of session"):
        mem.feedback(session_id, "ret_999999", item)
    with pytest.raises(InvalidRef, match="ret_12"):
        mem.feedback(session_id, "evt_1", item)


def test_retrieval_of_another_session_is_refused(mem: Cairn, opened: tuple[str, str, str]) -> None:
    _, retrieval_id, ref = opened
    other = mem.activate("another task", scope=SCOPE).session_id
    with pytest.raises(NotFound, match=retrieval_id):
        mem.feedback(other, retrieval_id, [{"ref": ref, "used": True, "effect": "helped"}])


def test_refs_the_retrieval_did_not_return_are_refused(
    mem: Cairn, opened: tuple[str, str, str]
) -> None:
    session_id, retrieval_id, ref = opened
    stray = mem.remember("A later, unrelated fact about billing.", type="fact", scope=SCOPE)
    items = [
        {"ref": ref, "used": True, "effect": "helped"},
        {"ref": stray.memory_id, "used": False, "effect": "unknown"},
        {"procedure_id": "proc_77", "used": False, "effect": "unknown"},
    ]
    with pytest.raises(InvalidRef) as refused:
        mem.feedback(session_id, retrieval_id, items)
    assert stray.memory_id in refused.value.message and "proc_77" in refused.value.message
    assert ref in refused.value.message  # it says what the retrieval did return
    tallies = mem.get_memory(ref, scope=SCOPE).records[0].memory.evidence
    assert "feedback" not in tallies, "a refused call records nothing"


@pytest.mark.parametrize(
    ("assessments", "error", "match"),
    [
        ([], InvalidInput, "empty"),
        ({"ref": "mem_1"}, InvalidInput, "must be a list"),
        ("mem_1", InvalidInput, "must be a list"),
        ([{"used": True, "effect": "helped"}], InvalidInput, "exactly one"),
        ([{"ref": "{ref}", "used": "yes", "effect": "helped"}], InvalidInput, "true or false"),
        ([{"ref": "{ref}", "used": True, "effect": "great"}], InvalidInput, "effect 'great'"),
        ([{"ref": "{ref}", "used": True}], InvalidInput, "effect None"),
        ([{"ref": "{ref}", "used": True, "effect": "helped", "note": 1}], InvalidInput, "unknown"),
        ([{"ref": "ret_3", "used": True, "effect": "helped"}], InvalidRef, "neither"),
        (
            [
                {"ref": "{ref}", "used": True, "effect": "helped"},
                {"memory_id": "{ref}", "used": False, "effect": "unknown"},
            ],
            InvalidInput,
            "twice",
        ),
    ],
)
def test_bad_assessments_are_refused(
    mem: Cairn,
    opened: tuple[str, str, str],
    assessments: object,
    error: type[Exception],
    match: str,
) -> None:
    session_id, retrieval_id, ref = opened
    if isinstance(assessments, list):
        assessments = [
            {k: (v.replace("{ref}", ref) if isinstance(v, str) else v) for k, v in item.items()}
            for item in assessments
        ]
    with pytest.raises(error, match=match):
        mem.feedback(session_id, retrieval_id, assessments)  # type: ignore[arg-type]


def test_assessing_again_replaces_the_earlier_assessment(
    mem: Cairn, opened: tuple[str, str, str]
) -> None:
    session_id, retrieval_id, ref = opened
    for effect in ("helped", "helped", "harmed"):
        mem.feedback(session_id, retrieval_id, [{"ref": ref, "used": True, "effect": effect}])
    tallies = mem.get_memory(ref, scope=SCOPE).records[0].memory.evidence["feedback"]
    assert tallies["helped"] == 0 and tallies["harmed"] == 1 and tallies["used"] == 1


# commit -----------------------------------------------------------------------------------------
def test_commit_before_feedback_lists_the_missing_retrievals(
    mem: Cairn, opened: tuple[str, str, str]
) -> None:
    session_id, retrieval_id, ref = opened
    second = mem.recall("deploy docker", session_id=session_id).retrieval_id
    mem.feedback(session_id, retrieval_id, [{"ref": ref, "used": True, "effect": "helped"}])
    with pytest.raises(Conflict) as refused:
        mem.commit(session_id, outcome="success", summary="done")
    message = refused.value.message
    assert second in message and retrieval_id not in message.split("feedback:")[1]
    session = mem.store.get_session(session_id)
    assert session is not None and session.is_open, "a refused commit leaves the session open"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"outcome": "great", "summary": "done"}, "outcome 'great'"),
        ({"outcome": None, "summary": "done"}, "outcome None"),
        ({"outcome": "success", "summary": "  "}, "summary is blank"),
        ({"outcome": "success", "summary": "done", "used": ["mem_999"]}, "mem_999"),
        ({"outcome": "success", "summary": "done", "procedure": {"steps": []}}, "steps is empty"),
        ({"outcome": "success", "summary": "done", "procedure": {"how": ["x"]}}, "unknown"),
        ({"outcome": "success", "summary": "done", "procedure": ["step"]}, "must be an object"),
        ({"outcome": "success", "summary": "done", "procedure": {"steps": "run it"}}, "list"),
        (
            {
                "outcome": "success",
                "summary": "done",
                "procedure": {"steps": ["a"], "context": "x"},
            },
            "context must be an object",
        ),
    ],
)
def test_bad_commit_arguments_are_refused(
    mem: Cairn, kwargs: dict[str, object], match: str
) -> None:
    session_id = mem.activate("an empty scope", scope=SCOPE).session_id
    with pytest.raises(InvalidInput, match=match):
        mem.commit(session_id, **kwargs)  # type: ignore[arg-type]
    session = mem.store.get_session(session_id)
    assert session is not None and session.is_open


def test_secrets_are_refused_in_session_text(mem: Cairn) -> None:
    session_id = mem.activate("an empty scope", scope=SCOPE).session_id
    with pytest.raises(Refused):
        mem.activate(f"deploy with token {SECRET}", scope=SCOPE)
    with pytest.raises(Refused):
        mem.activate("deploy", scope=SCOPE, task_context={"token": SECRET})
    with pytest.raises(Refused):
        mem.commit(session_id, outcome="success", summary=f"used {SECRET}")
    with pytest.raises(Refused):
        mem.commit(
            session_id,
            outcome="success",
            summary="done",
            procedure={"steps": [f"export GITHUB_TOKEN={SECRET}"]},
        )
    with pytest.raises(Refused):
        mem.pin(f"the key is {SECRET}", scope=SCOPE)
    with pytest.raises(Refused):
        mem.log_progress(session_id, f"pushed with {SECRET}")


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda m: m.activate("  ", scope=SCOPE), "task is blank"),
        (lambda m: m.activate("x", scope=SCOPE, task_context=["a"]), "task_context must be"),
        (lambda m: m.activate("x", scope=SCOPE, task_context={"a": {1, 2}}), "JSON values"),
        (lambda m: m.recall("x", scope=SCOPE, evidence="all"), "evidence 'all'"),
        (lambda m: m.recall("x", scope=SCOPE, task_context="ios"), "task_context must be"),
        (lambda m: m.pin("   ", scope=SCOPE), "blank"),
        (lambda m: m.history(0, scope=SCOPE), "max_chars 0"),
        (lambda m: m.episodes("yesterday-ish", scope=SCOPE), "timestamp"),
    ],
)
def test_bad_arguments_are_refused(mem: Cairn, call: Callable[[Cairn], object], match: str) -> None:
    with pytest.raises(InvalidInput, match=match):
        call(mem)
    assert mem.store.get_session("ses_" + "0" * 24) is None
