"""Real git repositories in temporary directories, and a git that sees no user config."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn import Cairn
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from gitkit import isolate_git


@pytest.fixture(autouse=True)
def clean_git_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(tmp_path_factory, monkeypatch)


class Repo:
    """A git repository on disk, driven through the real git binary."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def git(self, *args: str) -> str:
        proc = subprocess.run(
            ["git", *args], cwd=self.path, capture_output=True, text=True, timeout=60, check=False
        )
        if proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}{proc.stdout}")
        return proc.stdout.strip()

    def write(self, relative: str, text: str) -> Path:
        target = self.path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return target

    def commit(self, message: str, *paths: str) -> str:
        self.git("add", *(paths or ("-A",)))
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD")

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")


def make_repo(path: Path, files: dict[str, str] | None = None) -> Repo:
    path.mkdir(parents=True, exist_ok=True)
    repo = Repo(path)
    repo.git("init", "-q", "-b", "main")
    for relative, text in (files or {"README.md": "hello\n"}).items():
        repo.write(relative, text)
    repo.commit("first")
    return repo


APP = """\
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


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return make_repo(tmp_path / "repo", {"src/app.py": APP, "README.md": "hello\n"})


@pytest.fixture
def mem_in(
    store_location: str, settings: Settings, embedder: HashingEmbedder, clock: object
) -> Iterator[object]:
    """A factory: a Cairn on the shared store whose default directory is `cwd`."""
    opened: list[Cairn] = []

    def make(cwd: Path, integration: str | None = None) -> Cairn:
        handle = Cairn.open(
            store_location, settings=settings, embedder=embedder, clock=clock,  # type: ignore[arg-type]
            cwd=cwd, integration=integration,
        )  # fmt: skip
        opened.append(handle)
        return handle

    yield make
    for handle in opened:
        handle.close()
