"""The branch brief of `activate`, minimal for now: the branch checked out and recent commits.

`git` runs as a real subprocess in the session's directory with a timeout and without the
variables that would point it at another repository (set inside git hooks). Anything that goes
wrong — no git, not a repository, a repository without commits, a git that hangs — gives an
empty brief: the brief is a courtesy and must never block opening a session.
"""

from __future__ import annotations

from pathlib import Path

from cairn.gitproc import git_output
from cairn.sessions.models import BranchBrief, CommitLine

RECENT_COMMITS = 5
GIT_TIMEOUT_SECONDS = 5.0


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
    # Commit subjects are shown to people: undecodable bytes become U+FFFD, not surrogates.
    return git_output(directory, *args, timeout=GIT_TIMEOUT_SECONDS, errors="replace") or None
