"""Helpers for the MCP process tests: the environment a server runs in, `cairn serve` with its
announced URL, and `cairn mcp` driven by raw lines with a read timeout (so a server that does
not answer fails the test instead of hanging it)."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

CAIRN = str(Path(sys.executable).with_name("cairn"))
# Generous: the box is shared and noisy; a server that never answers still fails, not hangs.
ANSWER_TIMEOUT_S = 20.0
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def cairn_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    return {**clean, "CAIRN_HOME": str(home), "CAIRN_EMBEDDER": "hashing"}


def initialize_request(request_id: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }


@dataclass
class Served:
    """A running `cairn serve`: its URL and whatever it printed on stdout before serving."""

    url: str
    stdout_lines: list[str] = field(default_factory=list)


@contextmanager
def serving(env: dict[str, str], cwd: Path, *args: str, port: str = "0") -> Iterator[Served]:
    """`cairn serve --port 0 ARGS`; yields the announced URL, stops the server after."""
    process = subprocess.Popen(
        [CAIRN, "serve", "--port", port, *args],
        env=env, cwd=str(cwd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stderr is not None and process.stdout is not None
        seen, found = "", None
        for line in process.stderr:  # whatever a library warns about first, the URL follows
            seen += line
            found = re.search(r"serving MCP at (http://\S+)", line)
            if found:
                break
        assert found, seen
        printed = [process.stdout.readline().strip()] if "--new-token" in args else []
        yield Served(found.group(1), printed)
    finally:
        process.terminate()
        process.wait(timeout=30)


class RawStdio:
    """`cairn mcp` fed raw byte lines; `answer()` waits at most `ANSWER_TIMEOUT_S` for a line."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.process = subprocess.Popen(
            [CAIRN, "mcp"], env=env, cwd=str(cwd),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        self._lines: queue.Queue[bytes] = queue.Queue()
        assert self.process.stdout is not None
        threading.Thread(target=self._drain, args=(self.process.stdout,), daemon=True).start()

    def _drain(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            self._lines.put(line)

    def send(self, raw: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def answer(self) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=ANSWER_TIMEOUT_S)
        except queue.Empty:
            raise AssertionError(f"no answer within {ANSWER_TIMEOUT_S} s") from None
        parsed: dict[str, Any] = json.loads(line)
        return parsed

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        self.send(json.dumps(message).encode())
        return self.answer()

    def start(self) -> None:
        assert "result" in self.request(initialize_request())
        self.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def close(self) -> str:
        """End the session; the server's stderr."""
        assert self.process.stdin is not None and self.process.stderr is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)
        return self.process.stderr.read().decode("utf-8", "replace")
