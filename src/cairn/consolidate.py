"""Consolidation: the store's periodic upkeep, run in the background after writes.

One run, over every scope of the store: refresh the tidy proposals (merges, retirements,
contradictions, skills: proposed, never applied), rest the memories nobody cited or restated
for 30 days, and keep the indexes healthy (`Store.maintain`: FTS5 `optimize`, PostgreSQL
`ANALYZE`). It never changes a memory's content: that takes an accepted tidy proposal.

When. A write (`remember`, `correct`, ...) calls `Background.after_write`: when the interval
(`CAIRN_CONSOLIDATE_INTERVAL` seconds, default daily; 0 never runs it on writes) has passed
since the last run, recorded in the store (meta `consolidated_at`), a run starts in the
background and the write returns at once. A long-lived process (the MCP and HTTP servers, the
Python API) runs it on a daemon thread; the `cairn` command, which exits right after its write,
starts a detached `cairn consolidate --if-due` instead, claiming that start in the store (meta
`consolidate_spawned_at`) so a burst of commands starts one, not one each. A store that has
never been consolidated records its first write's time, so the first run comes one interval
later.
`cairn consolidate` (`Cairn.consolidate`) runs it in the foreground.

One at a time. A run first takes a lease (meta `consolidate_lease`: the holder and until when)
with a compare-and-set inside a store write transaction, which both backends serialise (SQLite
`BEGIN IMMEDIATE`, PostgreSQL's advisory transaction lock): of two processes triggering at
once, one takes it and the other returns. A lease left by a process that died expires after
`LEASE_FOR`. Under the lease the run checks again that it is due, so a trigger that read the
old timestamp just before another run finished does not run twice.
"""

from __future__ import annotations

import logging
import os
import secrets
import subprocess
import sys
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

from cairn import lifecycle, tidy
from cairn.context import Context
from cairn.errors import CairnError
from cairn.models import NewEvent
from cairn.scope import GLOBAL

LAST_KEY = "consolidated_at"
LEASE_KEY = "consolidate_lease"
SPAWN_KEY = "consolidate_spawned_at"
LEASE_FOR = timedelta(minutes=30)
LOG = logging.getLogger("cairn")
# The detached run the `cairn` command starts: the CLI itself, told to run only when due.
_RUN_CODE = "import sys; from cairn.adapters.cli import main; sys.exit(main())"
# Detached runs this process started, kept referenced so none is reported as leaked.
_CHILDREN: list[subprocess.Popen[bytes]] = []


@dataclass(frozen=True, slots=True)
class ConsolidateResult:
    """What a run did; `ran` is False when it was not due or another process held the lease
    (`reason` says which)."""

    ran: bool
    reason: str
    scopes: int = 0
    proposals: int = 0  # open tidy proposals after the run
    rested: int = 0
    at: datetime | None = None


def last_run(ctx: Context) -> datetime | None:
    return _parse(ctx.store.get_meta(LAST_KEY))


def is_due(ctx: Context, interval: timedelta) -> bool:
    """Whether the interval has passed since the last run; a store never consolidated records
    now as its starting point and is not due yet."""
    return ctx.clock() >= due_at(ctx, interval)


def due_at(ctx: Context, interval: timedelta) -> datetime:
    """When the next run is due: the interval after the last run; a store never consolidated
    records now as its starting point."""
    last = last_run(ctx)
    if last is None:
        now = ctx.clock()
        with ctx.store.transaction():
            if ctx.store.get_meta(LAST_KEY) is None:
                ctx.store.set_meta(LAST_KEY, now.isoformat())
        return now + interval
    return last + interval


def consolidate(ctx: Context, *, if_due: bool = False) -> ConsolidateResult:
    """Run consolidation now (with `if_due`, only when the interval has passed)."""
    interval = timedelta(seconds=ctx.settings.consolidate_interval)
    if if_due and (interval <= timedelta(0) or not is_due(ctx, interval)):
        return ConsolidateResult(False, "not due")
    owner = f"{os.getpid()}:{secrets.token_hex(6)}"
    if not _take_lease(ctx, owner):
        return ConsolidateResult(False, "another process is consolidating")
    try:
        if if_due and not is_due(ctx, interval):
            return ConsolidateResult(False, "not due")  # another run finished meanwhile
        return _run(ctx)
    finally:
        _release_lease(ctx, owner)


