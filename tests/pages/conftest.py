"""A real git repository with documentation, and a Cairn whose default directory is inside it."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn import Cairn, page_source
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from clocks import FakeClock
from gitkit import isolate_git

README = """\
# Slate

Slate keeps long-term memory for coding agents.

## Install

Install with pipx: `pipx install slate-memory`, then run `slate init` in your project.

## Configuration

The store lives under `SLATE_HOME`; set `SLATE_EMBEDDER=hashing` to skip the model.
"""

GUIDE = """\
Deploying
=========

Deploys go through the release train every Tuesday.

Rollback
--------

To roll back, run `make rollback` with the previous tag; the canary stays at five percent.
"""


@pytest.fixture(autouse=True)
def clean_git_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(tmp_path_factory, monkeypatch)
    # New files show up at once instead of after the listing cache's few seconds.
    monkeypatch.setattr(page_source, "LIST_TTL_SECONDS", 0.0)


def git(path: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=path, check=True, capture_output=True, timeout=60)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "slate"
    files = {
        "README.md": README,
        "docs/guide.rst": GUIDE,
        "docs/faq.md": "# FAQ\n\n## Why hashing?\n\nTests need no model download.\n",
        "notes/design.md": "# Design\n\nEvery memory is one claim with a type and a scope.\n",
        "node_modules/pkg/README.md": "# Vendored\n\nInstall with pipx too.\n",
        ".github/ISSUE.md": "# Issue template\n\nInstall with pipx here as well.\n",
        "src/app.py": "print('not documentation: pipx install')\n",
    }
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "docs")
    return root


@pytest.fixture
def mem_repo(
    store_location: str,
    settings: Settings,
    embedder: HashingEmbedder,
    clock: FakeClock,
    repo: Path,
) -> Iterator[Cairn]:
    with Cairn.open(
        store_location, settings=settings, embedder=embedder, clock=clock, cwd=repo
    ) as opened:
        yield opened
