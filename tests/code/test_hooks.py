"""`cairn hook install`: real git hooks, fired by real merges, reverts, deletions and amends,
calling the real CLI in a subprocess."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from cairn import Cairn, Conflict, InvalidInput
from cairn.code.hooks import HOOK_NAMES, MARKER, deleted_branches, install, rewritten_pairs

from .conftest import Repo

Factory = Callable[..., Cairn]


def counts(mem: Cairn, ref: str) -> tuple[int, int]:
    memory = mem.get_memory([ref]).records[0].memory
    return memory.confirmed, memory.contradicted


def cite_on(repo: Repo, mem: Cairn, branch: str, ref: str) -> None:
    repo.git("checkout", "-q", "-b", branch)
    mem.remember(f"work on {branch}", type="fact", cwd=repo.path, used=[ref], dedup=False)
    repo.write(f"{branch.replace('/', '-')}.txt", "work\n")
    repo.commit(f"work on {branch}")
    repo.git("checkout", "-q", "main")


def test_install_writes_executable_hooks_and_is_idempotent(repo: Repo, mem_in: Factory) -> None:
    mem = mem_in(repo.path)
    first = mem.install_hooks(cwd=repo.path)
    assert set(first.written) == set(HOOK_NAMES) and first.chained == ()
    hooks = Path(first.hooks_dir)
    for name in HOOK_NAMES:
        path = hooks / name
        assert MARKER in path.read_text()
        assert path.stat().st_mode & stat.S_IXUSR
    again = mem.install_hooks(cwd=repo.path)
    assert again.written == () and set(again.unchanged) == set(HOOK_NAMES)


def test_merge_hook_confirms_and_existing_hooks_keep_working(repo: Repo, mem_in: Factory) -> None:
    hooks = repo.path / ".git" / "hooks"
    marker = repo.path.parent / "old-hook-ran"
    old = hooks / "post-merge"
    old.write_text(f"#!/bin/sh\necho \"$1\" > '{marker}'\n")
    old.chmod(0o755)
    mem = mem_in(repo.path)
    installed = mem.install_hooks(cwd=repo.path)
    assert installed.chained == ("post-merge",)
    assert (hooks / "post-merge.pre-cairn").exists()
    advice = mem.remember("Validate input at the edge", type="instruction").memory_id
    cite_on(repo, mem, "feature/validate", advice)
    repo.git("merge", "-q", "--no-ff", "-m", "Merge branch 'feature/validate'",
             "feature/validate")  # fmt: skip
    assert marker.read_text().strip() == "0"
    assert counts(mem, advice) == (1, 0)
    acts = mem.get_memory([advice]).records[0].memory.evidence["acts"]
    assert acts[0]["kind"] == "merge" and acts[0]["subject"] == "feature/validate"
    # Reinstalling leaves the chained hook alone.
    assert mem.install_hooks(cwd=repo.path).chained == ()


def test_revert_hook_contradicts(repo: Repo, mem_in: Factory) -> None:
    mem = mem_in(repo.path)
    mem.install_hooks(cwd=repo.path)
    advice = mem.remember("Inline the config loader", type="decision").memory_id
    cite_on(repo, mem, "feature/inline", advice)
    repo.git("merge", "-q", "--no-ff", "-m", "Merge branch 'feature/inline'", "feature/inline")
    merge = repo.head()
    repo.git("revert", "--no-edit", "-m", "1", merge)
    assert counts(mem, advice) == (1, 1)


def test_deleting_an_unmerged_branch_is_a_discard(repo: Repo, mem_in: Factory) -> None:
    mem = mem_in(repo.path)
    mem.install_hooks(cwd=repo.path)
    dropped = mem.remember("Use a global lock", type="decision").memory_id
    kept = mem.remember("Use per-row locks", type="decision").memory_id
    cite_on(repo, mem, "spike/global-lock", dropped)
    cite_on(repo, mem, "feature/row-locks", kept)
    repo.git("merge", "-q", "--no-ff", "-m", "Merge branch 'feature/row-locks'",
             "feature/row-locks")  # fmt: skip
    repo.git("branch", "-q", "-d", "feature/row-locks")
    repo.git("branch", "-q", "-D", "spike/global-lock")
    assert counts(mem, dropped) == (0, 1)
    assert counts(mem, kept) == (1, 0)


def test_amend_moves_commit_citations(repo: Repo, mem_in: Factory) -> None:
    mem = mem_in(repo.path)
    mem.install_hooks(cwd=repo.path)
    repo.write("notes.txt", "v1\n")
    old = repo.commit("notes v1")
    ref = mem.remember("Notes started here", type="fact", source_ref=f"commit:{old}").memory_id
    repo.git("commit", "-q", "--amend", "-m", "notes, first version")
    new = repo.head()
    assert new != old
    row = mem.store.get_citations([int(ref[4:])])[int(ref[4:])]
    assert row.commit == new
    assert mem.get_memory([ref]).records[0].citation == "same"


def test_a_broken_store_never_fails_git(repo: Repo, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    # The hooks point at a store that cannot even be created (its parent is a file).
    install(repo.path, str(blocker / "memory.db"))
    repo.git("checkout", "-q", "-b", "feature/x")
    repo.write("x.txt", "x\n")
    repo.commit("x")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "merge x", "feature/x")
    repo.git("branch", "-q", "-D", "feature/x")
    assert "merge x" in repo.git("log", "-1", "--format=%s")
    assert "feature/x" not in repo.git("branch", "--format=%(refname:short)")


def test_a_foreign_hook_beside_a_kept_one_is_a_conflict(repo: Repo, mem_in: Factory) -> None:
    hooks = repo.path / ".git" / "hooks"
    for name in ("post-merge", "post-merge.pre-cairn"):
        (hooks / name).write_text("#!/bin/sh\nexit 0\n")
    mem = mem_in(repo.path)
    with pytest.raises(Conflict, match="merge them"):
        mem.install_hooks(cwd=repo.path)


def test_install_outside_git_is_refused(mem_in: Factory, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(InvalidInput, match="not inside a git repository"):
        mem_in(plain).install_hooks(cwd=plain)


def test_hooks_path_config_is_honoured(repo: Repo, mem_in: Factory) -> None:
    repo.git("config", "core.hooksPath", ".githooks")
    result = mem_in(repo.path).install_hooks(cwd=repo.path)
    assert Path(result.hooks_dir) == repo.path / ".githooks"
    assert os.access(repo.path / ".githooks" / "post-merge", os.X_OK)


def test_hook_input_parsing() -> None:
    zero = "0" * 40
    a, b = "a" * 40, "b" * 40
    text = f"{a} {zero} refs/heads/spike\n{zero} {zero} refs/heads/odd\n{a} {b} refs/heads/main\n"
    assert deleted_branches(text) == [("spike", a), ("odd", None)]
    assert rewritten_pairs(f"{a} {b}\n{a} {a}\n\n") == [(a, b)]
