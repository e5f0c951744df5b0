"""Fixtures for the session tests: a seeded scope and a helper that runs feedback on everything."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cairn import Cairn

SCOPE = "project:example/api"
OTHER = "project:example/web"

SEED: tuple[tuple[str, str, str], ...] = (
    ("db", "decision", "We store sessions in PostgreSQL, not Redis."),
    ("ci", "constraint", "CI must pass on Python 3.11 before merge."),
    ("migrate", "warning", "Running migrations without a dry run dropped the audit table."),
    ("deploy", "instruction", "Deploy with make release then push the docker image."),
    ("style", "preference", "Prefer pytest fixtures over setUp methods in new tests."),
    ("flaky", "lesson", "The checkout test was flaky because of a shared temp directory."),
)


@pytest.fixture
def seeded(mem: Cairn) -> dict[str, str]:
    """The refs of a few typed memories in SCOPE, by key."""
    return {key: mem.remember(text, type=t, scope=SCOPE).memory_id for key, t, text in SEED}


AssessAll = Callable[[str, str, str], None]


@pytest.fixture
def assess_all(mem: Cairn) -> AssessAll:
    """Give feedback on every ref a retrieval returned (used, with the given effect)."""

    def assess(session_id: str, retrieval_id: str, effect: str = "no_effect") -> None:
        number = int(retrieval_id.removeprefix("ret_"))
        retrieval = mem.store.get_retrieval(number)
        assert retrieval is not None
        items = [{"ref": ref, "used": True, "effect": effect} for ref in retrieval.refs]
        if items:
            mem.feedback(session_id, retrieval_id, items)

    return assess
