"""The few questions cairn asks git, each one subprocess with a timeout.

Like scope detection, every call removes the repository-location variables (`GIT_DIR` and
friends, which git sets inside hooks) so the answer depends on the directory alone, never
prompts, and takes no optional locks (a hook runs while git itself holds the index lock). A git
that is missing, hangs or fails reads as "no answer": code awareness is advice, and must never
block a write or a recall.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from cairn.code.records import BriefCommit
from cairn.gitproc import git_output
from cairn.timeutil import as_utc

GIT_TIMEOUT_SECONDS = 10.0
_SHA = re.compile(r"[0-9a-f]{4,64}")
_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,64})")
_MERGE_SUBJECTS = (
    re.compile(r"^Merge branch '([^']+)'"),
    re.compile(r"^Merge remote-tracking branch '(?:[^/']+/)?([^']+)'"),
    re.compile(r"^Merge pull request #\d+ from [^/\s]+/(\S+)"),
    re.compile(r"^Merged? (?:in )?(\S+) \(pull request"),
)
_REFLOG_MERGE = re.compile(r"^merge (\S+?):")
_DEFAULT_BRANCHES = ("main", "master", "trunk", "develop")
_FIELD = "\x1f"


def run(directory: Path, *args: str) -> str | None:
    """git's trimmed standard output, or None when git is missing, slow or fails."""
    return git_output(directory, *args, timeout=GIT_TIMEOUT_SECONDS)


def toplevel(directory: Path) -> Path | None:
    out = run(directory, "rev-parse", "--show-toplevel")
    return Path(out).resolve() if out else None


def current_branch(directory: Path) -> str | None:
    return run(directory, "symbolic-ref", "--quiet", "--short", "HEAD") or None


def resolve_commit(directory: Path, sha: str) -> str | None:
    """The full sha of a commit the repository has, or None."""
    if not _SHA.fullmatch(sha.lower()):
        return None
    out = run(directory, "rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}")
    return out or None


def resolve_branch(directory: Path, branch: str) -> str | None:
    out = run(directory, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}")
    return out or None


def head(directory: Path) -> str | None:
    return run(directory, "rev-parse", "--verify", "--quiet", "HEAD^{commit}") or None


def parents(directory: Path, sha: str) -> list[str]:
    out = run(directory, "rev-list", "--parents", "-n", "1", sha)
    return out.split()[1:] if out else []


def message(directory: Path, sha: str) -> str | None:
    return run(directory, "log", "-1", "--format=%B", sha)


def subject(directory: Path, sha: str) -> str | None:
    return run(directory, "log", "-1", "--format=%s", sha)


def reverted_commit(text: str) -> str | None:
    """The sha a revert commit's message names ("This reverts commit <sha>.")."""
    match = _REVERTS.search(text)
    return match[1] if match else None


def branch_in_merge_subject(text: str) -> str | None:
    """The branch a merge commit's subject names (git, GitHub and Bitbucket wordings)."""
    for pattern in _MERGE_SUBJECTS:
        match = pattern.match(text.strip())
        if match:
            return match[1]
    return None


def merged_branch(directory: Path) -> str | None:
    """The branch the last `git merge` took in, from HEAD's reflog ("merge feature/x: ...")."""
    out = run(directory, "reflog", "-1", "--format=%gs", "HEAD")
    if out:
        match = _REFLOG_MERGE.match(out)
        if match:
            return match[1]
    sha = head(directory)
    if sha is None:
        return None
    text = subject(directory, sha)
    return branch_in_merge_subject(text) if text else None


def merge_recorded(directory: Path, branch: str) -> bool:
    """Whether HEAD's history shows `branch` merged: a reflog entry or a merge commit subject."""
    reflog = run(directory, "reflog", "-n", "500", "--format=%gs", "HEAD") or ""
    if any(line.startswith(f"merge {branch}:") for line in reflog.splitlines()):
        return True
    subjects = run(directory, "log", "--merges", "-n", "500", "--format=%s", "HEAD") or ""
    return any(branch_in_merge_subject(line) == branch for line in subjects.splitlines())


def is_ancestor(directory: Path, ancestor: str, descendant: str) -> bool:
    # Exit status 0 (empty output) means yes; 1, or any failure, reads as no.
    return run(directory, "merge-base", "--is-ancestor", ancestor, descendant) is not None


def branches_containing(directory: Path, sha: str) -> list[str]:
    out = run(directory, "for-each-ref", "--format=%(refname:short)", "--contains", sha,
              "refs/heads")  # fmt: skip
    return [line for line in (out or "").splitlines() if line]


def default_branch(directory: Path, current: str | None) -> str | None:
    """The branch work merges into: origin's HEAD if known, else main, master, trunk, develop."""
    out = run(directory, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
    if out and "/" in out:
        name = out.split("/", 1)[1]
        if name != current and resolve_branch(directory, name):
            return name
    for name in _DEFAULT_BRANCHES:
        if name != current and resolve_branch(directory, name):
            return name
    return None


def recent_commits(
    directory: Path, branch: str, *, base: str | None, limit: int
) -> list[BriefCommit]:
    """The branch's newest commits not on `base` (all its newest ones when there are none)."""
    fmt = _FIELD.join(("%H", "%s", "%an", "%aI"))
    spec = [f"{base}..refs/heads/{branch}"] if base else [f"refs/heads/{branch}"]
    out = run(directory, "log", f"-n{limit}", f"--format={fmt}", *spec)
    if base and not out:
        out = run(directory, "log", f"-n{limit}", f"--format={fmt}", f"refs/heads/{branch}")
    commits: list[BriefCommit] = []
    for line in (out or "").splitlines():
        parts = line.split(_FIELD)
        if len(parts) != 4:
            continue
        try:
            at = as_utc(datetime.fromisoformat(parts[3]))
        except ValueError:
            continue
        commits.append(BriefCommit(parts[0], parts[1], parts[2], at))
    return commits


def hooks_dir(directory: Path) -> Path | None:
    """Where git looks for hooks here (honours core.hooksPath; shared by all worktrees)."""
    out = run(directory, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
    return Path(out) if out else None
