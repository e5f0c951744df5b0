"""The code-awareness and lifecycle part of the `Store` contract (citations, branches, cites,
acts, proposals, resting lookups), unchanged on SQLite and PostgreSQL (`store` fixture)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from cairn.records.code import BranchGoal, BriefSession, CitationRow, NewAct
from cairn.records.sessions import Session
from cairn.store.base import LexicalDoc, Store
from storekit import OTHER, SCOPE, T0, at, new_event, new_memory


def citation(memory_id: int, **overrides: object) -> CitationRow:
    values: dict[str, object] = {
        "memory_id": memory_id,
        "scope": SCOPE,
        "kind": "lines",
        "path": "src/app.py",
        "symbol": None,
        "commit": None,
        "root": "/repo",
        "start_line": 10,
        "end_line": 24,
        "digest": "d1",
        "line_hashes": ("a", "b"),
        "before": ("c",),
        "after": (),
        "file_hash": "f1",
        "created_at": T0,
    }
    values.update(overrides)
    return CitationRow(**values)  # type: ignore[arg-type]


def test_citations_round_trip_replace_and_follow_current_memories(store: Store) -> None:
    first = store.add_memory(new_memory(content="a"))
    second = store.add_memory(new_memory(content="b", scope=OTHER))
    row = citation(first, symbol="App.run ✓")
    store.put_citation(row)
    store.put_citation(citation(second, scope=OTHER, root="/other", created_at=at(5)))
    assert store.get_citations([first, 999]) == {first: row}
    store.put_citation(replace(row, digest="d2", line_hashes=("z",)))
    assert store.get_citations([first])[first].line_hashes == ("z",)
    assert [c.memory_id for c in store.current_citations(None)] == [first, second]
    assert [c.memory_id for c in store.current_citations([OTHER])] == [second]
    store.update_memory(first, {"status": "retired", "until": at(1)})
    assert [c.memory_id for c in store.current_citations([SCOPE])] == []
    assert store.citation_roots(OTHER, 5) == ["/other"]


def test_commit_citations_match_by_prefix_and_can_be_rewritten(store: Store) -> None:
    memory_id = store.add_memory(new_memory(content="commit"))
    sha = "abcdef1234567890abcdef1234567890abcdef12"
    store.put_citation(citation(memory_id, kind="commit", commit=sha, path=None))
    assert store.memories_citing_commit(SCOPE, "ABCDEF12") == [memory_id]
    assert store.memories_citing_commit(SCOPE, sha + "ff") == [memory_id]
    assert store.memories_citing_commit(SCOPE, "abc") == []
    assert store.memories_citing_commit(OTHER, sha) == []
    assert store.rewrite_commit_citations([(sha, "1111222233334444"), ("nope", "x")]) == 1
    assert store.memories_citing_commit(SCOPE, "11112222") == [memory_id]


def test_commit_prefixes_compare_exactly_without_wildcards(store: Store) -> None:
    memory_id = store.add_memory(new_memory(content="commit"))
    store.put_citation(citation(memory_id, kind="commit", commit="abcdef12", path=None))
    assert store.memories_citing_commit(SCOPE, "abcdef12") == [memory_id]
    for query in ("abc_ef12", "abcd%", "%%%%", "____", "abcdef1_"):
        assert store.memories_citing_commit(SCOPE, query) == [], query
    other = store.add_memory(new_memory(content="odd sha"))
    store.put_citation(citation(other, kind="commit", commit="ab_d", path=None))
    assert store.memories_citing_commit(SCOPE, "abcdef12") == [memory_id]
    assert store.memories_citing_commit(SCOPE, "AB_D1234") == [other]


def test_branch_goals_memories_and_sessions(store: Store) -> None:
    store.set_branch_goal(BranchGoal(SCOPE, "feat", "old goal", T0))
    store.set_branch_goal(BranchGoal(SCOPE, "feat", "new goal", at(1), "cli", "ses_1"))
    assert store.get_branch_goal(SCOPE, "feat") == BranchGoal(
        SCOPE, "feat", "new goal", at(1), "cli", "ses_1"
    )
    assert store.get_branch_goal(SCOPE, "main") is None
    task = store.add_memory(new_memory(content="t", type="task", branch="feat", written_at=at(2)))
    store.add_memory(new_memory(content="f", type="fact", branch="feat"))
    store.add_memory(new_memory(content="m", type="task", branch="main"))
    assert [m.id for m in store.branch_memories([SCOPE], "feat", ["task"], 5)] == [task]
    store.add_session(
        Session("ses_1", SCOPE, "build it", {}, "open", at(3), integration=None, branch="feat")
    )
    store.add_memory(new_memory(content="s", branch="feat", session_id="ses_2", written_at=at(4)))
    assert store.branch_sessions(SCOPE, "feat", 5) == [
        BriefSession("ses_2", None, at(4)),
        BriefSession("ses_1", "build it", at(3), "open"),
    ]


def test_cites_by_branch_session_and_scope(store: Store) -> None:
    store.add_session(Session("ses_b", SCOPE, "task", {}, "open", T0, branch="feat"))
    kw = {"integration": None, "at": T0}
    store.add_cite(1, scope=SCOPE, branch="feat", session_id=None, **kw)  # type: ignore[arg-type]
    store.add_cite(2, scope=SCOPE, branch=None, session_id="ses_b", **kw)  # type: ignore[arg-type]
    store.add_cite(3, scope=OTHER, branch="feat", session_id=None, **kw)  # type: ignore[arg-type]
    assert store.cited_on_branch(SCOPE, "feat") == [1, 2]
    assert store.cites_in([OTHER]) == [(3, OTHER, T0)]
    assert len(store.cites_in(None)) == 3


def test_events_of_kind(store: Store) -> None:
    wanted = store.add_event(new_event(kind="merge"))
    store.add_event(new_event(kind="remember"))
    other = store.add_event(new_event(kind="merge", scope=OTHER))
    assert [e.id for e in store.events_of_kind(["merge"], [SCOPE])] == [wanted]
    assert [e.id for e in store.events_of_kind(["merge"], None)] == [wanted, other]


def test_acts_round_trip_and_undo(store: Store) -> None:
    effects = ({"memory_id": 1, "effect": "retired", "prior_status": "active"},)
    act_id = store.add_act(NewAct(SCOPE, "merge", "feat", T0, "cli", effects, {"base": "main"}))
    store.add_act(NewAct(SCOPE, "revert", "abc123", at(1), None, (), {}))
    act = store.get_act(act_id)
    assert act is not None and act.effects == effects and act.detail == {"base": "main"}
    assert act.undone_at is None and act.at == T0
    assert [a.kind for a in store.acts_in(SCOPE, ["merge", "revert"], 5)] == ["revert", "merge"]
    store.mark_act_undone(act_id, at(2))
    assert store.get_act(act_id).undone_at == at(2)  # type: ignore[union-attr]
    assert store.get_act(424242) is None


def test_idle_and_current_memories(store: Store) -> None:
    idle = store.add_memory(new_memory(content="idle", written_at=at(0)))
    store.add_memory(new_memory(content="pinned", pinned=True))
    store.add_memory(new_memory(content="pref", type="preference"))
    cited = store.add_memory(new_memory(content="cited"))
    store.update_memory(cited, {"last_cited_at": at(30)})
    store.add_memory(new_memory(content="young", written_at=at(60)))
    assert [m.id for m in store.idle_memories([SCOPE], at(10))] == [idle]
    resting = store.add_memory(new_memory(content="rest"))
    store.update_memory(resting, {"status": "resting"})
    current = store.current_memories([SCOPE], statuses=("resting",))
    assert [m.id for m in current] == [resting]
    assert [m.id for m in store.current_memories([SCOPE], types=["preference"])] != []
    assert len(store.current_memories([SCOPE], limit=2)) == 2


def test_index_health_counts_what_is_missing(store: Store) -> None:
    full = store.add_memory(new_memory(content="full", written_at=at(3)))
    store.put_vector(full, "e/2", np.asarray([1.0, 0.0], dtype=np.float32))
    store.put_lexical(full, LexicalDoc("full", "", "", ""))
    store.add_memory(new_memory(content="bare", written_at=at(1)))
    health = store.index_health([SCOPE])
    assert health == {
        "current": 2,
        "without_vector": 1,
        "without_lexical": 1,
        "newest_write": at(3),
        "vector_identities": {"e/2": 1},
    }
    assert store.index_health(["nowhere"])["current"] == 0


def test_proposals_are_upserted_but_decisions_stick(store: Store) -> None:
    first = store.upsert_proposal(SCOPE, "merge", "merge:1,2", [1, 2], {"why": "same"}, T0)
    assert (first.status, first.memory_ids, first.payload) == ("open", (1, 2), {"why": "same"})
    again = store.upsert_proposal(SCOPE, "merge", "merge:1,2", [1, 2, 3], {"why": "v2"}, at(1))
    assert again.id == first.id and again.memory_ids == (1, 2, 3) and again.created_at == T0
    store.set_proposal_status(first.id, "declined", at(2))
    kept = store.upsert_proposal(SCOPE, "merge", "merge:1,2", [9], {"why": "v3"}, at(3))
    assert (kept.status, kept.memory_ids, kept.decided_at) == ("declined", (1, 2, 3), at(2))
    store.upsert_proposal(SCOPE, "retire", "retire:4", [4], {}, at(4))
    assert [p.key for p in store.proposals(SCOPE, ["open"])] == ["retire:4"]
    assert store.get_proposal(first.id) == kept
    assert store.get_proposal(424242) is None
