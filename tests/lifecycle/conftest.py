"""A real git repository for the tidy tests, with a git that sees no user config."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Cairn Test",
    "GIT_AUTHOR_EMAIL": "cairn@example.invalid",
    "GIT_COMMITTER_NAME": "Cairn Test",
    "GIT_COMMITTER_EMAIL": "cairn@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@pytest.fixture(autouse=True)
def clean_git_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path_factory.mktemp("githome")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for name, value in GIT_IDENTITY.items():
        monkeypatch.setenv(name, value)
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)


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
