"""The app's citation views on real checkouts: the cited lines as they read now, and the list
filtered by citation health (same, changed, gone, unchecked). Both backends."""

from __future__ import annotations

from collections.abc import Callable

from cairn import Cairn

from .conftest import APP, Repo

Factory = Callable[..., Cairn]


def test_cited_lines_follow_the_code(repo: Repo, mem_in: Factory) -> None:
    mem = mem_in(repo.path)
    ref = mem.remember("charge multiplies by the rate", type="fact",
                       source_ref="src/app.py:11-13").memory_id  # fmt: skip
    cited = mem.cited_lines(ref)
    assert cited is not None and cited.path == "src/app.py" and cited.start == 11
    assert cited.lines == tuple(APP.splitlines()[10:13])
    repo.write("src/app.py", "# header\n\n" + APP)
    moved = mem.cited_lines(ref)
    assert moved is not None and moved.start == 13 and moved.lines == cited.lines
    repo.write("src/app.py", APP.replace("amount * self.rate", "amount * 2"))
    assert mem.cited_lines(ref) is None  # changed: the old lines cannot be shown as current


def test_a_memory_without_a_citation_has_no_lines(repo: Repo, mem_in: Factory) -> None:
    mem = mem_in(repo.path)
    ref = mem.remember("Deploys happen on Tuesdays", type="fact").memory_id
    assert mem.cited_lines(ref) is None


def test_the_list_filters_by_citation_health(repo: Repo, mem_in: Factory) -> None:
    mem = mem_in(repo.path)
    same = mem.remember("helper adds one", type="fact", source_ref="src/app.py:4-5").memory_id
    changed = mem.remember("refund negates", type="fact", source_ref="src/app.py:15-16").memory_id
    gone = mem.remember("the readme greets", type="fact", source_ref="README.md").memory_id
    plain = mem.remember("Deploys happen on Tuesdays", type="fact").memory_id
    repo.write("src/app.py", APP.replace("return -amount", "return 0 - amount"))
    (repo.path / "README.md").unlink()

    def refs(citation: str) -> list[str]:
        return [i.memory.ref for i in mem.list_memories(citation=citation).items]

    assert refs("same") == [same]
    assert refs("changed") == [changed]
    assert refs("gone") == [gone]
    assert refs("unchecked") == [plain]
    listed = {i.memory.ref: i.citation for i in mem.list_memories().items}
    assert listed == {same: "same", changed: "changed", gone: "gone", plain: "unchecked"}
    searched = mem.list_memories(query="helper adds one", citation="same")
    assert [i.memory.ref for i in searched.items] == [same]
