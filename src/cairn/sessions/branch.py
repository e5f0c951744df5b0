"""The branch brief of `activate`, minimal for now: the branch checked out and recent commits.

`git` runs as a real subprocess in the session's directory with a timeout and without the
variables that would point it at another repository (set inside git hooks). Anything that goes
wrong — no git, not a repository, a repository without commits, a git that hangs — gives an
empty brief: the brief is a courtesy and must never block opening a session.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from cairn.sessions.models import BranchBrief, CommitLine

RECENT_COMMITS = 5
GIT_TIMEOUT_SECONDS = 5.0
# The same variables cairn.scope removes before asking git about a directory.
_GIT_LOCATION_VARS = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_NAMESPACE",
        "GIT_PREFIX",
    }
)


def branch_brief(cwd: Path | None, *, commits: int = RECENT_COMMITS) -> BranchBrief:
    if cwd is None or not cwd.is_dir():
        return BranchBrief(None)
    branch = _git(cwd, "symbolic-ref", "--quiet", "--short", "HEAD")
    log = _git(cwd, "log", f"-n{commits}", "--no-color", "--format=%h%x09%s")
    lines: list[CommitLine] = []
    for row in (log or "").splitlines():
        sha, _, subject = row.partition("\t")
        if sha:
            lines.append(CommitLine(sha, subject.strip()))
    return BranchBrief(branch, tuple(lines))


def _git(directory: Path, *args: str) -> str | None:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_LOCATION_VARS}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_OPTIONAL_LOCKS"] = "0"
    try:
        proc = subprocess.run(
            ["git", "--no-pager", "-C", str(directory), *args],
            capture_output=True,
            encoding="utf-8",
            errors="replace",
            env=env,
            stdin=subprocess.DEVNULL,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except (subprocess.TimeoutExpired, OSError):
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout.strip() or None
