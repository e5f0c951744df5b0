"""What is never said: contradicted, resting, retired memories (unless pinned), muted lessons,
and lessons already given in the session."""

from __future__ import annotations

from lessonkit import Repo

from cairn import Cairn, InvalidInput
from cairn.lifecycle import apply_act

PUBLISH = "npm publish"


def said(mem: Cairn, repo: Repo, command: str = PUBLISH, **kw: object) -> list[str]:
    result = mem.lessons("Bash", {"command": command}, cwd=repo.path, **kw)  # type: ignore[arg-type]
    return [lesson.ref for lesson in result.lessons]


def contradict_twice(mem: Cairn, ref: str) -> None:
    memory_id = int(ref.removeprefix("mem_"))
    for n in (1, 2):
        apply_act(mem._ctx, memory_id, effect="contradict", act_ref=f"act_{n}", kind="revert",
                  subject=f"abc{n}")  # fmt: skip


def test_contradicted_twice_without_confirmation_is_never_a_lesson(
    repo: Repo, writer: Cairn, agent: Cairn, open_as: object
) -> None:
    ref = writer.remember("Never run `npm publish` by hand", type="warning",
                          cwd=repo.path).memory_id  # fmt: skip
    pinned = writer.remember("`npm publish` needs the OTP from the vault", type="warning",
                             pinned=True, cwd=repo.path).memory_id  # fmt: skip
    contradict_twice(writer, ref)
    contradict_twice(writer, pinned)
    assert writer.get_memory(ref).records[0].memory.status == "resting"
    assert said(agent, repo) == [pinned]
    # A confirmation by another client restores it.
    assert agent.confirm(ref, cwd=repo.path).counted
    assert set(said(agent, repo)) == {ref, pinned}


def test_resting_and_retired_memories_are_never_lessons(
    repo: Repo, writer: Cairn, agent: Cairn, clock: object
) -> None:
    idle = writer.remember("Never run `npm publish` on Fridays", type="warning",
                           cwd=repo.path).memory_id  # fmt: skip
    kept = writer.remember("`npm publish` needs 2FA", type="warning", pinned=True,
                           cwd=repo.path).memory_id  # fmt: skip
    retired = writer.remember("`npm publish` goes through the proxy", type="warning",
                              cwd=repo.path).memory_id  # fmt: skip
    writer.forget(retired, reason="no proxy any more", cwd=repo.path)
    clock.advance(days=31)  # type: ignore[attr-defined]
    writer.recall("anything about releases", cwd=repo.path)  # rests idle memories
    assert writer.get_memory(idle).records[0].memory.status == "resting"
    assert said(agent, repo) == [kept]


def test_replaced_memories_give_way_to_their_correction(
    repo: Repo, writer: Cairn, agent: Cairn
) -> None:
    old = writer.remember("Never run `npm publish` locally", type="warning", cwd=repo.path)
    new = writer.correct(old.memory_id, "Run `npm publish` only from CI", reason="CI does it",
                         cwd=repo.path)  # fmt: skip
    assert said(agent, repo) == [new.memory_id]


def test_mute_rules_by_type_tag_and_path(repo: Repo, writer: Cairn, agent: Cairn) -> None:
    warning = writer.remember("Never run `npm publish` by hand", type="warning",
                              cwd=repo.path).memory_id  # fmt: skip
    flaky = writer.remember("`npm publish` times out on the VPN; retry", type="lesson",
                            tags=["flaky"], cwd=repo.path).memory_id  # fmt: skip
    docs = writer.remember("Files under docs/ are generated; edit the templates", type="warning",
                           cwd=repo.path).memory_id  # fmt: skip
    assert set(said(agent, repo)) == {warning, flaky}
    rule = agent.mute_lessons(type="warning", cwd=repo.path)
    assert rule.kind == "type" and rule.value == "warning"
    assert said(agent, repo) == [flaky]
    agent.mute_lessons(tag="flaky", cwd=repo.path)
    result = agent.lessons("Bash", PUBLISH, cwd=repo.path)
    assert result.lessons == () and result.muted == 2
    agent.unmute_lessons(type="warning", cwd=repo.path)
    assert said(agent, repo) == [warning]
    write_docs = {"file_path": repo.file("docs/guide.md"), "content": "x"}
    assert [x.ref for x in agent.lessons("Write", write_docs, cwd=repo.path).lessons] == [docs]
    agent.mute_lessons(path="docs/**", cwd=repo.path)
    assert agent.lessons("Write", write_docs, cwd=repo.path).lessons == ()
    assert [(r.kind, r.value) for r in agent.lesson_mutes(cwd=repo.path)] == [
        ("tag", "flaky"), ("path", "docs/**"),
    ]  # fmt: skip
    assert agent.unmute_lessons(type="warning", cwd=repo.path) is False


