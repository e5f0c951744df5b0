"""Ending the hook servers a test's hook processes started: by pid, every one of them.

A burst of hook calls can start several servers at once. One takes the lock and the others
exit, but a loser still importing cairn on a busy machine reaches the lock only after the
winner is gone, and then serves. So the teardown kills whatever serves under the test's home
until nothing does, not just the pid the lock file names.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def lock_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "home" / "hooks").glob("*.lock"))


def live_server(lock: Path) -> int | None:
    """The pid of the server holding this lock, or None when none holds it."""
    try:
        handle = os.open(lock, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        text = lock.read_text(encoding="utf-8").strip()
        return int(text) if text.isdigit() else None
    finally:
        os.close(handle)
    return None


def wait_for(condition: Any, seconds: float = 30.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"gave up after {seconds} s waiting for {condition}")


def servers_under(home: Path) -> list[int]:
    """Every process serving hooks with CAIRN_HOME=home: the lock holder, and also a server that
    lost the race to start and is still importing (it takes over once the holder is gone)."""
    wanted = f"CAIRN_HOME={home}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:  # it ended while we looked, or is not ours to read
            continue
        if b"hook" in argv and b"serve" in argv and wanted in environ:
            found.append(int(entry.name))
    return found


def end_servers(tmp_path: Path) -> None:
    """Kill, by pid, the hook servers started under the test's home, until none is left."""
    home = tmp_path / "home"

    def none_left() -> bool:
        pids = set(servers_under(home))
        pids.update(pid for lock in lock_files(tmp_path) if (pid := live_server(lock)))
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return not pids

    wait_for(none_left, 30)


@contextlib.contextmanager
def servers_ended(tmp_path: Path) -> Iterator[None]:
    """End the hook servers the test's hook processes started under its home."""
    try:
        yield
    finally:
        end_servers(tmp_path)
