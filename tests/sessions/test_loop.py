"""The whole session loop: activate -> recall -> feedback -> commit, and what each step leaves."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cairn import Cairn, Conflict
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.errors import InvalidInput, InvalidScope

SCOPE = "project:example/api"
OTHER = "project:example/web"


def test_full_loop_activate_recall_feedback_commit(mem: Cairn, seeded: dict[str, str]) -> None:
    brief = mem.activate("move the session store to postgres", scope=SCOPE)
    assert brief.session_id.startswith("ses_") and len(brief.session_id) == 28
    assert brief.retrieval_id.startswith("ret_")
    assert seeded["db"] in [h.ref for h in brief.memories]

    found = mem.recall("where are sessions stored", session_id=brief.session_id)
    assert found.session_id == brief.session_id
    assert found.retrieval_id != brief.retrieval_id
    assert found.hits[0].ref == seeded["db"]

    with pytest.raises(Conflict) as refused:
        mem.commit(brief.session_id, outcome="success", summary="Moved the store.")
    assert brief.retrieval_id in refused.value.message
    assert found.retrieval_id in refused.value.message

    first = mem.feedback(
        brief.session_id,
        brief.retrieval_id,
        [{"memory_id": seeded["db"], "used": True, "effect": "helped"}],
    )
    assert first.recorded == 1 and first.pending == (found.retrieval_id,)
    second = mem.feedback(
        brief.session_id,
        found.retrieval_id,
        [{"memory_id": found.hits[0].ref, "used": True, "effect": "helped"}],
    )
    assert second.pending == ()

    done = mem.commit(
        brief.session_id,
        outcome="success",
        summary="Moved the session store to PostgreSQL.",
        procedure={"steps": ["Add the psycopg pool", "Migrate the sessions table"]},
        used=[seeded["db"]],
    )
    assert done.status == "committed"
    assert done.episode_id.startswith("ep_") and done.procedure_id is not None
    assert done.cited == (seeded["db"],)

    session = mem.store.get_session(brief.session_id)
    assert session is not None and session.status == "committed"
    [episode] = mem.store.episodes_for_sessions([brief.session_id])
    assert episode.ref == done.episode_id
    assert (episode.outcome, episode.task) == ("success", "move the session store to postgres")
    memory = mem.get_memory(seeded["db"], scope=SCOPE).records[0].memory
    assert memory.cited == 1 and memory.last_cited_at is not None
    assert memory.evidence["feedback"]["helped"] == 2
    kinds = [e.kind for e in mem.store.iter_events()]
    assert {"activate", "recall", "feedback", "commit"} <= set(kinds)


def test_recall_in_a_session_defaults_to_its_scope(mem: Cairn, seeded: dict[str, str]) -> None:
    brief = mem.activate("anything", scope=SCOPE)
    result = mem.recall("sessions postgres", session_id=brief.session_id)
    assert result.scope == SCOPE
    same = mem.recall("sessions postgres", session_id=brief.session_id, scope=SCOPE)
    assert same.scope == SCOPE


def test_empty_retrievals_need_no_feedback(mem: Cairn) -> None:
    brief = mem.activate("an empty scope has nothing to show", scope=SCOPE)
    assert brief.memories == () and brief.constraints == ()
    found = mem.recall("anything at all", session_id=brief.session_id)
    assert found.hits == ()
    done = mem.commit(brief.session_id, outcome="unknown", summary="Nothing to go on.")
    assert done.procedure_id is None


def test_end_closes_without_feedback_or_procedure(mem: Cairn, seeded: dict[str, str]) -> None:
    brief = mem.activate("look around", scope=SCOPE)
    mem.recall("deploy", session_id=brief.session_id)
    ended = mem.end(brief.session_id)
    assert ended.status == "ended" and ended.procedure_id is None
    [episode] = mem.store.episodes_for_sessions([brief.session_id])
    assert episode.outcome == "unknown"
    with pytest.raises(Conflict, match="already ended"):
        mem.end(brief.session_id)


def test_task_context_merges_and_steers_recall(mem: Cairn) -> None:
    web = mem.remember("How login works on the web dashboard: passwords.", type="fact", scope=SCOPE)
    ios = mem.remember("iOS clients sign in through Auth0.", type="fact", scope=SCOPE)
    plain = mem.activate("fix login", scope=SCOPE)
    steered = mem.activate("fix login", scope=SCOPE, task_context={"platform": "iOS"})

    def score(session_id: str, **kw: object) -> float:
        result = mem.recall("how does login work", session_id=session_id, cut=False, **kw)  # type: ignore[arg-type]
        return next(h.score for h in result.hits if h.ref == ios.memory_id)

    without = score(plain.session_id)
    with_context = score(steered.session_id, task_context={"auth_provider": "Auth0"})
    assert with_context > without
    session = mem.store.get_session(steered.session_id)
    assert session is not None
    assert session.task_context == {"platform": "iOS", "auth_provider": "Auth0"}
    recalls = [e for e in mem.store.iter_events() if e.kind == "recall"]
    assert any("Auth0" in phrase for phrase in recalls[-1].payload["also"])
    assert web.memory_id != ios.memory_id


def test_brief_sections_are_typed_scoped_and_ordered(mem: Cairn) -> None:
    low = mem.remember("Tabs are banned in YAML files.", type="constraint", scope=SCOPE, weight=0.2)
    high = mem.remember("Every endpoint requires auth.", type="constraint", scope=SCOPE, weight=0.9)
    pinned = mem.remember(
        "The on-call rota is in ops/rota.md.", type="fact", scope=SCOPE, pinned=True
    )
    warn = mem.remember("The staging DB is shared with QA.", type="warning", scope=SCOPE)
    glob = mem.remember("Write dates in ISO 8601.", type="preference", scope="global")
    mem.remember("Other projects use MySQL.", type="constraint", scope=OTHER)
    brief = mem.activate("review the API", scope=SCOPE)
    assert [m.memory_id for m in brief.constraints] == [high.memory_id, low.memory_id]
    assert [m.memory_id for m in brief.pinned] == [pinned.memory_id]
    assert [m.memory_id for m in brief.warnings] == [warn.memory_id]
    assert [m.memory_id for m in brief.preferences] == [glob.memory_id]
    shown = brief.refs
    assert len(shown) == len(set(shown)), "a memory shows once"
    assert all("MySQL" not in m.content for m in brief.constraints)
    assert brief.more_available is False


def test_brief_respects_its_budget(
    store_location: str, tmp_path: Path, clock: object, embedder: HashingEmbedder
) -> None:
    settings = Settings(home=tmp_path / "home", embedder="hashing", brief_budget_chars=300)
    with Cairn.open(store_location, settings=settings, embedder=embedder, cwd=tmp_path) as mem:
        for i in range(8):
            text = f"Constraint number {i}: " + "x" * 60
            mem.remember(text, type="constraint", scope=SCOPE, dedup=False)
        brief = mem.activate("anything", scope=SCOPE)
    assert 0 < len(brief.constraints) < 8
    assert brief.used_chars <= 300 and brief.budget_chars == 300
    assert brief.more_available is True


def test_more_available_when_a_section_overflows(mem: Cairn) -> None:
    for i in range(12):
        mem.remember(f"Warning {i}: the {i}th service is fragile.", type="warning", scope=SCOPE)
    brief = mem.activate("anything", scope=SCOPE)
    assert len(brief.warnings) == 10 and brief.more_available is True


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_branch_brief_from_git(mem: Cairn, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "feature/sessions")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "T")
    for n in range(7):
        (repo / f"f{n}.txt").write_text(str(n))
        _git(repo, "add", ".")
        _git(repo, "commit", "-q", "-m", f"commit number {n}")
    brief = mem.activate("continue the sessions work", cwd=repo)
    assert brief.branch.branch == "feature/sessions"
    assert [c.subject for c in brief.branch.commits] == [
        f"commit number {n}" for n in (6, 5, 4, 3, 2)
    ]
    plain = tmp_path / "plain"
    plain.mkdir()
    empty = mem.activate("not a repository", cwd=plain)
    assert empty.branch.branch is None and empty.branch.commits == ()


def test_activate_brief_carries_goal_and_open_items_of_the_branch(
    mem: Cairn, tmp_path: Path
) -> None:
    repo = tmp_path / "work"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "T")
    (repo / "a.txt").write_text("a")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "initial")
    _git(repo, "checkout", "-q", "-b", "feature/export")
    (repo / "b.txt").write_text("b")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "start the exporter")
    task = mem.remember("Write the JSONL exporter.", type="task", cwd=repo)
    question = mem.remember("Should exports include vectors?", type="open_question", cwd=repo)
    brief = mem.activate("finish the exporter", cwd=repo)
    assert brief.branch.branch == "feature/export"
    assert brief.branch.goal == "finish the exporter"
    assert {i.ref for i in brief.branch.open_items} == {task.memory_id, question.memory_id}
    assert [c.subject for c in brief.branch.commits] == ["start the exporter"]


def test_a_query_in_a_session_is_a_retrieval_that_needs_feedback(
    mem: Cairn, seeded: dict[str, str]
) -> None:
    brief = mem.activate("where do sessions live", scope=SCOPE)
    asked = mem.query_in_session("sessions in postgres", session_id=brief.session_id, limit=3)
    assert asked.session_id == brief.session_id and asked.scope == SCOPE
    assert asked.retrieval_id is not None and asked.retrieval_id != brief.retrieval_id
    nearest = mem.query("sessions in postgres", scope=SCOPE, limit=3)
    assert [h.ref for h in asked.hits] == [h.ref for h in nearest]
    with pytest.raises(Conflict) as refused:
        mem.commit(brief.session_id, outcome="success", summary="Read.")
    assert asked.retrieval_id in refused.value.message
    for retrieval, refs in ((brief.retrieval_id, [h.ref for h in brief.memories]),
                            (asked.retrieval_id, [h.ref for h in asked.hits])):  # fmt: skip
        assessed = [{"memory_id": ref, "used": False, "effect": "no_effect"} for ref in refs]
        mem.feedback(brief.session_id, retrieval, assessed or [
            {"memory_id": seeded["db"], "used": False, "effect": "no_effect"}])  # fmt: skip
    assert mem.commit(brief.session_id, outcome="success", summary="Read.").status == "committed"


def test_a_query_in_another_scopes_session_is_refused(mem: Cairn, seeded: dict[str, str]) -> None:
    brief = mem.activate("web work", scope=OTHER)
    with pytest.raises(InvalidScope, match=f"belongs to scope {OTHER}"):
        mem.query_in_session("sessions", session_id=brief.session_id, scope=SCOPE)


def test_activate_without_standing_leaves_out_what_the_session_start_gave(
    mem: Cairn, seeded: dict[str, str]
) -> None:
    full = mem.activate("move the session store to postgres", scope=SCOPE)
    assert full.constraints and full.warnings  # the seeded scope has standing memories
    lean = mem.activate("move the session store to postgres", scope=SCOPE, standing=False)
    groups = (lean.pinned, lean.constraints, lean.warnings, lean.instructions, lean.preferences)
    assert all(group == () for group in groups) and lean.branch.branch is None
    assert [h.ref for h in lean.memories] == [h.ref for h in full.memories]
    start = mem.agent_start(scope=SCOPE)
    assert "standing: false" in start.text
    with pytest.raises(InvalidInput, match="standing must be true or false"):
        mem.activate("x", scope=SCOPE, standing="no")  # type: ignore[arg-type]
