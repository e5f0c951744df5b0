"""Acts on real repositories: merges confirm, reverts and discards contradict, each undoable;
twice contradicted without confirmation leaves the index unless pinned."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cairn import Cairn, Conflict, InvalidInput, InvalidRef, NotFound

from .conftest import Repo

Factory = Callable[..., Cairn]


def cite_on(repo: Repo, mem: Cairn, branch: str, *refs: str) -> None:
    """Work on `branch` that cites `refs` (a remember with `used`), committed there."""
    current = repo.git("symbolic-ref", "--short", "HEAD")
    exists = branch in repo.git("branch", "--format=%(refname:short)").split()
    repo.git("checkout", "-q", *([] if exists else ["-b"]), branch)
    mem.remember(f"Work on {branch} used {' '.join(refs)}", type="fact", cwd=repo.path,
                 used=list(refs), dedup=False)  # fmt: skip
    repo.write(f"{branch.replace('/', '_')}.txt", f"work on {branch}\n")
    repo.commit(f"work on {branch}")
    repo.git("checkout", "-q", current)


def record(mem: Cairn, ref: str) -> object:
    return mem.get_memory([ref]).records[0].memory


def test_merge_confirms_what_the_branch_cited_and_undo_takes_it_back(
    repo: Repo, mem_in: Factory
) -> None:
    mem = mem_in(repo.path)
    used = mem.remember("Retry webhooks with backoff", type="instruction").memory_id
    other = mem.remember("Logs go to stdout", type="fact").memory_id
    cite_on(repo, mem, "feature/retry", used)
    repo.git("merge", "-q", "--no-ff", "-m", "Merge branch 'feature/retry'", "feature/retry")
    result = mem.observe_merge("feature/retry")
    assert result.confirmed == (used,) and result.kind == "merge"
    assert result.detail["merge_commit"] == repo.head()
    memory = mem.get_memory([used]).records[0].memory
    assert memory.confirmed == 1
    assert memory.evidence["acts"][0]["act"] == result.act_id
    assert memory.evidence["acts"][0]["undo"] == f"undo_act('{result.act_id}')"
    assert mem.get_memory([other]).records[0].memory.confirmed == 0
    # Observing the same merge again counts nothing twice.
    again = mem.observe_merge("feature/retry")
    assert again.confirmed == ()
    assert mem.get_memory([used]).records[0].memory.confirmed == 1
    undone = mem.undo_act(result.act_id)
    assert undone.undone and undone.confirmed == (used,)
    memory = mem.get_memory([used]).records[0].memory
    assert memory.confirmed == 0 and memory.evidence["acts"] == []
    with pytest.raises(Conflict, match="already undone"):
        mem.undo_act(result.act_id)


def test_two_contradictions_rest_a_memory_and_a_confirmation_restores_it(
    repo: Repo, mem_in: Factory
) -> None:
    mem = mem_in(repo.path)
    shaky = mem.remember("Cache the tokens in memory", type="decision").memory_id
    pinned = mem.remember("Cache tokens encrypted", type="decision", pinned=True).memory_id
    for branch in ("spike/one", "spike/two"):
        cite_on(repo, mem, branch, shaky, pinned)
    first = mem.observe_discard("spike/one")
    assert first.contradicted == (shaky, pinned) and first.rested == ()
    second = mem.observe_discard("spike/two")
    assert second.rested == (shaky,)
    assert mem.get_memory([shaky]).records[0].memory.status == "resting"
    assert mem.get_memory([pinned]).records[0].memory.status == "active"
    resting = mem.recall("cache tokens memory", cut=False, explain=True)
    hit = next(h for h in resting.hits if h.ref == shaky)  # found, ranked lower, marked
    assert hit.resting and hit.explain is not None and hit.explain["resting"] == 0.5
    # Undoing one discard restores it; redoing the act rests it again; a merge restores it.
    mem.undo_act(second.act_id)
    assert mem.get_memory([shaky]).records[0].memory.status == "active"
    third = mem.observe_discard("spike/two")
    assert third.rested == (shaky,)
    cite_on(repo, mem, "feature/keep", shaky)
    merged = mem.observe_merge("feature/keep")
    assert merged.restored == (shaky,)
    memory = mem.get_memory([shaky]).records[0].memory
    assert (memory.status, memory.confirmed, memory.contradicted) == ("active", 1, 2)
    # Undoing the merge puts it back to rest: contradicted twice, no confirmation.
    back = mem.undo_act(merged.act_id)
    assert back.rested == (shaky,)


def test_revert_of_a_merge_contradicts_the_merged_branch(repo: Repo, mem_in: Factory) -> None:
    mem = mem_in(repo.path)
    advice = mem.remember("Use the v2 payments client", type="decision").memory_id
    cite_on(repo, mem, "feature/payments", advice)
    repo.git("merge", "-q", "--no-ff", "-m", "Merge branch 'feature/payments'",
             "feature/payments")  # fmt: skip
    merge_sha = repo.head()
    mem.observe_merge("feature/payments")
    repo.git("revert", "--no-edit", "-m", "1", merge_sha)
    result = mem.observe_revert(merge_sha[:10])
    assert result.contradicted == (advice,)
    assert result.subject == merge_sha
    assert result.detail["branches"] == ["feature/payments"]
    memory = mem.get_memory([advice]).records[0].memory
    assert (memory.confirmed, memory.contradicted) == (1, 1)


def test_revert_finds_the_branch_from_the_merge_subject_or_branches(
    repo: Repo, mem_in: Factory
) -> None:
    mem = mem_in(repo.path)
    advice = mem.remember("Batch the exports nightly", type="decision").memory_id
    cite_on(repo, mem, "feature/export", advice)
    repo.git("merge", "-q", "--no-ff", "-m", "Merge branch 'feature/export'", "feature/export")
    by_subject = mem.observe_revert(repo.head())
    assert by_subject.contradicted == (advice,)
    # A plain commit of a branch still checked out elsewhere: found by the branches holding it.
    other = mem.remember("Stream the exports", type="decision").memory_id
    cite_on(repo, mem, "feature/stream", other)
    tip = repo.git("rev-parse", "feature/stream")
    by_branch = mem.observe_revert(tip)
    assert by_branch.contradicted == (other,)


def test_revert_contradicts_memories_citing_the_commit(repo: Repo, mem_in: Factory) -> None:
    mem = mem_in(repo.path)
    repo.write("src/flag.py", "ENABLED = True\n")
    sha = repo.commit("Turn the flag on")
    about = mem.remember("The flag is on since this commit", type="fact",
                         source_ref=f"commit:{sha[:7]}").memory_id  # fmt: skip
    result = mem.observe_revert(sha)
    assert result.contradicted == (about,)


def test_acts_are_scoped_and_checked(repo: Repo, mem_in: Factory) -> None:
    mem = mem_in(repo.path)
    act = mem.observe_discard("nothing-cited")
    assert act.contradicted == () and act.act_id.startswith("act_")
    with pytest.raises(NotFound):
        mem.undo_act(act.act_id, scope="project:someone/else")
    with pytest.raises(NotFound):
        mem.undo_act("act_999")
    with pytest.raises(InvalidRef):
        mem.undo_act("mem_1")
    with pytest.raises(InvalidInput, match="branch name"):
        mem.observe_merge("  ")
    with pytest.raises(InvalidInput, match="sha"):
        mem.observe_revert("not-a-sha")


def test_acts_show_in_the_event_log(repo: Repo, mem_in: Factory) -> None:
    mem = mem_in(repo.path)
    used = mem.remember("Prefer small pull requests", type="instruction").memory_id
    cite_on(repo, mem, "feature/small", used)
    act = mem.observe_merge("feature/small")
    mem.undo_act(act.act_id)
    kinds = [(e.kind, e.memory_id) for e in mem.store.iter_events() if e.kind in
             ("act", "undo_act")]  # fmt: skip
    assert ("act", int(used[4:])) in kinds and ("undo_act", int(used[4:])) in kinds
    assert ("act", None) in kinds and ("undo_act", None) in kinds
