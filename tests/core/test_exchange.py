"""Export then import into an empty store reproduces it exactly."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cairn import Cairn, Conflict, InvalidInput, Refused
from cairn.embeddings.hashing import HashingEmbedder
from cairn.timeutil import Clock

SCOPE = "project:example/api"

# Text that may hold anything a user could paste, minus what remember refuses by design.
texts = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=300
).filter(lambda s: s.strip() != "")


def snapshot(mem: Cairn) -> tuple[list[object], list[object], list[tuple[int, str, bytes]]]:
    return (
        list(mem.store.iter_memories()),
        list(mem.store.iter_events()),
        [(i, ident, v.tobytes()) for i, ident, v in mem.store.iter_vectors()],
    )


def build(mem: Cairn, contents: list[str], corrections: list[str]) -> None:
    refs = []
    for i, content in enumerate(contents):
        try:
            refs.append(
                mem.remember(
                    content,
                    type="fact",
                    scope=SCOPE,
                    tags=[f"t{i}"],
                    reason=content[:50],
                    dedup=False,
                ).memory_id
            )
        except Refused:  # generated text that looks like a secret is refused by design
            continue
    for ref, text in zip(refs, corrections, strict=False):
        try:
            mem.correct(ref, text, reason="fix", scope=SCOPE)
        except Refused:
            continue
    if len(refs) > len(corrections):
        mem.forget(refs[-1], reason="gone", scope=SCOPE)
    if refs:
        mem.purge(refs[0], scope=SCOPE)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(contents=st.lists(texts, min_size=1, max_size=5), corrections=st.lists(texts, max_size=2))
def test_export_import_round_trip(
    tmp_path: Path, contents: list[str], corrections: list[str]
) -> None:
    workdir = Path(tmp_path) / str(abs(hash((tuple(contents), tuple(corrections)))))
    workdir.mkdir()
    embedder = HashingEmbedder()
    with Cairn.open(workdir / "a.db", embedder=embedder, cwd=workdir) as source:
        build(source, contents, corrections)
        buffer = io.StringIO()
        source.export(buffer)
        before = snapshot(source)
    with Cairn.open(workdir / "b.db", embedder=embedder, cwd=workdir) as target:
        target.import_(io.StringIO(buffer.getvalue()))
        assert snapshot(target) == before
        second = io.StringIO()
        target.export(second)
        assert second.getvalue() == buffer.getvalue()


def test_imported_store_answers_recall_like_the_original(
    mem: Cairn, tmp_path: Path, clock: Clock
) -> None:
    mem.remember("The release train leaves on Thursdays.", type="fact", scope=SCOPE)
    buffer = io.StringIO()
    mem.export(buffer)
    # The copy reads the same "now" as the original: with the real clock months later, the
    # uncited memory would (rightly) have rested.
    with Cairn.open(
        tmp_path / "copy.db", embedder=HashingEmbedder(), cwd=tmp_path, clock=clock
    ) as copy:
        copy.import_(io.StringIO(buffer.getvalue()))
        assert (
            copy.recall("release train", scope=SCOPE).refs
            == mem.recall("release train", scope=SCOPE).refs
        )
        fresh = copy.remember("A new claim after import.", type="fact", scope=SCOPE)
        assert int(fresh.memory_id[4:]) > 1


def test_import_refuses_a_non_empty_store(mem: Cairn) -> None:
    mem.remember("Something.", type="fact", scope=SCOPE)
    buffer = io.StringIO()
    mem.export(buffer)
    with pytest.raises(Conflict, match="empty"):
        mem.import_(io.StringIO(buffer.getvalue()))


def test_import_refuses_garbage(tmp_path: Path) -> None:
    with Cairn.open(tmp_path / "x.db", embedder=HashingEmbedder()) as mem:
        with pytest.raises(InvalidInput, match="not a cairn export"):
            mem.import_(io.StringIO('{"hello": 1}\n'))
        with pytest.raises(InvalidInput, match="line 1"):
            mem.import_(io.StringIO("not json\n"))
        assert list(mem.store.iter_memories()) == []
