"""A store worth looking at, for the app's tests: a git checkout with cited code, memories of
every kind (one of them hostile HTML), a correction, a merge act, a tidy proposal, a committed
session with its procedure. Built through the public API only, as agents would build it."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from cairn import Cairn

APP_PY = """\
import os


def helper(x):
    return x + 1


class Billing:
    rate = 3

    def charge(self, amount):
        total = amount * self.rate
        return total

    def refund(self, amount):
        return -amount
"""
HOSTILE = "<script>alert('owned')</script> the <img src=x onerror=alert(1)> build breaks"
TOKEN = "app-0123456789abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class Scenario:
    scope: str
    cited: str  # cites src/app.py:11-13
    rule: str  # pinned constraint
    hostile: str
    merged: str  # confirmed by a merge act
    act: str
    corrected_old: str
    corrected_new: str
    duplicate_keep: str
    duplicate_retire: str
    proposal: str
    session: str


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}{done.stdout}"
    return done.stdout.strip()


def make_repo(path: Path) -> Path:
    (path / "src").mkdir(parents=True)
    (path / "src" / "app.py").write_text(APP_PY, encoding="utf-8")
    (path / "README.md").write_text("billing service\n", encoding="utf-8")
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "first")
    return path


def build(mem: Cairn, repo: Path) -> Scenario:
    """Fill the store through `mem`, whose default directory is `repo`."""
    scope = mem.scope_for()
    remember = mem.remember
    cited = remember("Billing.charge multiplies the amount by the rate", type="fact",
                     source_ref="src/app.py:11-13", tags=["billing"]).memory_id  # fmt: skip
    rule = remember("Never force-push main; open a pull request", type="constraint",
                    pinned=True, tags=["git"]).memory_id  # fmt: skip
    hostile = remember(HOSTILE, type="warning", tags=["xss"]).memory_id
    for text, kind in [
        ("Deploys go out on Tuesdays after the standup", "decision"),
        ("The staging database is refreshed nightly at 02:00 UTC", "fact"),
        ("Prefer small pull requests with one concern each", "preference"),
        ("Ask before rotating the payment provider keys", "instruction"),
        ("Is the retry budget per request or per job?", "open_question"),
    ]:
        remember(text, type=kind)
    old = remember("The API rate limit is 100 requests per minute", type="fact").memory_id
    new = mem.correct(old, "The API rate limit is 200 requests per minute", reason="raised in v2")
    keep = remember("Webhooks retry five times with exponential backoff", type="fact",
                    dedup=False).memory_id  # fmt: skip
    retire = remember("Webhooks retry five times with exponential back-off", type="fact",
                      dedup=False).memory_id  # fmt: skip
    merged = remember("Retry webhooks with jittered backoff", type="instruction").memory_id
    act = _merge_citing(mem, repo, merged)
    proposal = next(p.id for p in mem.tidy() if p.kind == "merge")
    session = _session(mem)
    return Scenario(
        scope=scope, cited=cited, rule=rule, hostile=hostile, merged=merged, act=act,
        corrected_old=old, corrected_new=new.memory_id, duplicate_keep=keep,
        duplicate_retire=retire, proposal=proposal, session=session,
    )  # fmt: skip


def _merge_citing(mem: Cairn, repo: Path, ref: str) -> str:
    git(repo, "checkout", "-q", "-b", "feature/retry")
    mem.remember("The retry work used the backoff rule", type="fact", used=[ref], cwd=repo,
                 dedup=False)  # fmt: skip
    (repo / "retry.txt").write_text("retry\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "retry with backoff")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge branch 'feature/retry'", "feature/retry")
    done = mem.observe_merge("feature/retry")
    assert done.confirmed == (ref,), done
    return done.act_id


def _session(mem: Cairn) -> str:
    """A session that recalls, says what helped, and commits with a procedure."""
    brief = mem.activate("Add a retry to the webhook sender", standing=False)
    if brief.refs:
        seen = [{"memory_id": ref, "used": False, "effect": "no_effect"} for ref in brief.refs]
        mem.feedback(brief.session_id, brief.retrieval_id, seen)
    found = mem.recall("how should webhooks retry", session_id=brief.session_id)
    helped = [{"memory_id": found.hits[0].ref, "used": True, "effect": "helped"}]
    mem.feedback(brief.session_id, found.retrieval_id, helped)
    mem.recall("what is the rate limit of the API")
    mem.commit(brief.session_id, outcome="success", summary="retries with backoff shipped",
               procedure={"steps": ["Wrap the send in a retry", "Back off with jitter"]},
               used=[found.hits[0].ref])  # fmt: skip
    return brief.session_id
