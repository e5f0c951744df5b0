"""Helpers for the hook client and server tests: a committed checkout with cited code, the
environment the hook processes run in, and ending the servers those processes started."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from cairn import Cairn
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from gitkit import GIT_IDENTITY
from hookservers import live_server, lock_files, servers_ended, wait_for

__all__ = ["live_server", "lock_files", "servers_ended", "wait_for"]

BIN = Path(sys.executable).parent
CAIRN, CAIRN_HOOK = str(BIN / "cairn"), str(BIN / "cairn-hook")
SESSION = "5f0c1e2a-7b4d-4e8f-9a61-2c3d4e5f6a7b"
BILLING = "".join(
    f"def charge_{n}(customer, amount):\n    key = customer.id + ':{n}'\n    return key\n\n\n"
    for n in range(6)
)
OLD_LINE = "    key = customer.id + ':0'\n"


def hook_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CAIRN_", "GIT_"))}
    return {**base, **GIT_IDENTITY, "HOME": str(tmp_path / "userhome"),
            "CAIRN_HOME": str(tmp_path / "home"), "CAIRN_EMBEDDER": "hashing", **extra}  # fmt: skip


def make_repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / "src").mkdir(parents=True)
    (root / "src" / "billing.py").write_text(BILLING, encoding="utf-8")
    (root / "README.md").write_text("# shop\n", encoding="utf-8")
    env = hook_env(tmp_path)
    for args in (["init", "-q", "-b", "main"],
                 ["remote", "add", "origin", "https://github.com/acme/shop.git"],
                 ["add", "-A"], ["commit", "-q", "-m", "shop"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root


def writer(store: str, tmp_path: Path, repo: Path) -> Cairn:
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    return Cairn.open(store, settings=settings, embedder=HashingEmbedder(), cwd=repo,
                      integration="writer")  # fmt: skip


def fill(store: str, tmp_path: Path, repo: Path) -> dict[str, str]:
    with writer(store, tmp_path, repo) as mem:
        return {
            "charge": mem.remember("charge_0 must stay idempotent: the provider retries",
                                   type="warning", source_ref="src/billing.py:1-3",
                                   cwd=repo).memory_id,
            "publish": mem.remember("Never run `npm publish` from a branch", type="warning",
                                    cwd=repo).memory_id,
        }  # fmt: skip


def event(repo: Path, name: str, session: str = SESSION, **fields: Any) -> dict[str, Any]:
    return {"session_id": session, "transcript_path": f"/tmp/{session}.jsonl", "cwd": str(repo),
            "permission_mode": "default", "hook_event_name": name, **fields}  # fmt: skip


def pre_tool(repo: Path, tool: str, tool_input: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return event(repo, "PreToolUse", tool_name=tool, tool_input=tool_input,
                 tool_use_id="toolu_01ABC123", **kw)  # fmt: skip


def client(
    store: str | None,
    payload: dict[str, Any] | str,
    tmp_path: Path,
    repo: Path,
    kind: str = "claude-code",
    **extra: str,
) -> subprocess.CompletedProcess[str]:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    store_args = ["--store", store] if store is not None else []
    return subprocess.run([CAIRN_HOOK, kind, *store_args], input=text, capture_output=True,
                          text=True, env=hook_env(tmp_path, **extra), cwd=repo, timeout=60,
                          check=False)  # fmt: skip
