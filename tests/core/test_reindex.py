"""Changing the embedder: stale vectors rank by keywords, are named, and `reindex` resumes."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn import Cairn
from cairn.adapters import mcp_render
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from clocks import FakeClock

SCOPE = "project:example/reindex"
OLD = HashingEmbedder(dimensions=128)  # identity hashing-v1/128: "the other embedder"
NOTES = [
    "The billing worker retries webhooks three times before giving up.",
    "Our staging cluster runs on two small nodes in Frankfurt.",
    "Release notes are drafted in the docs folder every Friday.",
    "The mobile client caches avatars for a day.",
    "Feature flags live in the flags table and are read at startup.",
]


def _open(location: str, settings: Settings, clock: FakeClock, embedder: HashingEmbedder) -> Cairn:
    return Cairn.open(location, settings=settings, embedder=embedder, clock=clock)


def _write_with_old(location: str, settings: Settings, clock: FakeClock) -> list[str]:
    with _open(location, settings, clock, OLD) as old:
        opened = old.activate("old notes", scope=SCOPE)
        items = [{"content": n, "type": "fact", "session_id": opened.session_id} for n in NOTES]
        refs = [b.data.memory_id for b in old.remember_many(items) if b.data is not None]
        old.end(opened.session_id)
    return refs


def test_stale_memories_rank_by_keywords_and_are_named(
    store_location: str, settings: Settings, clock: FakeClock, embedder: HashingEmbedder
) -> None:
    refs = _write_with_old(store_location, settings, clock)
    with _open(store_location, settings, clock, embedder) as mem:
        fresh = mem.remember("Webhooks are signed with a shared secret.", type="fact", scope=SCOPE)
        answer = mem.recall("when does the billing worker retry webhooks", scope=SCOPE)
        by_ref = {h.ref: h for h in answer.hits}
        assert refs[0] in by_ref, "a keyword match is not cut for having no current vector"
        assert by_ref[refs[0]].stale_vector
        assert all(not h.stale_vector for h in answer.hits if h.ref == fresh.memory_id)
        assert answer.refs[0] == refs[0]
        notice = answer.needs_reindex
        assert notice is not None and notice.count == len(NOTES)
        assert notice.refs[0] == refs[0] and "cairn reindex" in notice.message
        explained = mem.recall("billing worker webhooks", scope=SCOPE, explain=True).hits
        assert (explained[0].explain or {}).get("stale_vector") == 1.0
        assert mem.recall("what is the weather on mars", scope=SCOPE).hits == ()
        index = mem.stats(scope=SCOPE)["index"]
        assert index["fresh"] is False
        assert index["needs_reindex"]["count"] == len(NOTES)
        assert index["needs_reindex"]["refs"] == refs
        assert notice.message in mcp_render.recall(answer)
        mem.purge(refs[-1], scope=SCOPE)  # nothing left to embed
        assert mem.stats(scope=SCOPE)["index"]["needs_reindex"]["count"] == len(NOTES) - 1
        assert mem.stats(scope="project:other")["index"]["needs_reindex"]["count"] == 0


def test_reindex_runs_in_resumable_batches(
    store_location: str, settings: Settings, clock: FakeClock, embedder: HashingEmbedder
) -> None:
    refs = _write_with_old(store_location, settings, clock)
    with _open(store_location, settings, clock, embedder) as mem:
        seen: list[int] = []
        first = mem.reindex(batch=2, max_batches=1, on_start=seen.append)
        assert (first.reindexed, first.remaining, first.batches) == (2, 3, 1)
        assert seen == [5]
        assert mem.stats(scope=SCOPE)["index"]["needs_reindex"]["refs"] == refs[2:]
    with _open(store_location, settings, clock, embedder) as mem:  # a later run continues
        sizes: list[int] = []
        rest = mem.reindex(batch=2, on_batch=sizes.append)
        assert (rest.reindexed, rest.remaining, sizes) == (3, 0, [2, 1])
        index = mem.stats(scope=SCOPE)["index"]
        assert index["needs_reindex"]["count"] == 0 and index["fresh"] is True
        answer = mem.recall("billing worker retries webhooks", scope=SCOPE, explain=True)
        assert answer.refs[0] == refs[0] and answer.needs_reindex is None
        assert not answer.hits[0].stale_vector
        assert (answer.hits[0].explain or {})["dense"] > 0
        assert mem.reindex().reindexed == 0


def test_reindex_rejects_a_bad_batch(mem: Cairn) -> None:
    from cairn.errors import InvalidInput

    with pytest.raises(InvalidInput, match="batch"):
        mem.reindex(batch=0)


def test_cli_reindex_shows_progress_and_resumes(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from cairn.adapters.cli import main

    location = str(tmp_path / "memory.db")
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    _write_with_old(location, settings, clock)
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAIRN_EMBEDDER", "hashing")
    runner = CliRunner()
    recall = runner.invoke(main, ["--store", location, "recall", "billing worker retries webhooks",
                                  "--scope", SCOPE])  # fmt: skip
    assert recall.exit_code == 0 and "stale-vector" in recall.stdout
    assert "cairn reindex" in recall.stderr
    once = runner.invoke(
        main, ["--store", location, "reindex", "--batch", "2", "--max-batches", "1"]
    )
    assert once.exit_code == 0, once.output
    assert "re-embedded 2 memories" in once.stdout and "3 still waiting" in once.stdout
    assert "re-embedding" in once.stderr
    done = runner.invoke(main, ["--store", location, "reindex", "--json"])
    assert done.exit_code == 0 and '"reindexed": 3' in done.stdout
    bad = runner.invoke(main, ["--store", location, "reindex", "--batch", "0"])
    assert bad.exit_code == 2