def test_global_rules_apply_everywhere_and_rules_are_checked(
    repo: Repo, writer: Cairn, agent: Cairn
) -> None:
    writer.remember("Never run `npm publish` by hand", type="warning", cwd=repo.path)
    agent.mute_lessons(type="WARNING", scope="global")
    assert said(agent, repo) == []
    for bad in ({"type": "nonsense"}, {"path": "/etc/**"}, {"path": "../x"}, {}):
        try:
            agent.mute_lessons(cwd=repo.path, **bad)
        except InvalidInput as exc:
            assert "mute" in exc.message or "type" in exc.message
        else:
            raise AssertionError(f"mute {bad} was accepted")
    again = agent.mute_lessons(type="warning", scope="global")
    assert len(agent.lesson_mutes(cwd=repo.path)) == 1 and again.value == "warning"


def test_the_activate_brief_says_which_rules_apply(repo: Repo, agent: Cairn) -> None:
    agent.mute_lessons(path="docs/**", cwd=repo.path)
    agent.mute_lessons(type="task", scope="global")
    brief = agent.activate("write docs", cwd=repo.path)
    assert {(r.kind, r.value) for r in brief.lesson_mutes} == {("path", "docs/**"),
                                                              ("type", "task")}  # fmt: skip


def test_no_repeats_in_a_session(repo: Repo, writer: Cairn, agent: Cairn) -> None:
    ref = writer.remember("Never run `npm publish` by hand", type="warning",
                          cwd=repo.path).memory_id  # fmt: skip
    assert said(agent, repo, session_id="claude-1") == [ref]
    again = agent.lessons("Bash", "npm publish --dry-run", cwd=repo.path, session_id="claude-1")
    assert again.lessons == () and again.repeated == 1
    assert said(agent, repo, session_id="claude-2") == [ref]
    assert said(agent, repo) == [ref]  # no session: nothing is remembered between calls
    assert said(agent, repo) == [ref]


def test_a_question_is_not_repeated_but_follows_an_earlier_note(
    repo: Repo, writer: Cairn, agent: Cairn
) -> None:
    ref = writer.remember("charge() must stay idempotent", type="warning",
                          source_ref="src/billing.py:8-11", cwd=repo.path).memory_id  # fmt: skip
    read = {"file_path": repo.file("src/billing.py")}
    edit = {
        "file_path": repo.file("src/billing.py"),
        "old_string": "def charge(customer, amount):",
        "new_string": "def charge(c, a):",
    }
    first = agent.lessons("Read", read, cwd=repo.path, session_id="s")
    assert [x.ref for x in first.lessons] == [ref] and first.lessons[0].question is None
    asked = agent.lessons("Edit", edit, cwd=repo.path, session_id="s")
    assert [x.ref for x in asked.lessons] == [ref] and asked.lessons[0].question
    assert agent.lessons("Edit", edit, cwd=repo.path, session_id="s").lessons == ()
    assert agent.lessons("Read", read, cwd=repo.path, session_id="s").lessons == ()
    # After Claude Code clears or compacts its context, what was said may be said again.
    agent.agent_start(cwd=repo.path, session_id="s", source="compact")
    assert [x.ref for x in agent.lessons("Read", read, cwd=repo.path, session_id="s").lessons] == [
        ref
    ]


def test_cairn_sessions_key_repeats_and_give_their_scope(
    repo: Repo, writer: Cairn, agent: Cairn
) -> None:
    ref = writer.remember("Never run `npm publish` by hand", type="warning",
                          cwd=repo.path).memory_id  # fmt: skip
    session = agent.activate("release", cwd=repo.path)
    first = agent.lessons("Bash", PUBLISH, session_id=session.session_id)
    assert first.scope == session.scope and [x.ref for x in first.lessons] == [ref]
    assert agent.lessons("Bash", PUBLISH, session_id=session.session_id).repeated == 1
    for bad in ("ses_000000000000000000000000", "has spaces in it", ""):
        try:
            agent.lessons("Bash", PUBLISH, session_id=bad, cwd=repo.path)
        except Exception as exc:  # noqa: BLE001 - any CairnError; the type is not the point
            assert "session" in str(exc)
        else:
            raise AssertionError(f"session_id {bad!r} was accepted")


def test_other_scopes_are_never_lessons_and_global_ones_are(
    repo: Repo, writer: Cairn, agent: Cairn
) -> None:
    other = "project:github.com/acme/other"
    writer.remember("Never run `npm publish` in the other project", type="warning", scope=other)
    writer.remember("charge() in the other project is not idempotent", type="warning",
                    scope=other, source_ref="src/billing.py:8-11", cwd=repo.path)  # fmt: skip
    everywhere = writer.remember("`npm publish` needs 2FA on every package", type="warning",
                                 scope="global").memory_id  # fmt: skip
    assert said(agent, repo) == [everywhere]
    edit = {
        "file_path": repo.file("src/billing.py"),
        "old_string": "def charge(customer, amount):",
        "new_string": "def charge(c, a):",
    }
    assert agent.lessons("Edit", edit, cwd=repo.path).lessons == ()
