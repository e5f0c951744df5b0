"""Statuses tell the truth: a superseded version is `replaced` in get_memory, stats and
exports (old exports and old stores are brought in line), and a forgotten memory shows why.
Both backends."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

from cairn import Cairn
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.store.migrations import load_migrations
from clocks import FakeClock

SCOPE = "project:example/statuses"


def statuses(mem: Cairn, *refs: str) -> list[str]:
    return [r.memory.status for r in mem.get_memory(list(refs), scope=SCOPE).records]


def corrected(mem: Cairn) -> tuple[str, str]:
    old = mem.remember("The API rate limit is 100 rpm.", type="fact", scope=SCOPE).memory_id
    new = mem.correct(old, "The API rate limit is 200 rpm.", reason="raised", scope=SCOPE)
    return old, new.memory_id


def test_a_corrected_version_is_replaced_everywhere(mem: Cairn) -> None:
    old, new = corrected(mem)
    assert statuses(mem, old, new) == ["replaced", "active"]
    assert mem.stats(scope=SCOPE)["by_status"] == {"active": 1, "replaced": 1}
    newest = mem.correct(new, "The API rate limit is 300 rpm.", reason="again", scope=SCOPE)
    assert statuses(mem, old, new, newest.memory_id) == ["replaced", "replaced", "active"]
    assert mem.stats(scope=SCOPE)["by_status"] == {"active": 1, "replaced": 2}


def test_a_resting_memory_that_is_corrected_is_replaced(mem: Cairn) -> None:
    old = mem.remember("Nightly builds run at 02:00.", type="fact", scope=SCOPE).memory_id
    mem.store.update_memory(int(old[4:]), {"status": "resting"})
    mem.correct(old, "Nightly builds run at 03:00.", reason="moved", scope=SCOPE)
    assert statuses(mem, old) == ["replaced"]


def test_a_forgotten_memory_shows_its_reason(mem: Cairn) -> None:
    kept = mem.remember("Deploys happen on Tuesdays.", type="fact", scope=SCOPE,
                        reason="agreed in planning").memory_id  # fmt: skip
    gone = mem.remember("The staging cluster is blue.", type="fact", scope=SCOPE,
                        reason="from the runbook").memory_id  # fmt: skip
    mem.forget(gone, reason="staging was torn down", scope=SCOPE)
    records = {r.ref: r for r in mem.get_memory([kept, gone], scope=SCOPE).records}
    assert records[gone].memory.status == "retired"
    assert records[gone].retire_reason == "staging was torn down"
    assert records[gone].memory.reason == "from the runbook"  # why it was written, unchanged
    assert records[kept].retire_reason is None
    mem.purge(gone, scope=SCOPE)
    purged = mem.get_memory([gone], scope=SCOPE).records[0]
    assert purged.memory.status == "purged" and purged.retire_reason is None


def test_export_says_replaced_and_round_trips(mem: Cairn, tmp_path: Path) -> None:
    old, new = corrected(mem)
    out = io.StringIO()
    mem.export(out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    memories = {r["row"]["id"]: r["row"] for r in rows if r.get("table") == "memories"}
    assert memories[int(old[4:])]["status"] == "replaced"
    assert memories[int(new[4:])]["status"] == "active"
    with Cairn.open(str(tmp_path / "copy.db"), embedder=HashingEmbedder()) as copy:
        copy.import_(out.getvalue().splitlines())
        assert statuses(copy, old, new) == ["replaced", "active"]


def test_an_export_from_before_the_replaced_status_imports_as_replaced(
    mem: Cairn, tmp_path: Path
) -> None:
    old, new = corrected(mem)
    out = io.StringIO()
    mem.export(out)
    lines = []
    for line in out.getvalue().splitlines():
        record = json.loads(line)
        if record.get("table") == "memories" and record["row"]["status"] == "replaced":
            record["row"]["status"] = "active"  # what older cairns wrote
        lines.append(json.dumps(record))
    with Cairn.open(str(tmp_path / "old.db"), embedder=HashingEmbedder()) as copy:
        copy.import_(lines)
        assert statuses(copy, old, new) == ["replaced", "active"]
        assert copy.stats(scope=SCOPE)["by_status"] == {"active": 1, "replaced": 1}


def test_a_store_written_before_the_replaced_status_is_migrated(
    store_location: str, settings: Settings, clock: FakeClock
) -> None:
    embedder = HashingEmbedder()
    with Cairn.open(store_location, settings=settings, embedder=embedder, clock=clock) as mem:
        old, new = corrected(mem)
    backend = "sqlite" if not store_location.startswith("postgres") else "postgres"
    version = next(
        m.version for m in load_migrations(f"cairn.store.{backend}") if m.name == "replaced_status"
    )
    undo = [
        f"UPDATE memories SET status = 'active' WHERE id = {int(old[4:])}",
        f"DELETE FROM schema_migrations WHERE version = {version}",
    ]
    run_sql(store_location, undo)
    with Cairn.open(store_location, settings=settings, embedder=embedder, clock=clock) as mem:
        assert statuses(mem, old, new) == ["replaced", "active"]


def run_sql(location: str, statements: list[str]) -> None:
    if location.startswith("postgres"):
        import psycopg

        with psycopg.connect(location, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)  # type: ignore[arg-type]
        return
    conn = sqlite3.connect(location)
    with conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()
