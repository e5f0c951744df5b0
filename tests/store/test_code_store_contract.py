"""The code-awareness part of the `Store` contract (migration 0003), on SQLite and PostgreSQL."""

from __future__ import annotations

from cairn.records.code import BranchGoal, CitationRow, NewAct
from cairn.records.sessions import Session
from cairn.store.base import Store
from storekit import IDENTITY, OTHER, SCOPE, at, new_event, new_memory, unit


def citation(memory_id: int, **overrides: object) -> CitationRow:
    values: dict[str, object] = {
        "memory_id": memory_id, "scope": SCOPE, "kind": "lines", "path": "src/app.py",
        "symbol": None, "commit": None, "root": "/work/app", "start_line": 3, "end_line": 5,
        "digest": "d" * 64, "line_hashes": ("a1", "b2", "c3"), "before": ("x",), "after": ("y",),
        "file_hash": "f" * 64, "created_at": at(0),
    }  # fmt: skip
    values.update(overrides)
    return CitationRow(**values)  # type: ignore[arg-type]


def test_citations_round_trip_and_follow_current_memories(store: Store) -> None:
    first = store.add_memory(new_memory(content="one"))
    second = store.add_memory(new_memory(content="two"))
    row = citation(first)
    store.put_citation(row)
    store.put_citation(citation(second, kind="commit", path=None, commit="abc1234def",
                                root="/work/other", created_at=at(5)))  # fmt: skip
    assert store.get_citations([first, 999]) == {first: row}
    assert [c.memory_id for c in store.current_citations([SCOPE])] == [first, second]
    assert store.current_citations([OTHER]) == []
    store.update_memory(second, {"status": "retired", "until": at(9)})
    assert [c.memory_id for c in store.current_citations(None)] == [first]
    assert store.citation_roots(SCOPE, 5) == ["/work/other", "/work/app"]


def test_commit_citations_match_by_prefix_and_follow_rewrites(store: Store) -> None:
    memory = store.add_memory(new_memory(content="c"))
    store.put_citation(citation(memory, kind="commit", path=None, commit="abc1234def"))
    assert store.memories_citing_commit(SCOPE, "abc1234") == [memory]
    assert store.memories_citing_commit(SCOPE, "abc1234def99") == [memory]
    assert store.memories_citing_commit(SCOPE, "abd") == []
    assert store.memories_citing_commit(OTHER, "abc1234") == []
    assert store.rewrite_commit_citations([("abc1234def", "fff0000")]) == 1
    assert store.get_citations([memory])[memory].commit == "fff0000"


def test_branch_goals_newest_wins(store: Store) -> None:
    assert store.get_branch_goal(SCOPE, "feature/x") is None
    store.set_branch_goal(BranchGoal(SCOPE, "feature/x", "first", at(0), "cli"))
    store.set_branch_goal(BranchGoal(SCOPE, "feature/x", "second", at(1), "cli", "ses_1"))
    store.set_branch_goal(BranchGoal(OTHER, "feature/x", "elsewhere", at(2)))
    goal = store.get_branch_goal(SCOPE, "feature/x")
    assert goal == BranchGoal(SCOPE, "feature/x", "second", at(1), "cli", "ses_1")


def test_branch_memories_and_sessions(store: Store) -> None:
    task = store.add_memory(new_memory(content="t", type="task", branch="f", session_id="s1"))
    store.add_memory(new_memory(content="fact", type="fact", branch="f"))
    store.add_memory(new_memory(content="q", type="open_question", branch="g"))
    later = store.add_memory(new_memory(content="t2", type="task", branch="f", written_at=at(3)))
    found = store.branch_memories([SCOPE], "f", ["task", "open_question"], 10)
    assert [m.id for m in found] == [later, task]
    store.add_session(Session("s2", SCOPE, "Build it", {}, "open", at(5), branch="f"))
    sessions = store.branch_sessions(SCOPE, "f", 5)
    assert [(s.session_id, s.task) for s in sessions] == [("s2", "Build it"), ("s1", None)]


