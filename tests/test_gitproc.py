"""Running git: the directory asked is the repository answered about, whatever the environment."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cairn.gitproc import git_output


def _repo(path: Path) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def test_a_hooks_git_dir_does_not_redirect_the_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked, other = _repo(tmp_path / "asked"), _repo(tmp_path / "other")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))  # as inside another repository's hook
    top = git_output(asked, "rev-parse", "--show-toplevel", timeout=10)
    assert top is not None and Path(top).resolve() == asked.resolve()


def test_failures_and_missing_directories_give_none(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert git_output(plain, "rev-parse", "--show-toplevel", timeout=10) is None
    assert git_output(tmp_path / "missing", "status", timeout=10) is None


def test_undecodable_output_is_replaced_only_when_asked(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    subject = b"fix caf\xe9 rates"  # Latin-1, not UTF-8
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=n", "-c", "user.email=n@x", "-c",
         "i18n.commitEncoding=binary", "commit", "-q", "--allow-empty", "-m", subject],
        check=True,
    )  # fmt: skip
    shown = git_output(repo, "log", "-n1", "--format=%s", timeout=10, errors="replace")
    exact = git_output(repo, "log", "-n1", "--format=%s", timeout=10)
    assert shown == "fix caf\ufffd rates"
    assert exact is not None and exact.encode("utf-8", "surrogateescape") == subject
