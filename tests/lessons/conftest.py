"""Real git repositories with cited files, and cairns opened on them as different clients.

`repo` is a committed checkout holding a billing module, migrations, docs and a package file;
`writer` is the client that writes memories (integration "writer"), `agent` the client that
asks for lessons and confirms (integration "claude-code"), both on the same SQLite file, the
deterministic embedder and one FakeClock.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cairn import Cairn
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from gitkit import isolate_git

if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))

from lessonkit import BILLING, INVOICE, Repo


@pytest.fixture(autouse=True)
def clean_git_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(tmp_path_factory, monkeypatch)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    made = Repo(tmp_path / "shop")
    made.path.mkdir()
    made.git("init", "-q", "-b", "main")
    made.git("remote", "add", "origin", "https://github.com/acme/shop.git")
    made.write("src/billing.py", BILLING)
    made.write("src/invoice.py", INVOICE)
    made.write("migrations/0001_init.sql", "CREATE TABLE invoices (id integer);\n")
    made.write("docs/guide.md", "# Guide\n\nHow to bill.\n")
    made.write("package.json", '{"name": "shop", "version": "1.0.0"}\n')
    made.write("README.md", "# shop\n")
    made.commit("initial")
    return made


Opener = Callable[[str], Cairn]


@pytest.fixture
def open_as(
    store_location: str,
    settings: Settings,
    embedder: HashingEmbedder,
    clock: object,
    repo: Repo,
) -> Iterator[Opener]:
    opened: list[Cairn] = []

    def make(integration: str) -> Cairn:
        mem = Cairn.open(
            store_location, settings=settings, embedder=embedder, clock=clock,  # type: ignore[arg-type]
            integration=integration, cwd=repo.path,
        )  # fmt: skip
        opened.append(mem)
        return mem

    yield make
    for mem in opened:
        mem.close()


@pytest.fixture
def writer(open_as: Opener) -> Cairn:
    return open_as("writer")


@pytest.fixture
def agent(open_as: Opener) -> Cairn:
    return open_as("claude-code")
