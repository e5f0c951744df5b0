"""`.cairn.toml`: a committed scope that every checkout and worktree of a project shares, read
as hostile input (size, kind of file, TOML, scope), on both backends through a real Cairn."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cairn import Cairn
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.errors import InvalidScope
from cairn.scope import scope_from_cwd
from cairn.scope_file import MAX_BYTES
from gitkit import isolate_git

SCOPE = "project:acme/api"


@pytest.fixture(autouse=True)
def clean_git_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(tmp_path_factory, monkeypatch)


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
                          timeout=60)  # fmt: skip
    return proc.stdout.strip()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository with an origin and a committed `.cairn.toml` naming SCOPE."""
    path = tmp_path / "api"
    (path / "src").mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "remote", "add", "origin", "https://github.com/someone/fork-of-api.git")
    (path / ".cairn.toml").write_text(f'# the project\nscope = "{SCOPE}"\n', encoding="utf-8")
    (path / "src" / "app.py").write_text("x = 1\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "first")
    return path


def test_the_file_overrides_detection_in_every_checkout_and_worktree(
    project: Path, tmp_path: Path
) -> None:
    assert scope_from_cwd(project) == SCOPE
    assert scope_from_cwd(project / "src") == SCOPE
    worktree = tmp_path / "api-feature"
    git(project, "worktree", "add", "-q", "-b", "feature", str(worktree))
    assert scope_from_cwd(worktree / "src") == SCOPE
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(project), str(clone))
    assert scope_from_cwd(clone) == SCOPE


def test_without_a_scope_key_detection_goes_on(project: Path) -> None:
    (project / ".cairn.toml").write_text("[other]\nname = 'x'\n", encoding="utf-8")
    assert scope_from_cwd(project) == "project:github.com/someone/fork-of-api"


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("scope = project:acme", "not valid TOML"),
        ("scope = 42", "must be a string"),
        ('scope = "no colon here"', "invalid scope"),
        ('scope = "global"', "global"),
        ('scope = "project:has space"', "invalid scope"),
        ("scope = '''\n'''", "invalid scope"),
    ],
)
def test_a_bad_file_is_an_error_naming_it(project: Path, content: str, match: str) -> None:
    (project / ".cairn.toml").write_text(content, encoding="utf-8")
    with pytest.raises(InvalidScope, match=match) as refused:
        scope_from_cwd(project)
    assert str(project / ".cairn.toml") in refused.value.message


def test_hostile_files_are_refused_not_followed(project: Path, tmp_path: Path) -> None:
    target = project / ".cairn.toml"
    target.write_bytes(b'scope = "project:acme/api"\n#' + b"x" * MAX_BYTES)
    with pytest.raises(InvalidScope, match="bytes"):
        scope_from_cwd(project)
    target.unlink()
    outside = tmp_path / "outside.toml"
    outside.write_text('scope = "project:evil/other"\n', encoding="utf-8")
    target.symlink_to(outside)
    with pytest.raises(InvalidScope, match="not a regular file"):
        scope_from_cwd(project)
    target.unlink()
    os.mkfifo(target)
    with pytest.raises(InvalidScope, match="not a regular file"):
        scope_from_cwd(project)
    target.unlink()
    target.write_bytes(b'scope = "project:\xff"\n')
    with pytest.raises(InvalidScope, match="UTF-8"):
        scope_from_cwd(project)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_any_content_gives_a_scope_or_a_clear_error(project: Path, raw: bytes) -> None:
    (project / ".cairn.toml").write_bytes(raw)
    try:
        found = scope_from_cwd(project)
    except InvalidScope as exc:
        assert ".cairn.toml" in exc.message
    else:
        assert found.startswith("project:")


def test_memories_follow_the_committed_scope(
    store_location: str, project: Path, tmp_path: Path
) -> None:
    worktree = tmp_path / "api-feature"
    git(project, "worktree", "add", "-q", "-b", "feature", str(worktree))
    settings_ = Settings(home=tmp_path / "home", embedder="hashing")
    with Cairn.open(store_location, settings=settings_, embedder=HashingEmbedder(),
                    cwd=project) as mem:  # fmt: skip
        written = mem.remember("Deploys go through the release train", type="decision")
        assert written.scope == SCOPE
    with Cairn.open(store_location, settings=settings_, embedder=HashingEmbedder(),
                    cwd=worktree) as mem:  # fmt: skip
        assert written.memory_id in mem.recall("release train deploys").refs
        assert mem.recall("release train deploys", scope=SCOPE).refs == [written.memory_id]
