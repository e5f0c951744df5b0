"""The hook tests' teardown ends every server under the test's home, also a late starter."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from hookservers import end_servers, live_server, lock_files, servers_under, wait_for

CAIRN = str(Path(sys.executable).parent / "cairn")
# A server that lost the race to start: still "importing" while the winner serves, it reaches
# the lock once the winner is gone, and then serves on.
LATE = "import os, sys, time; time.sleep(float(sys.argv[1])); os.execv(sys.argv[2], sys.argv[2:])"


def test_a_server_that_starts_after_the_holder_is_killed_is_ended_too(tmp_path: Path) -> None:
    env = {**os.environ, "CAIRN_HOME": str(tmp_path / "home"), "CAIRN_EMBEDDER": "hashing"}
    serve = [CAIRN, "--store", str(tmp_path / "memory.db"), "hook", "serve"]
    first = subprocess.Popen(serve, env=env, stderr=subprocess.DEVNULL)
    late = subprocess.Popen([sys.executable, "-c", LATE, "1.5", *serve], env=env,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        holder = wait_for(lambda: next(filter(None, map(live_server, lock_files(tmp_path))), None))
        assert holder == first.pid
        assert {first.pid, late.pid} <= set(servers_under(tmp_path / "home"))
        end_servers(tmp_path)
        time.sleep(2.5)  # past the late one's start: had it survived, it would hold the lock
        assert [live_server(lock) for lock in lock_files(tmp_path)] == [None]
        assert first.wait(10) != 0 and late.wait(10) != 0
    finally:
        for proc in (first, late):
            proc.kill()
            proc.wait()
