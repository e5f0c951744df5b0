"""A cairn export merged into a live store: its current claims, scope by scope, through
remember; what the target held stays, what the export had replaced or forgotten is not revived,
and merging the same file again changes nothing. Both backends."""

from __future__ import annotations

import io
from pathlib import Path

from cairn import Cairn
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from clocks import FakeClock


def exported(tmp_path: Path, settings: Settings, clock: FakeClock) -> Path:
    with Cairn.open(
        str(tmp_path / "source.db"), settings=settings, embedder=HashingEmbedder(), clock=clock
    ) as source:
        kept = source.remember("Deploys go out on Tuesdays.", type="decision", scope="user:ann")
        source.correct(
            kept.memory_id, "Deploys go out on Wednesdays.", reason="moved", scope="user:ann"
        )
        gone = source.remember("The cache is Redis.", type="fact", scope="user:ann")
        source.forget(gone.memory_id, reason="dropped", scope="user:ann")
        source.remember("Never log tokens.", type="constraint", scope="global", pinned=True)
        out = io.StringIO()
        source.export(out)
    path = tmp_path / "dump.jsonl"
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def active(mem: Cairn) -> dict[str, tuple[str, str]]:
    return {m.content: (m.scope, m.type) for m in mem.store.iter_memories() if m.status == "active"}


def test_an_export_merges_into_a_live_store(
    mem: Cairn, tmp_path: Path, settings: Settings, clock: FakeClock
) -> None:
    dump = exported(tmp_path, settings, clock)
    mine = mem.remember("Our CI runs on Python 3.11.", type="fact", scope="user:ann")
    reports = mem.import_memory("cairn", dump)
    assert sorted(r.scope for r in reports) == ["global", "user:ann"]
    assert sum(r.counts["create"] for r in reports) == 2
    held = active(mem)
    assert held["Deploys go out on Wednesdays."] == ("user:ann", "decision")
    assert held["Never log tokens."] == ("global", "constraint")
    assert "Deploys go out on Tuesdays." not in held and "The cache is Redis." not in held
    assert mine.memory_id in {m.ref for m in mem.store.iter_memories() if m.status == "active"}
    never = next(m for m in mem.store.iter_memories() if m.content == "Never log tokens.")
    assert never.pinned and never.integration == "cairn"
    again = mem.import_memory("cairn", dump)
    assert sum(r.counts["unchanged"] for r in again) == 2
    assert sum(r.counts["create"] for r in again) == 0
