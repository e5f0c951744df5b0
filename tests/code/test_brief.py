"""The branch brief: first in recall when the query is about the branch, built from the store
and from git."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cairn import Cairn, InvalidInput
from cairn.code.brief import asks_about_branch, branch_brief

from .conftest import Repo

Factory = Callable[..., Cairn]


@pytest.fixture
def feature(repo: Repo) -> Repo:
    repo.git("checkout", "-q", "-b", "feature/login-form")
    repo.write("src/login.py", "def login():\n    pass\n")
    repo.commit("Add the login form skeleton")
    repo.write("src/login.py", "def login():\n    return True\n")
    repo.commit("Make login succeed")
    return repo


def test_recall_puts_the_brief_first_for_open_work(feature: Repo, mem_in: Factory) -> None:
    mem = mem_in(feature.path)
    task = mem.remember("Wire the login form to the session API", type="task", cwd=feature.path)
    question = mem.remember(
        "Should failed logins lock the account?", type="open_question", cwd=feature.path
    )
    mem.remember("Login uses bcrypt for hashing", type="fact", cwd=feature.path)
    mem.set_branch_goal("Ship the login form", cwd=feature.path)
    result = mem.recall("what is still open on this branch?", cwd=feature.path)
    first = result.hits[0]
    assert first.kind == "brief" and first.ref == "brief:feature/login-form"
    assert "Ship the login form" in first.summary
    assert first.content is not None
    assert task.memory_id in first.content and question.memory_id in first.content
    assert "Make login succeed" in first.content and "Add the login form skeleton" in first.content
    assert "bcrypt" not in first.content
    assert result.refs[0] == "brief:feature/login-form"


def test_a_query_naming_the_branch_gets_the_brief(feature: Repo, mem_in: Factory) -> None:
    mem = mem_in(feature.path)
    mem.remember("Login form needs a captcha", type="task", cwd=feature.path)
    named = mem.recall("how far is login-form", cwd=feature.path)
    assert named.hits[0].kind == "brief"
    plain = mem.recall("login captcha", cwd=feature.path)
    assert all(hit.kind != "brief" for hit in plain.hits)


def test_no_brief_outside_the_checkout_or_in_the_past(
    feature: Repo, mem_in: Factory, tmp_path: Path
) -> None:
    mem = mem_in(feature.path)
    written = mem.remember("Finish the login form", type="task", cwd=feature.path)
    elsewhere = mem_in(tmp_path)
    result = elsewhere.recall("what is in progress", scope=written.scope)
    assert all(hit.kind != "brief" for hit in result.hits)
    past = mem.recall("what is in progress", cwd=feature.path, as_of="2026-08-01")
    assert all(hit.kind != "brief" for hit in past.hits)


def test_items_of_other_branches_stay_out(feature: Repo, mem_in: Factory) -> None:
    mem = mem_in(feature.path)
    mine = mem.remember("Login form: add remember-me", type="task", cwd=feature.path)
    feature.git("checkout", "-q", "main")
    other = mem.remember("Refactor the billing module", type="task", cwd=feature.path)
    feature.git("checkout", "-q", "feature/login-form")
    found = mem.branch_brief(cwd=feature.path)
    assert found is not None
    refs = [item.ref for item in found.open_items]
    assert mine.memory_id in refs and other.memory_id not in refs
    assert found.base == "main"
    assert [c.subject for c in found.recent_commits] == [
        "Make login succeed",
        "Add the login form skeleton",
    ]


def test_goal_comes_from_the_session_unless_set(feature: Repo, mem_in: Factory) -> None:
    mem = mem_in(feature.path)
    scope = mem.scope_for(cwd=feature.path)
    found = branch_brief(mem._ctx, feature.path, scope, session_goal="Build login")
    assert found is not None and (found.goal, found.goal_source) == ("Build login", "session")
    mem.set_branch_goal("Ship the login form", cwd=feature.path)
    mem.set_branch_goal("Ship the login form, with captcha", cwd=feature.path)
    found = branch_brief(mem._ctx, feature.path, scope, session_goal="Build login")
    assert found is not None
    assert (found.goal, found.goal_source) == ("Ship the login form, with captcha", "explicit")
    goal = mem.branch_goal(cwd=feature.path)
    assert goal is not None and goal.branch == "feature/login-form"


def test_sessions_on_the_branch_give_recent_sessions_and_the_goal(
    feature: Repo, mem_in: Factory
) -> None:
    mem = mem_in(feature.path)
    session = mem.activate("Build the login form", cwd=feature.path)
    found = mem.branch_brief(cwd=feature.path)
    assert found is not None
    assert [s.session_id for s in found.recent_sessions] == [session.session_id]
    assert found.recent_sessions[0].task == "Build the login form"
    assert (found.goal, found.goal_source) == ("Build the login form", "session")
    feature.git("checkout", "-q", "main")
    on_main = mem.branch_brief(cwd=feature.path)
    assert on_main is not None and on_main.recent_sessions == () and on_main.goal is None


def test_detached_head_and_plain_folders_have_no_brief(
    feature: Repo, mem_in: Factory, tmp_path: Path
) -> None:
    feature.git("checkout", "-q", "--detach", "HEAD")
    mem = mem_in(feature.path)
    assert mem.branch_brief(cwd=feature.path) is None
    plain = tmp_path / "plain"
    plain.mkdir()
    assert mem_in(plain).branch_brief(cwd=plain) is None
    with pytest.raises(InvalidInput, match="no branch is checked out"):
        mem.set_branch_goal("anything", cwd=feature.path)


def test_goal_must_be_one_short_line(feature: Repo, mem_in: Factory) -> None:
    mem = mem_in(feature.path)
    with pytest.raises(InvalidInput, match="one line"):
        mem.set_branch_goal("   ", cwd=feature.path)
    with pytest.raises(InvalidInput, match="one line"):
        mem.set_branch_goal("x" * 501, cwd=feature.path)


@pytest.mark.parametrize(
    ("query", "branch", "expected"),
    [
        ("what's still open?", "main", True),
        ("What am I working on", "x/y", True),
        ("anything in progress here", "topic", True),
        ("status of feature/login-form", "feature/login-form", True),
        ("is login-form done", "feature/login-form", True),
        ("the main reason for retries", "main", False),
        ("what is on the main branch", "main", True),
        ("how do we deploy", "feature/login-form", False),
        ("open the file", "dev", False),
        ("formal login spec", "feature/login-form", False),
    ],
)
def test_asks_about_branch(query: str, branch: str, expected: bool) -> None:
    assert asks_about_branch(query, branch) is expected
