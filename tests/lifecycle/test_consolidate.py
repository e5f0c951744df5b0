"""Consolidation: started in the background by a write once its interval has passed, one run at
a time across processes, never changing a memory's content; `cairn consolidate` in the
foreground. On both backends."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn import Cairn
from cairn.adapters.cli import main
from cairn.config import Settings
from cairn.consolidate import (
    LAST_KEY,
    LEASE_FOR,
    Background,
    ConsolidateResult,
    _claim_spawn,
    _take_lease,
)
from cairn.embeddings.hashing import HashingEmbedder
from clocks import FakeClock

SCOPE = "project:acme/api"
HOUR = 3600
CAIRN = str(Path(sys.executable).with_name("cairn"))
Opener = Callable[..., Cairn]


@pytest.fixture
def open_mem(store_location: str, tmp_path: Path, clock: FakeClock) -> Iterator[Opener]:
    """Cairns on one store, consolidating hourly, all on the test's clock."""
    opened: list[Cairn] = []

    def make(interval: int = HOUR) -> Cairn:
        settings = Settings(home=tmp_path / "home", embedder="hashing",
                            consolidate_interval=interval)  # fmt: skip
        mem = Cairn.open(store_location, settings=settings, embedder=HashingEmbedder(),
                         clock=clock, cwd=tmp_path)  # fmt: skip
        opened.append(mem)
        return mem

    yield make
    for mem in opened:
        mem.close()


def runs(mem: Cairn) -> int:
    return sum(1 for e in mem.store.events_of_kind(["consolidate"], None))


def contents(mem: Cairn) -> dict[int, tuple[str, str]]:
    return {m.id: (m.content, m.summary) for m in mem.store.iter_memories()}


def test_a_write_starts_it_once_the_interval_has_passed(open_mem: Opener, clock: FakeClock) -> None:
    mem = open_mem()
    mem.remember("Deploys go through the release train", type="decision", scope=SCOPE)
    mem.close()  # waits for any run in the background
    mem = open_mem()
    assert runs(mem) == 0 and mem.store.get_meta(LAST_KEY) == clock().isoformat()
    clock.advance(minutes=59)
    mem.remember("Invoices are numbered per year", type="fact", scope=SCOPE)
    mem.close()
    mem = open_mem()
    assert runs(mem) == 0
    clock.advance(minutes=2)
    mem.remember("Releases are cut on Tuesdays", type="fact", scope=SCOPE)
    mem.remember("Hotfixes skip the release train", type="fact", scope=SCOPE)
    mem.close()
    mem = open_mem()
    assert runs(mem) == 1, "it ran once, not once per write"
    assert mem.store.get_meta(LAST_KEY) == clock().isoformat()
    mem.remember("Tags are signed", type="fact", scope=SCOPE)
    mem.close()
    assert runs(open_mem()) == 1


def test_writes_before_the_due_time_read_nothing_and_a_run_elsewhere_is_seen(
    open_mem: Opener, clock: FakeClock
) -> None:
    mem, other = open_mem(), open_mem()
    mem.remember("Deploys go through the release train", type="decision", scope=SCOPE)
    reads: list[str] = []
    reading = mem.store.get_meta

    def counted(key: str) -> str | None:
        reads.append(key)
        return reading(key)

    mem.store.get_meta = counted  # type: ignore[method-assign]
    for minute in range(3):
        clock.advance(minutes=minute)
        mem.remember(f"Invoices are numbered per year {minute}", type="fact", scope=SCOPE)
    assert LAST_KEY not in reads, "not due for an hour: no write asks when it is"
    clock.advance(minutes=58)
    assert other.consolidate(if_due=True).ran  # another process ran it meanwhile
    clock.advance(minutes=2)
    mem.remember("Tags are signed", type="fact", scope=SCOPE)
    assert reads.count(LAST_KEY) == 1  # due by its own reckoning: it reads, and finds the run
    mem.close()
    assert runs(open_mem()) == 1


def test_it_refreshes_proposals_rests_idle_memories_and_leaves_content_alone(
    open_mem: Opener, clock: FakeClock
) -> None:
    mem = open_mem(interval=0)  # only the foreground run here
    old = mem.remember("The nightly export job writes CSV files to the archive bucket",
                       type="fact", scope=SCOPE).memory_id  # fmt: skip
    pinned = mem.remember("Never force-push main", type="constraint", scope=SCOPE,
                          pinned=True).memory_id  # fmt: skip
    clock.advance(days=31)
    twin = "Deploys run through the release train every Tuesday"
    mem.remember(twin, type="decision", scope=SCOPE)
    mem.remember(twin + " morning", type="decision", scope=SCOPE, dedup=False)
    before = contents(mem)
    result = mem.consolidate()
    assert isinstance(result, ConsolidateResult) and result.ran and result.scopes == 1
    assert result.rested == 1 and result.proposals >= 1
    statuses = {m.ref: m.status for m in mem.store.iter_memories()}
    assert statuses[old] == "resting" and statuses[pinned] == "active"
    assert [p.kind for p in mem.tidy(scope=SCOPE)].count("merge") == 1
    assert contents(mem) == before, "no content changes without an accepted proposal"
    assert runs(mem) == 1


