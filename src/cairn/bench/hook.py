"""`cairn bench hook`: how long Claude Code waits for cairn's PreToolUse hook.

A fresh checkout (a git repository of 40 small modules) and a fresh store of `memories`
memories (a quarter citing line ranges of those modules, warnings about commands, the rest
unrelated) are built in a temporary directory. Then the hook is run exactly as Claude Code
runs it, a new process with the hook's JSON on stdin, for four kinds of call: an edit of cited
lines (a lesson and a question), a shell command a warning is about, a read of a cited file,
and an ordinary command (nothing to say). Every call is of a new agent session, so each does
the whole work (nothing is "already said"). Two commands are measured in the same run:

- `cairn-hook claude-code --store ...` (what `cairn hook claude-code install` writes), asking
  the resident hook server, warm: it was started by the warm-up call;
- the baseline, `cairn --store ... lessons --hook claude-code`, which starts Python, imports
  cairn's command line and opens the store on every call.

The first run of each warms caches and is left out; the rest give median and p95. The first
call with no server running (it starts one and waits for it) is measured on its own, as are a
bare interpreter, importing the hook client, importing cairn's command line (paid by every
baseline call) and `lessons()` in an open process (what the server does per call). The
embedding model is never loaded on this path: lessons are lexical and citation based.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cairn.config import Settings
from cairn.core import Cairn
from cairn.embeddings.hashing import HashingEmbedder
from cairn.lessons.claude_code import CLIENT_CODE

CLI_CODE = "import sys; from cairn.adapters.cli import main; sys.exit(main())"
FIRST_CALL_RUNS = 3

MODULES = 40
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "cairn bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "cairn bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}  # fmt: skip


def bench_hook(*, memories: int = 500, runs: int = 20) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="cairn-bench-hook-") as folder:
        root = Path(folder) / "repo"
        _checkout(root)
        store = str(Path(folder) / "memory.db")
        settings = Settings(home=Path(folder) / "home", embedder="hashing")
        with Cairn.open(store, settings=settings, embedder=HashingEmbedder(), cwd=root,
                        integration="bench-writer") as mem:  # fmt: skip
            _fill(mem, root, memories)
            in_process = _in_process(mem, root, runs)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
        env["CAIRN_HOME"] = str(settings.home)
        fast, slow = _client_command(store), [sys.executable, "-c", CLI_CODE, "--store", store,
                                             "lessons", "--hook", "claude-code"]  # fmt: skip
        try:
            first = _first_calls(fast, store, root, env)
            hook = {name: _process(fast, root, payload, runs, env)
                    for name, payload in _payloads(root).items()}  # fmt: skip
        finally:
            _stop_server(store, env)
        baseline = {name: _process(slow, root, payload, runs, env)
                    for name, payload in _payloads(root).items()}  # fmt: skip
    return {
        "memories": memories,
        "runs": runs,
        "hook_ms": hook,
        "hook_first_call_ms": first,
        "baseline_in_process_hook_ms": baseline,
        "python_startup_ms": _timed_runs([sys.executable, "-c", "pass"], runs),
        "import_hook_client_ms": _timed_runs(
            [sys.executable, "-c", "import cairn.adapters.hook_client"], runs
        ),
        "import_cli_ms": _timed_runs([sys.executable, "-c", "import cairn.adapters.cli"], runs),
        "lessons_in_process_ms": in_process,
        "python": sys.version.split()[0],
    }


def _client_command(store: str) -> list[str]:
    script = Path(sys.executable).with_name("cairn-hook")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script), "claude-code", "--store", store]
    return [sys.executable, "-c", CLIENT_CODE, "claude-code", "--store", store]


def _first_calls(
    command: list[str], store: str, root: Path, env: dict[str, str]
) -> dict[str, float]:
    """The call that finds no server: it starts one and waits until it answers."""
    payload = _payloads(root)["bash_warned_command"]
    samples: list[float] = []
    for _ in range(FIRST_CALL_RUNS):
        _stop_server(store, env)
        samples.append(_once(command, root, payload, env))
    return _summary(samples)


def _stop_server(store: str, env: dict[str, str]) -> None:
    """`cairn hook stop`, which returns once the server is gone (or if none ran)."""
    command = [sys.executable, "-c", CLI_CODE, "--store", store, "hook", "stop"]
    subprocess.run(command, env=env, capture_output=True, check=False, timeout=60)


def _checkout(root: Path) -> None:
    (root / "src").mkdir(parents=True)
    for n in range(MODULES):
        body = "".join(f"def handler_{n}_{k}(request):\n    return {k}\n\n\n" for k in range(12))
        (root / "src" / f"module_{n}.py").write_text(body, encoding="utf-8")
    env = {**os.environ, **_GIT_ENV}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def _fill(mem: Cairn, root: Path, count: int) -> None:
    items: list[dict[str, Any]] = []
    for n in range(count):
        item: dict[str, Any] = {"cwd": str(root), "type": ("fact", "decision", "lesson")[n % 3]}
        if n % 4 == 0:
            item["content"] = f"handler_{n % MODULES} of module {n % MODULES} must stay pure (#{n})"
            item["source_ref"] = (
                f"src/module_{n % MODULES}.py:{1 + 4 * (n % 12)}-{2 + 4 * (n % 12)}"
            )
            item["type"] = "warning"
        elif n % 10 == 1:
            item["content"] = f"Never run `deploy-tool push stage{n}` without the VPN (#{n})"
            item["type"] = "warning"
        else:
            item["content"] = f"The report job {n} runs nightly and retries three times (#{n})"
        items.append(item)
    for start in range(0, len(items), 200):
        mem.remember_many(items[start : start + 200], dedup=False)
    mem.remember("Never run `npm publish` from a branch", type="warning", cwd=root)


def _payloads(root: Path) -> dict[str, dict[str, Any]]:
    def event(tool: str, tool_input: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "session_id": f"bench-{time.monotonic_ns()}",
            "transcript_path": "/dev/null",
            "cwd": str(root),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": dict(tool_input),
            "tool_use_id": "toolu_bench",
        }

    module = str(root / "src" / "module_0.py")
    return {
        "edit_cited_lines": event("Edit", {"file_path": module, "old_string": "    return 0\n",
                                           "new_string": "    return -1\n"}),
        "bash_warned_command": event("Bash", {"command": "npm publish --tag next"}),
        "read_cited_file": event("Read", {"file_path": module}),
        "bash_ordinary": event("Bash", {"command": "ls -la"}),
    }  # fmt: skip


def _process(command: list[str], root: Path, payload: Mapping[str, Any], runs: int,
             env: dict[str, str]) -> dict[str, float]:  # fmt: skip
    _once(command, root, payload, env)  # warm-up: disk cache, SQLite pages, a server started
    return _summary([_once(command, root, payload, env) for _ in range(max(1, runs))])


def _once(command: list[str], root: Path, payload: Mapping[str, Any], env: dict[str, str]) -> float:
    # A new agent session each time: the whole work, never "already said".
    text = json.dumps({**payload, "session_id": f"bench-{time.monotonic_ns()}"})
    start = time.perf_counter()
    subprocess.run(command, input=text, cwd=root, capture_output=True, text=True, env=env,
                   check=False)  # fmt: skip
    return (time.perf_counter() - start) * 1000.0


def _timed_runs(command: Sequence[str], runs: int) -> dict[str, float]:
    return _timed(lambda: subprocess.run(command, capture_output=True, check=False), runs)


def _in_process(mem: Cairn, root: Path, runs: int) -> dict[str, float]:
    module = str(root / "src" / "module_0.py")
    args = {"file_path": module, "old_string": "    return 0\n", "new_string": "    return -1\n"}
    return _timed(lambda: mem.lessons("Edit", args, cwd=root), runs)


def _timed(action: Callable[[], object], runs: int) -> dict[str, float]:
    action()  # warm-up: disk cache, SQLite pages, compiled bytecode
    samples: list[float] = []
    for _ in range(max(1, runs)):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000.0)
    return _summary(samples)


def _summary(samples: list[float]) -> dict[str, float]:
    samples = sorted(samples)
    p95 = samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))]
    return {"median": round(statistics.median(samples), 1), "p95": round(p95, 1),
            "min": round(samples[0], 1)}  # fmt: skip
