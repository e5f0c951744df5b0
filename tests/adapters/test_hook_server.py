"""The fast agent hook as real processes: `cairn-hook` clients, the `cairn hook serve` server
they start, and `cairn lessons --hook claude-code` (the slow in-process path) as the reference
the server must match byte for byte. Servers are killed mid-call, left as stale sockets, raced
by simultaneous first calls and replaced stores; the client always exits 0."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from hookkit import (
    CAIRN,
    CAIRN_HOOK,
    OLD_LINE,
    client,
    event,
    fill,
    hook_env,
    live_server,
    lock_files,
    make_repo,
    pre_tool,
    servers_ended,
    wait_for,
    writer,
)


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    with servers_ended(tmp_path):
        yield make_repo(tmp_path)


@pytest.fixture
def store(tmp_path: Path, repo: Path) -> str:
    return str(tmp_path / "memory.db")


def in_process(store: str, payload: str, tmp_path: Path, repo: Path,
               kind: str = "claude-code") -> subprocess.CompletedProcess[str]:  # fmt: skip
    flag = ["--hook", "claude-code"] if kind == "claude-code" else ["--stdin"]
    return subprocess.run([CAIRN, "--store", store, "lessons", *flag], input=payload,
                          capture_output=True, text=True, env=hook_env(tmp_path), cwd=repo,
                          timeout=120, check=False)  # fmt: skip


def lesson_of(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stderr
    text: str = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    return text


def finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Its output once it exits (its stdin was written and closed already)."""
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.wait(timeout=60)
    return out, err


def the_server(tmp_path: Path) -> int:
    pids = [p for p in (live_server(lock) for lock in lock_files(tmp_path)) if p is not None]
    assert len(pids) == 1, pids
    return pids[0]


def calls(repo: Path) -> list[tuple[str, str]]:
    billing = str(repo / "src" / "billing.py")
    edit = {"file_path": billing, "old_string": OLD_LINE, "new_string": "    key = None\n"}
    readme = {"file_path": "README.md", "old_string": "# shop", "new_string": "# Shop"}
    claude: list[Any] = [
        pre_tool(repo, "Edit", edit),
        pre_tool(repo, "Bash", {"command": "npm publish --tag next", "timeout": 120000}),
        pre_tool(repo, "Bash", {"command": "npm publish --tag next"}),  # said already: nothing
        pre_tool(repo, "Read", {"file_path": billing}, session="reader"),
        pre_tool(repo, "Bash", {"command": "ls -la", "description": "List files"}),
        pre_tool(repo, "Edit", readme, session="changer"),  # relative path: the hook's cwd
        event(repo, "SessionStart", source="startup", model="claude-sonnet-4-5"),
        event(repo, "Stop", "changer", stop_hook_active=True),
        event(repo, "Stop", "changer", stop_hook_active=False),
        event(repo, "Stop", "changer", stop_hook_active=False),
        event(repo, "Notification", message="hi"),
        "not json", "[1, 2]", "", json.dumps(pre_tool(repo, "Bash", "ls"))[:-9],
    ]  # fmt: skip
    generic = [{"tool": "shell", "args": {"command": "npm publish"}, "cwd": str(repo),
                "client": "aider", "session_id": "generic"},
               {"args": {}}, {"tool": "Bash", "args": "npm publish", "limit": 99}]  # fmt: skip
    texts = [("claude-code", c if isinstance(c, str) else json.dumps(c)) for c in claude]
    return texts + [("stdin", json.dumps(g)) for g in generic]


def test_the_server_answers_exactly_like_the_in_process_hook(
    store: str, repo: Path, tmp_path: Path
) -> None:
    refs = fill(store, tmp_path, repo)
    twin = str(tmp_path / "twin.db")
    shutil.copy(store, twin)  # the same memories and refs; each path keeps its own state
    answers = []
    for kind, payload in calls(repo):
        slow = in_process(store, payload, tmp_path, repo, kind)
        fast = client(twin, payload, tmp_path, repo, kind)
        assert (fast.returncode, fast.stdout, fast.stderr) == (0, slow.stdout, slow.stderr), (
            kind, payload,
        )  # fmt: skip
        answers.append(fast.stdout)
    assert refs["charge"] in answers[0] and "still hold" in answers[0]
    assert refs["publish"] in answers[1] and answers[2] == ""
    assert refs["charge"] in answers[3] and answers[4] == ""
    assert "SessionStart" in answers[6] and json.loads(answers[8])["decision"] == "block"
    assert answers[7] == answers[9] == answers[10] == ""
    assert json.loads(answers[-2])["error"]["code"] == "invalid_input"
    the_server(tmp_path)  # one server answered every call


def test_the_server_sees_other_processes_writes_and_a_replaced_store(
    store: str, repo: Path, tmp_path: Path
) -> None:
    refs = fill(store, tmp_path, repo)
    deploy = pre_tool(repo, "Bash", {"command": "deploy-tool push prod"})
    assert client(store, deploy, tmp_path, repo).stdout == ""
    pid = the_server(tmp_path)
    with writer(store, tmp_path, repo) as mem:
        added = mem.remember("Never run `deploy-tool push` without the VPN", type="warning",
                             cwd=repo).memory_id  # fmt: skip
    assert added in lesson_of(client(store, deploy, tmp_path, repo))
    for suffix in ("", "-wal", "-shm"):
        Path(store + suffix).unlink(missing_ok=True)
    with writer(store, tmp_path, repo) as mem:
        fresh = mem.remember("Never run `npm publish` on Fridays", type="warning", cwd=repo)
    text = lesson_of(client(store, pre_tool(repo, "Bash", {"command": "npm publish"},
                                            session="new"), tmp_path, repo))  # fmt: skip
    assert "on Fridays" in text and fresh.memory_id in text and "from a branch" not in text
    assert refs["charge"] == fresh.memory_id  # a new file: refs start again, yet no confusion
    assert the_server(tmp_path) == pid  # the same server reopened the store


