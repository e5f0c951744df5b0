"""A real git repository for the tidy tests, with a git that sees no user config."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gitkit import isolate_git


@pytest.fixture(autouse=True)
def clean_git_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(tmp_path_factory, monkeypatch)


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=True
    )
    return proc.stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A repository with one committed Python file, `src/jobs.py`."""
    path = tmp_path / "proj"
    (path / "src").mkdir(parents=True)
    (path / "src" / "jobs.py").write_text("def run():\n    return 1\n\n\ndef stop():\n    pass\n")
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "first")
    return path