def _run(ctx: Context) -> ConsolidateResult:
    store, now = ctx.store, ctx.clock()
    scopes = sorted(s for s in store.count_by("scope", None) if s)
    rested = proposals = 0
    for scope in scopes:
        rested += len(lifecycle.rest_idle(ctx, [scope], force=True))
        if scope != GLOBAL:
            proposals += len(tidy.propose(ctx, scope, None, None))
    store.maintain()
    store.set_meta(LAST_KEY, now.isoformat())
    payload = {"scopes": len(scopes), "proposals": proposals, "rested": rested}
    store.add_event(NewEvent("consolidate", GLOBAL, None, now, ctx.integration, None, payload))
    return ConsolidateResult(True, "ran", len(scopes), proposals, rested, now)


def _take_lease(ctx: Context, owner: str) -> bool:
    now = ctx.clock()
    with ctx.store.transaction():  # serialised with every other writer: a compare-and-set
        held = ctx.store.get_meta(LEASE_KEY)
        if held:
            _, _, until = held.partition(" ")
            expires = _parse(until)
            if expires is not None and expires > now:
                return False
        ctx.store.set_meta(LEASE_KEY, f"{owner} {(now + LEASE_FOR).isoformat()}")
    return True


def _claim_spawn(ctx: Context) -> bool:
    """Whether this process should start the detached run: commands writing in a burst (a
    script calling `cairn remember` in a loop) would otherwise each start one before the first
    records its run. The claim lapses like a lease, in case the started process never ran."""
    now = ctx.clock()
    with ctx.store.transaction():
        claimed = _parse(ctx.store.get_meta(SPAWN_KEY))
        if claimed is not None and timedelta(0) <= now - claimed < LEASE_FOR:
            return False
        ctx.store.set_meta(SPAWN_KEY, now.isoformat())
    return True


def _release_lease(ctx: Context, owner: str) -> None:
    with ctx.store.transaction():
        held = ctx.store.get_meta(LEASE_KEY)
        if held is not None and held.partition(" ")[0] == owner:
            ctx.store.set_meta(LEASE_KEY, None)


def _parse(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None  # a damaged note: treated as absent, the next run rewrites it


class Background:
    """Starts consolidation after writes when it is due: on a daemon thread (`thread`) or as
    a detached `cairn consolidate --if-due` (`process`, for short-lived commands)."""

    def __init__(self, ctx: Context, mode: str = "thread") -> None:
        if mode not in ("thread", "process"):
            raise ValueError(f"unknown background mode {mode!r}")
        self._ctx = ctx
        self._mode = mode
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        # Not due before this: only a run moves the last run's time, and only forwards, so a
        # write before it needs no read (the `meta` read was one of a PostgreSQL remember's ten
        # statements). Should someone move it back by hand, this process starts its run late,
        # by one interval at the most.
        self._not_before: datetime | None = None

    def after_write(self) -> bool:
        """Start a run when one is due; True when one was started. Never raises: upkeep must
        not fail the write that triggered it."""
        interval = timedelta(seconds=self._ctx.settings.consolidate_interval)
        # An in-memory SQLite store is one connection's: no other thread or process sees it.
        if interval <= timedelta(0) or self._ctx.store.location == ":memory:":
            return False
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return False
            now = self._ctx.clock()
            if self._not_before is not None and now < self._not_before:
                return False
            try:
                self._not_before = due_at(self._ctx, interval)
                if now < self._not_before:
                    return False
            except CairnError as exc:
                LOG.warning("cairn: consolidation skipped: %s", exc.message)
                return False
            if self._mode == "process":
                return _claim_spawn(self._ctx) and _spawn(self._ctx.store.location)
            self._thread = threading.Thread(target=self._run, name="cairn-consolidate", daemon=True)
            self._thread.start()
            return True

    def join(self, timeout: float | None = None) -> None:
        """Wait for a run in progress (before the store closes under it)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        try:
            consolidate(self._ctx, if_due=True)
        except CairnError as exc:
            LOG.warning("cairn: background consolidation failed: %s", exc.message)
        except Exception:  # a thread's top level: report, never crash the host process
            LOG.exception("cairn: background consolidation failed")


def _spawn(location: str) -> bool:
    # The child inherits this process's environment (its CAIRN_* settings) with the store
    # added there, not in the arguments: a PostgreSQL URL may hold a password `ps` would show.
    env = {**os.environ, "CAIRN_URL": location}
    try:
        _CHILDREN.append(subprocess.Popen(
            [sys.executable, "-c", _RUN_CODE, "consolidate", "--if-due", "--quiet"],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
        ))  # fmt: skip
    except OSError as exc:
        LOG.warning("cairn: could not start background consolidation: %s", exc)
        return False
    return True
