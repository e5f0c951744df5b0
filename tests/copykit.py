"""Whole-store copy helpers: a store with rows in most tables, built through the real tools,
and snapshots of every copied table in the neutral encoding."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from cairn import Cairn
from cairn.store.base import Store
from gitkit import GIT_IDENTITY

SCOPE = "project:example/api"
GIT_ENV = {**GIT_IDENTITY, "GIT_CONFIG_GLOBAL": os.devnull}


def snapshot(store: Store) -> dict[str, list[dict[str, Any]]]:
    """Every copied table's rows, in key order."""
    return {name: list(store.dump_table(name)) for name in store.table_names()}


def git_repo(path: Path) -> Path:
    """A git checkout with one commit holding `src/app.py`, on branch `main`."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "src").mkdir(exist_ok=True)
    (path / "src" / "app.py").write_text(
        "def helper(x):\n    return x + 1\n\n\ndef rate():\n    return 2\n", encoding="utf-8"
    )
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)
    return path


def build_rich(mem: Cairn, repo: Path, text: str = "Deploys go through staging first.") -> None:
    """Memories with history, a citation, a session with feedback, a procedure, an episode,
    cites, pins, a branch goal, a forgotten and a purged memory."""
    kept = mem.remember(text, type="decision", scope=SCOPE, tags=["deploy"], reason="March")
    mem.remember("helper adds one", type="fact", source_ref="src/app.py:1-2", cwd=repo)
    gone = mem.remember("Builds use Bazel.", type="fact", scope=SCOPE, tags=["build"])
    purged = mem.remember("Temporary note about the staging password rotation.", type="fact",
                          scope=SCOPE)  # fmt: skip
    mem.correct(kept.memory_id, text + " Then canary.", reason="canary added", scope=SCOPE)
    brief = mem.activate("ship the canary release", scope=SCOPE)
    found = mem.recall("deploys staging", session_id=brief.session_id)
    for retrieval in (brief.retrieval_id, found.retrieval_id):
        record = mem.store.get_retrieval(int(retrieval.removeprefix("ret_")))
        assert record is not None
        mem.feedback(
            brief.session_id,
            retrieval,
            [{"memory_id": ref, "used": True, "effect": "helped"} for ref in record.refs],
        )
    mem.pin("the canary flag is deploy.canary", scope=SCOPE, session_id=brief.session_id)
    for note in ("Canary runs take ten minutes.", "Canary alerts page the on-call."):
        mem.remember(note, type="fact", scope=SCOPE, session_id=brief.session_id)
    current = mem.recall("deploys staging canary", scope=SCOPE).refs[0]
    mem.commit(
        brief.session_id,
        outcome="success",
        summary="Shipped the canary.",
        procedure={"steps": ["Deploy to staging", "Flip deploy.canary"], "caveats": ["Watch"]},
        used=[current],
    )
    mem.set_branch_goal("Ship the canary release", scope=SCOPE, branch="canary")
    mem.forget(gone.memory_id, reason="moved to make", scope=SCOPE)
    mem.mute_lessons(tag="build", scope=SCOPE)
    for _ in range(2):
        mem.remember("Staging deploys need a green build.", type="fact", scope=SCOPE, dedup=False)
    mem.tidy(scope=SCOPE)
    mem.purge(purged.memory_id, scope=SCOPE)