def test_a_server_killed_mid_call_or_gone_never_fails_the_agent(
    store: str, repo: Path, tmp_path: Path
) -> None:
    refs = fill(store, tmp_path, repo)
    publish = pre_tool(repo, "Bash", {"command": "npm publish"}, session="one")
    assert refs["publish"] in lesson_of(client(store, publish, tmp_path, repo))
    pid = the_server(tmp_path)
    os.kill(pid, signal.SIGSTOP)  # it accepts nothing now; the kernel still queues the call
    waiting = subprocess.Popen([CAIRN_HOOK, "claude-code", "--store", store],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=hook_env(tmp_path),
                               cwd=repo)  # fmt: skip
    assert waiting.stdin is not None
    waiting.stdin.write(json.dumps({**publish, "session_id": "two"}))
    waiting.stdin.close()
    time.sleep(0.5)
    os.kill(pid, signal.SIGKILL)
    out, err = finish(waiting)
    assert waiting.returncode == 0 and out == "", err
    wait_for(lambda: all(live_server(lock) is None for lock in lock_files(tmp_path)))
    socket_file = next((tmp_path / "home" / "hooks").glob("*.sock"))
    assert socket_file.exists()  # stale: nobody listens on it
    again = client(store, {**publish, "session_id": "three"}, tmp_path, repo)
    assert refs["publish"] in lesson_of(again)
    assert the_server(tmp_path) != pid


def test_simultaneous_calls_start_one_server_and_all_get_answers(
    store: str, repo: Path, tmp_path: Path
) -> None:
    refs = fill(store, tmp_path, repo)

    def burst(tag: str) -> list[subprocess.Popen[str]]:
        procs = []
        for n in range(5):
            payload = json.dumps(pre_tool(repo, "Bash", {"command": "npm publish"},
                                          session=f"{tag}-{n}"))  # fmt: skip
            proc = subprocess.Popen([CAIRN_HOOK, "claude-code", "--store", store],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, env=hook_env(tmp_path),
                                    cwd=repo)  # fmt: skip
            assert proc.stdin is not None
            proc.stdin.write(payload)
            proc.stdin.close()
            procs.append(proc)
        return procs

    for tag in ("cold", "warm"):
        for proc in burst(tag):
            out, err = finish(proc)
            assert proc.returncode == 0, err
            assert refs["publish"] in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    the_server(tmp_path)


def test_the_server_is_private_stops_and_exits_when_idle(
    store: str, repo: Path, tmp_path: Path
) -> None:
    env = hook_env(tmp_path)
    serve = [CAIRN, "--store", store, "hook", "serve", "--idle-minutes", "0.05"]
    server = subprocess.Popen(serve, env=env, cwd=repo, stderr=subprocess.PIPE, text=True)
    folder = tmp_path / "home" / "hooks"
    socket_file = wait_for(lambda: next(folder.glob("*.sock"), None))
    assert stat.S_IMODE(socket_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    second = subprocess.run([CAIRN, "--store", store, "hook", "serve"], env=env, cwd=repo,
                            capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert second.returncode == 0 and "already answering" in second.stderr
    assert server.wait(timeout=60) == 0  # idle for 3 s: gone, and its socket with it
    assert not socket_file.exists()
    client(store, pre_tool(repo, "Read", {"file_path": "README.md"}), tmp_path, repo)
    pid = the_server(tmp_path)
    stopped = subprocess.run([CAIRN, "--store", store, "hook", "stop"], env=env, cwd=repo,
                             capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert stopped.returncode == 0 and f"pid {pid}" in stopped.stdout
    wait_for(lambda: all(live_server(lock) is None for lock in lock_files(tmp_path)))
    gone = subprocess.run([CAIRN, "--store", store, "hook", "stop"], env=env, cwd=repo,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert "no hook server runs" in gone.stdout


def test_broken_stores_and_settings_answer_like_the_slow_path(repo: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.db"
    broken.write_text("this is not a database", encoding="utf-8")
    payload = json.dumps(pre_tool(repo, "Bash", {"command": "npm publish"}))
    fast = client(str(broken), payload, tmp_path, repo)
    slow = in_process(str(broken), payload, tmp_path, repo)
    assert (fast.returncode, fast.stdout, fast.stderr) == (0, "", slow.stderr)
    assert fast.stderr.startswith("cairn: lessons hook skipped")
    # A setting cairn refuses: the server cannot start, so this call is answered in-process.
    refused = client(None, payload, tmp_path, repo, CAIRN_BUSY_TIMEOUT_MS="soon")
    assert refused.returncode == 0 and refused.stdout == ""
    assert "CAIRN_BUSY_TIMEOUT_MS" in refused.stderr
    generic = client(None, '{"tool": "Bash"}', tmp_path, repo, "stdin",
                     CAIRN_BUSY_TIMEOUT_MS="soon")  # fmt: skip
    assert generic.returncode == 0 and json.loads(generic.stdout)["lessons"] == []