def test_two_concurrent_triggers_run_it_once(open_mem: Opener, clock: FakeClock) -> None:
    first, second = open_mem(), open_mem()
    first.remember("Deploys go through the release train", type="decision", scope=SCOPE)
    clock.advance(hours=2)
    barrier = threading.Barrier(2)
    results: list[ConsolidateResult] = []

    def trigger(mem: Cairn) -> None:
        barrier.wait()
        results.append(mem.consolidate(if_due=True))

    threads = [threading.Thread(target=trigger, args=(m,)) for m in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r.ran for r in results) == [False, True]
    loser = next(r for r in results if not r.ran)
    assert loser.reason in ("not due", "another process is consolidating")
    assert runs(first) == 1


def test_a_held_lease_stops_a_run_until_it_expires(open_mem: Opener, clock: FakeClock) -> None:
    mem = open_mem()
    mem.remember("Deploys go through the release train", type="decision", scope=SCOPE)
    other = open_mem()
    assert _take_lease(other._ctx, "4242:elsewhere")  # another process, mid-run
    refused = mem.consolidate()
    assert not refused.ran and refused.reason == "another process is consolidating"
    clock.advance(seconds=LEASE_FOR.total_seconds() + 1)  # it died without releasing
    assert mem.consolidate().ran
    assert mem.consolidate().ran, "a finished run releases its lease"
    assert runs(mem) == 2


def test_not_due_and_disabled(open_mem: Opener, clock: FakeClock) -> None:
    mem = open_mem()
    assert mem.consolidate(if_due=True).reason == "not due"  # a new store starts counting
    clock.advance(hours=2)
    assert mem.consolidate(if_due=True).ran
    off = open_mem(interval=0)
    clock.advance(days=3)
    off.remember("Tags are signed", type="fact", scope=SCOPE)
    assert off.consolidate(if_due=True).reason == "not due"
    assert off.consolidate().ran  # the foreground command always runs
    assert runs(off) == 2


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    return {**base, "CAIRN_HOME": str(tmp_path / "home"), "CAIRN_EMBEDDER": "hashing",
            "CAIRN_CONSOLIDATE_INTERVAL": "60"}  # fmt: skip


def past_due(store: str) -> None:
    with Cairn.open(store, settings=Settings(home=Path(store).parent / "home",
                                             embedder="hashing")) as mem:  # fmt: skip
        clock_time = mem._ctx.clock() - timedelta(hours=1)
        mem.store.set_meta(LAST_KEY, clock_time.isoformat())


def test_the_command_starts_a_detached_run_and_the_foreground_command(
    tmp_path: Path, cli_env: dict[str, str]
) -> None:
    store = str(tmp_path / "memory.db")
    CliRunner().invoke(main, ["--store", store, "stats"], env=cli_env)
    past_due(store)
    wrote = subprocess.run([CAIRN, "--store", store, "remember", "Tags are signed", "--type",
                            "fact", "--scope", SCOPE], env=cli_env, capture_output=True,
                           text=True, timeout=120, check=False)  # fmt: skip
    assert wrote.returncode == 0, wrote.stderr
    deadline = time.monotonic() + 120  # the detached process starts Python: give it time
    ran = 0
    while time.monotonic() < deadline and not ran:
        time.sleep(0.2)
        with Cairn.open(store, settings=Settings(home=tmp_path / "home",
                                                 embedder="hashing")) as mem:  # fmt: skip
            ran = runs(mem)
    assert ran == 1
    shown = CliRunner().invoke(main, ["--store", store, "consolidate"], env=cli_env)
    assert shown.exit_code == 0 and shown.output.startswith("consolidated 1 scope(s)")
    quiet = CliRunner().invoke(main, ["--store", store, "consolidate", "--if-due"], env=cli_env)
    assert quiet.output == "not consolidated: not due\n"


def test_two_processes_at_once_run_it_once(tmp_path: Path, cli_env: dict[str, str]) -> None:
    store = str(tmp_path / "memory.db")
    CliRunner().invoke(
        main,
        ["--store", store, "remember", "Tags are signed", "--type", "fact", "--scope", SCOPE],
        env={**cli_env, "CAIRN_CONSOLIDATE_INTERVAL": "0"},
    )
    past_due(store)
    procs = [subprocess.Popen([CAIRN, "--store", store, "consolidate", "--if-due", "--json"],
                              env=cli_env, stdout=subprocess.PIPE, text=True)
             for _ in range(2)]  # fmt: skip
    outputs = [p.communicate(timeout=120)[0] for p in procs]
    assert sum('"ran": true' in out for out in outputs) == 1, outputs
    with Cairn.open(store, settings=Settings(home=tmp_path / "home", embedder="hashing")) as mem:
        assert runs(mem) == 1


def test_a_burst_of_commands_claims_one_detached_start(open_mem: Opener, clock: FakeClock) -> None:
    mem = open_mem()
    mem.remember("Deploys go through the release train", type="decision", scope=SCOPE)
    clock.advance(hours=2)
    assert _claim_spawn(mem._ctx)  # the first command starts the run
    commands = [Background(open_mem()._ctx, "process") for _ in range(3)]
    assert [b.after_write() for b in commands] == [False, False, False]  # the claim holds
    clock.advance(seconds=LEASE_FOR.total_seconds() + 1)  # the started process never ran
    assert _claim_spawn(mem._ctx)