def test_cites_by_branch_or_by_a_session_on_the_branch(store: Store) -> None:
    a = store.add_memory(new_memory(content="a"))
    b = store.add_memory(new_memory(content="b"))
    c = store.add_memory(new_memory(content="c"))
    store.add_cite(a, scope=SCOPE, branch="f", session_id=None, integration="x", at=at(1))
    store.add_cite(b, scope=None, branch=None, session_id="s9", integration="x", at=at(2))
    store.add_cite(c, scope=OTHER, branch="f", session_id=None, integration="x", at=at(3))
    store.add_session(Session("s9", SCOPE, "task", {}, "open", at(0), branch="f"))
    assert store.cited_on_branch(SCOPE, "f") == [a, b]
    assert store.cited_on_branch(SCOPE, "g") == []
    assert [(m, s) for m, s, _ in store.cites_in([SCOPE])] == [(a, SCOPE)]
    assert len(store.cites_in(None)) == 3


def test_events_of_kind(store: Store) -> None:
    store.add_event(new_event(kind="recall"))
    store.add_event(new_event(kind="remember"))
    store.add_event(new_event(kind="recall", scope=OTHER))
    assert [e.kind for e in store.events_of_kind(["recall"], [SCOPE])] == ["recall"]
    assert len(store.events_of_kind(["recall", "remember"], None)) == 3


def test_acts_round_trip_and_undo(store: Store) -> None:
    effects = ({"memory_id": 3, "effect": "confirm", "prior_status": "active"},)
    act_id = store.add_act(NewAct(SCOPE, "merge", "f", at(1), "git-hook", effects, {"k": "v"}))
    later = store.add_act(NewAct(SCOPE, "discard", "g", at(2), None, (), {}))
    act = store.get_act(act_id)
    assert act is not None and act.effects == effects and act.detail == {"k": "v"}
    assert act.undone_at is None and act.ref == f"act_{act_id}"
    assert [a.id for a in store.acts_in(SCOPE, ["merge", "discard"], 10)] == [later, act_id]
    assert store.acts_in(OTHER, ["merge"], 10) == []
    store.mark_act_undone(act_id, at(4))
    undone = store.get_act(act_id)
    assert undone is not None and undone.undone_at == at(4)
    assert store.get_act(999) is None


def test_idle_and_current_memories(store: Store) -> None:
    idle = store.add_memory(new_memory(content="idle"))
    pinned = store.add_memory(new_memory(content="pinned", pinned=True))
    store.add_memory(new_memory(content="pref", type="preference"))
    cited = store.add_memory(new_memory(content="cited"))
    store.update_memory(cited, {"last_cited_at": at(100)})
    fresh = store.add_memory(new_memory(content="fresh", written_at=at(100)))
    assert [m.id for m in store.idle_memories([SCOPE], at(50))] == [idle]
    current = store.current_memories([SCOPE], types=["fact"], statuses=("active",), limit=10)
    assert [m.id for m in current] == [fresh, cited, pinned, idle]
    assert len(store.current_memories([SCOPE], limit=2)) == 2


def test_index_health(store: Store) -> None:
    with_vector = store.add_memory(new_memory(content="v"))
    store.put_vector(with_vector, IDENTITY, unit(1, 0, 0, 0))
    store.add_memory(new_memory(content="bare"))
    health = store.index_health([SCOPE])
    assert health["current"] == 2 and health["without_vector"] == 1
    assert health["without_lexical"] == 2 and health["vector_identities"] == {IDENTITY: 1}
    assert health["newest_write"] is not None
    assert store.index_health([OTHER])["current"] == 0


def test_proposals_are_never_reopened_once_decided(store: Store) -> None:
    row = store.upsert_proposal(SCOPE, "merge", "merge:1,2", [1, 2], {"summary": "s"}, at(0))
    assert (row.status, row.memory_ids, row.ref) == ("open", (1, 2), f"tidy_{row.id}")
    again = store.upsert_proposal(SCOPE, "merge", "merge:1,2", [1, 2], {"summary": "t"}, at(1))
    assert again.id == row.id and again.payload == {"summary": "t"}
    store.set_proposal_status(row.id, "declined", at(2))
    kept = store.upsert_proposal(SCOPE, "merge", "merge:1,2", [1, 2], {"summary": "u"}, at(3))
    assert kept.status == "declined" and kept.payload == {"summary": "t"}
    other = store.upsert_proposal(SCOPE, "skill", "skill:3", [3], {}, at(4))
    store.set_proposal_status(other.id, "stale", None)
    reopened = store.upsert_proposal(SCOPE, "skill", "skill:3", [3], {}, at(5))
    assert reopened.status == "open"
    assert [p.id for p in store.proposals(SCOPE, ["open"])] == [other.id]
    assert store.get_proposal(999) is None
