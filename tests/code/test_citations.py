"""Citations checked against real checkouts: same (moved or not), changed, gone, unchecked."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from cairn import Cairn, InvalidInput
from cairn.code.citations import read_file

from .conftest import APP, Repo, make_repo

Factory = Callable[..., Cairn]


def status(
    mem: Cairn, ref: str, cwd: Path | None = None, scope: str | None = None
) -> tuple[str, tuple[int, int] | None]:
    record = mem.get_memory([ref], cwd=cwd, scope=scope).records[0]
    return record.citation, record.citation_lines


def test_line_range_found_again_after_edits_above(repo: Repo, mem_in: Factory) -> None:
    mem = mem_in(repo.path)
    ref = mem.remember(
        "charge multiplies by the rate", type="fact", source_ref="src/app.py:11-13"
    ).memory_id
    assert status(mem, ref) == ("same", (11, 13))
    repo.write("src/app.py", "# header\n# more\n\n" + APP)
    assert status(mem, ref) == ("same", (14, 16))
    hit = mem.recall("charge multiplies rate", cut=False).hits[0]
    assert (hit.ref, hit.citation, hit.citation_lines) == (ref, "same", (14, 16))


def test_reindenting_is_not_a_change_but_editing_is(repo: Repo, mem_in: Factory) -> None:
    mem = mem_in(repo.path)
    ref = mem.remember("helper adds one", type="fact", source_ref="src/app.py:4-5").memory_id
    repo.write("src/app.py", APP.replace("    return x + 1", "        return   x + 1"))
    assert status(mem, ref)[0] == "same"
    repo.write("src/app.py", APP.replace("return x + 1", "return x + 2"))
    assert status(mem, ref) == ("changed", None)
    (repo.path / "src/app.py").unlink()
    assert status(mem, ref) == ("gone", None)


def test_symbols_follow_moves_and_notice_changes(repo: Repo, mem_in: Factory) -> None:
    mem = mem_in(repo.path)
    ref = mem.remember(
        "Billing.charge applies the rate", type="fact", source_ref="src/app.py::Billing.charge"
    ).memory_id
    assert status(mem, ref) == ("same", (11, 13))
    moved = APP.replace("    rate = 3\n", "    rate = 3\n\n    def first(self):\n        pass\n")
    repo.write("src/app.py", moved)
    assert status(mem, ref) == ("same", (14, 16))
    repo.write("src/app.py", moved.replace("amount * self.rate", "amount * self.rate * 2"))
    assert status(mem, ref) == ("changed", (14, 16))
    repo.write("src/app.py", moved.replace("def charge", "def bill"))
    assert status(mem, ref) == ("gone", None)


def test_whole_file_citation(repo: Repo, mem_in: Factory) -> None:
    mem = mem_in(repo.path)
    ref = mem.remember("The readme greets", type="fact", source_ref="README.md").memory_id
    assert status(mem, ref) == ("same", None)
    repo.write("README.md", "hello world\n")
    assert status(mem, ref) == ("changed", None)


@pytest.mark.parametrize("source_ref", ["src", "src/", "./src/"])
def test_directory_citation_follows_its_entries(
    repo: Repo, mem_in: Factory, source_ref: str
) -> None:
    mem = mem_in(repo.path)
    ref = mem.remember("The app code lives in src", type="fact", source_ref=source_ref).memory_id
    assert status(mem, ref) == ("same", None)
    repo.write("src/app.py", "changed contents\n")  # contents are not the directory's business
    (repo.path / "src" / "__pycache__").mkdir()  # nor are the caches tools leave behind
    (repo.path / "src" / ".cache").write_text("x")
    assert status(mem, ref) == ("same", None)
    repo.write("src/billing.py", "rate = 3\n")
    assert status(mem, ref) == ("changed", None)
    for child in sorted((repo.path / "src").rglob("*"), reverse=True):
        child.rmdir() if child.is_dir() else child.unlink()
    (repo.path / "src").rmdir()
    assert status(mem, ref) == ("gone", None)


def test_a_glob_citation_is_kept_as_written_and_unchecked(repo: Repo, mem_in: Factory) -> None:
    mem = mem_in(repo.path)
    ref = mem.remember(
        "Every module under src is typed", type="constraint", source_ref="src/**/*.py"
    ).memory_id
    record = mem.get_memory([ref]).records[0]
    assert (record.memory.source_ref, record.citation) == ("src/**/*.py", "unchecked")


def test_commit_citation_same_until_the_commit_is_gone(repo: Repo, mem_in: Factory) -> None:
    repo.git("checkout", "-q", "-b", "spike")
    repo.write("spike.txt", "try\n")
    sha = repo.commit("spike")
    repo.git("checkout", "-q", "main")
    mem = mem_in(repo.path)
    ref = mem.remember("The spike tried things", type="fact", source_ref=f"commit:{sha[:8]}")
    assert status(mem, ref.memory_id) == ("same", None)
    repo.git("branch", "-q", "-D", "spike")
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    assert status(mem, ref.memory_id) == ("gone", None)


def test_unchecked_without_anything_to_compare(repo: Repo, mem_in: Factory, tmp_path: Path) -> None:
    mem = mem_in(repo.path)
    url = mem.remember("Spec lives online", type="fact", source_ref="https://example.com/spec")
    plain = mem.remember("No citation at all", type="fact")
    assert status(mem, url.memory_id) == ("unchecked", None)
    assert status(mem, plain.memory_id) == ("unchecked", None)
    # Written with an explicit scope from a directory of another project: only the form is
    # checked, and nothing can be compared later.
    elsewhere = mem_in(tmp_path)
    loose = elsewhere.remember(
        "Loose claim", type="fact", scope="project:nowhere/x", source_ref="src/x.py:1-2"
    )
    assert status(elsewhere, loose.memory_id, scope="project:nowhere/x")[0] == "unchecked"


@pytest.mark.parametrize(
    ("source_ref", "fragment"),
    [
        ("/etc/hosts", "absolute"),
        ("../secret.py", "climbs out"),
        ("src/missing.py", "not a file or directory in the repository"),
        ("src/missing/", "not a directory in the repository"),
        ("src/app.py/", "not a directory in the repository"),
        ("src/app.py:10-400", "has 16 lines"),
        ("src/app.py::Billing.nothing", "no function, class or method"),
        ("commit:deadbeef", "names no commit"),
    ],
)
def test_bad_citations_are_refused_and_nothing_is_stored(
    repo: Repo, mem_in: Factory, source_ref: str, fragment: str
) -> None:
    mem = mem_in(repo.path)
    with pytest.raises(InvalidInput, match=fragment):
        mem.remember("a claim", type="fact", source_ref=source_ref)
    assert list(mem.store.iter_memories()) == []


def test_symlinks_are_not_followed_out_of_the_root(
    repo: Repo, mem_in: Factory, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("secret = 1\n")
    os.symlink(outside, repo.path / "src" / "link.py")
    os.symlink(repo.path / "src" / "app.py", repo.path / "src" / "inner.py")
    mem = mem_in(repo.path)
    with pytest.raises(InvalidInput, match="symlink out of the repository"):
        mem.remember("links out", type="fact", source_ref="src/link.py")
    inside = mem.remember("links in", type="fact", source_ref="src/inner.py:4-5")
    assert status(mem, inside.memory_id)[0] == "same"
    # A link that later starts pointing out reads as if the file were gone.
    (repo.path / "src" / "inner.py").unlink()
    os.symlink(outside, repo.path / "src" / "inner.py")
    assert status(mem, inside.memory_id)[0] == "gone"


def test_the_callers_checkout_answers_first_then_the_project_folder(
    repo: Repo, mem_in: Factory, tmp_path: Path
) -> None:
    repo.write("src/new.py", "def fresh():\n    return 1\n")
    repo.commit("new file")
    mem = mem_in(repo.path)
    ref = mem.remember("helper adds one", type="fact", source_ref="src/app.py:4-5").memory_id
    fresh = mem.remember("fresh returns one", type="fact", source_ref="src/new.py:1-2")
    worktree = tmp_path / "wt"
    repo.git("worktree", "add", "-q", "-b", "feature", str(worktree), "HEAD~1")
    (worktree / "src" / "app.py").write_text(APP.replace("x + 1", "x - 1"))
    # From the worktree its own (edited) copy answers; from elsewhere, the project folder.
    assert status(mem, ref, cwd=worktree)[0] == "changed"
    assert status(mem, ref, cwd=repo.path)[0] == "same"
    # The worktree lacks src/new.py (branched before it): the project folder answers.
    assert status(mem, fresh.memory_id, cwd=worktree)[0] == "same"
    hits = mem.recall("helper adds one", cwd=worktree, cut=False).hits
    assert next(h for h in hits if h.ref == ref).citation == "changed"


def test_memories_recalled_from_outside_use_the_recorded_folder(
    repo: Repo, mem_in: Factory, tmp_path: Path
) -> None:
    mem = mem_in(repo.path)
    written = mem.remember("helper adds one", type="fact", source_ref="src/app.py:4-5")
    scope = written.scope
    outside = mem_in(tmp_path)
    record = outside.get_memory([written.memory_id], scope=scope).records[0]
    assert record.citation == "same"
    repo.write("src/app.py", APP.replace("x + 1", "x * 3"))
    assert outside.get_memory([written.memory_id], scope=scope).records[0].citation == "changed"
    # A later remember in the scope from elsewhere is checked against the recorded folder too.
    with pytest.raises(InvalidInput, match="not a file"):
        outside.remember("nope", type="fact", scope=scope, source_ref="src/none.py")


def test_a_correction_keeps_the_citation(repo: Repo, mem_in: Factory) -> None:
    mem = mem_in(repo.path)
    old = mem.remember("helper adds one", type="fact", source_ref="src/app.py:4-5")
    new = mem.correct(old.memory_id, "helper adds exactly one", reason="more precise")
    repo.write("src/app.py", "\n\n" + APP)
    assert status(mem, new.memory_id) == ("same", (6, 7))


def test_file_reads_are_cached_until_the_file_changes(repo: Repo) -> None:
    path = repo.path / "src" / "app.py"
    first = read_file(path)
    assert first is not None and read_file(path) is first
    path.write_text(APP + "\n# trailing\n")
    second = read_file(path)
    assert second is not None and second is not first and second.sha != first.sha


def test_twenty_five_hits_share_one_file_read(repo: Repo, mem_in: Factory) -> None:
    mem = mem_in(repo.path)
    for i in range(25):
        mem.remember(f"billing fact number {i} about charges", type="fact",
                     source_ref="src/app.py:11-13", dedup=False)  # fmt: skip
    result = mem.recall("billing fact about charges", limit=25, cut=False)
    assert len(result.hits) == 25
    assert {h.citation for h in result.hits} == {"same"}


def test_another_project_checkout_never_answers(tmp_path: Path, mem_in: Factory) -> None:
    first = make_repo(tmp_path / "one", {"src/app.py": APP})
    second = make_repo(tmp_path / "two", {"src/app.py": APP.replace("x + 1", "x + 9")})
    mem = mem_in(first.path)
    ref = mem.remember("helper adds one", type="fact", source_ref="src/app.py:4-5")
    scope = ref.scope
    assert status(mem, ref.memory_id, cwd=first.path)[0] == "same"
    record = mem.get_memory([ref.memory_id], scope=scope, cwd=second.path).records[0]
    assert record.citation == "same"
