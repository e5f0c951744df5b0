"""Scopes: parsing, and detection from real git repositories made in temporary directories."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cairn import scope as scope_module
from cairn.errors import InvalidInput, InvalidScope
from cairn.scope import (
    current_branch,
    parse_scope,
    resolve_scope,
    scope_from_cwd,
    scope_from_remote,
    visible_scopes,
)
from gitkit import isolate_git


@pytest.fixture(autouse=True)
def clean_git_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A git that sees no user or system config (no insteadOf rewrites) and can commit."""
    isolate_git(tmp_path_factory, monkeypatch)


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=60
    )
    return proc.stdout.strip()


def make_repo(path: Path, *, origin: str | None = None, commit: bool = True) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    if origin is not None:
        git(path, "remote", "add", "origin", origin)
    if commit:
        (path / "README.md").write_text("hello\n")
        git(path, "add", "README.md")
        git(path, "commit", "-q", "-m", "first")
    return path


# --- parse_scope --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("project:github.com/acme/api", "project:github.com/acme/api"),
        ("  project:my-repo\n", "project:my-repo"),
        ("Project:Acme/API", "project:Acme/API"),
        ("USER:alice", "user:alice"),
        ("team:platform-core", "team:platform-core"),
        ("agent:claude_code", "agent:claude_code"),
        ("org:acme", "org:acme"),
        ("user:alice:work", "user:alice:work"),
        ("global", "global"),
        ("  GLOBAL ", "global"),
        ("user:zoe\u0308", "user:zo\u00eb"),  # NFC: one scope however the id was composed
        ("project:" + "a" * 200, "project:" + "a" * 200),
        ("k" * 32 + ":x", "k" * 32 + ":x"),
    ],
)
def test_parse_scope_accepts_and_canonicalises(text: str, canonical: str) -> None:
    assert parse_scope(text) == canonical


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "project",
        "project:",
        ":alice",
        "1project:x",
        "pro ject:x",
        "pro/ject:x",
        "proj\u00e9ct:x",
        "\u212aind:x",  # KELVIN SIGN lowercases to ASCII k; kinds must be typed as ASCII
        "k" * 33 + ":x",
        "project: api",
        "project:a b",
        "project:a\tb",
        "project:a\nb",
        "project:a\x00b",
        "project:a\u200bb",  # zero-width space
        "project:a\u202eb",  # right-to-left override
        "project:a\ud800b",  # lone surrogate
    ],
)
def test_parse_scope_rejects_with_guidance(text: str) -> None:
    with pytest.raises(InvalidScope) as info:
        parse_scope(text)
    message = info.value.message
    assert "`kind:id`" in message
    assert "`project:github.com/acme/api`" in message
    assert "`global`" in message


def test_parse_scope_rejects_a_global_with_an_id_and_overlong_ids() -> None:
    with pytest.raises(InvalidScope, match="write just `global`"):
        parse_scope("global:x")
    with pytest.raises(InvalidScope, match="201 characters long; the limit is 200"):
        parse_scope("project:" + "a" * 201)


def test_parse_scope_rejects_non_strings() -> None:
    with pytest.raises(InvalidScope, match="must be a string"):
        parse_scope(42)  # type: ignore[arg-type]


@given(st.text(max_size=300))
@settings(deadline=None)
def test_parse_scope_only_ever_raises_invalid_scope(text: str) -> None:
    try:
        result = parse_scope(text)
    except InvalidScope:
        return
    assert result == "global" or re.fullmatch(r"[a-z][a-z0-9_-]{0,31}:\S{1,200}", result)
    assert parse_scope(result) == result  # canonical form is a fixed point
    assert visible_scopes(result)[-1] == "global"


_ID_CHARS = st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Z"))


@given(
    kind=st.from_regex(r"[a-zA-Z][a-zA-Z0-9_-]{0,31}", fullmatch=True),
    ident=st.text(_ID_CHARS, min_size=1, max_size=150),
)
@settings(deadline=None)
def test_parse_scope_accepts_every_well_formed_scope(kind: str, ident: str) -> None:
    if kind.lower() == "global":
        return
    result = parse_scope(f" {kind}:{ident} ")
    assert result == f"{kind.lower()}:{unicodedata.normalize('NFC', ident)}"


def test_visible_scopes() -> None:
    assert visible_scopes("global") == ("global",)
    assert visible_scopes(" Project:x ") == ("project:x", "global")
    with pytest.raises(InvalidScope):
        visible_scopes("nope")


# --- remote URL normalisation -------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:Acme/API.git",
        "git@github.com:acme/api",
        "ssh://git@github.com/acme/api",
        "ssh://git@github.com:22/acme/api.git",
        "ssh://git@ssh.github.com:443/acme/api.git",
        "git+ssh://git@github.com/acme/api.git",
        "https://github.com/acme/api.git",
        "https://github.com/acme/api/",
        "https://github.com/acme/api.git/",
        "HTTPS://GitHub.COM/Acme/Api",
        "https://user:token@github.com/acme/api",
        "https://x-access-token:ghs_abc@github.com:443/acme/api.git",
        "git://github.com/acme/api.git",
        "persistent-https::https://github.com/acme/api",
    ],
)
def test_every_spelling_of_one_github_repo_is_one_scope(url: str) -> None:
    assert scope_from_remote(url) == "project:github.com/acme/api"


def test_self_hosted_paths_keep_their_case() -> None:
    upper = scope_from_remote("git@git.example.com:Team/Repo.git")
    assert upper == "project:git.example.com/Team/Repo"
    assert scope_from_remote("https://GIT.example.com:8443/Team/Repo") == upper
    assert scope_from_remote("https://git.example.com/team/repo") != upper


def test_gitlab_subgroups_and_other_hosts() -> None:
    assert (
        scope_from_remote("git@gitlab.com:Group/Sub/Proj.git")
        == "project:gitlab.com/group/sub/proj"
    )
    assert (
        scope_from_remote("https://bitbucket.org/Acme/Api.git") == "project:bitbucket.org/acme/api"
    )


def test_remote_credentials_never_reach_the_scope() -> None:
    result = scope_from_remote("https://alice:s3cr3t-T0ken@git.example.com/team/repo.git")
    assert result == "project:git.example.com/team/repo"


def test_remote_with_spaces_and_percent_is_encoded_consistently() -> None:
    spaced = scope_from_remote("git@git.example.com:team/my repo.git")
    assert spaced == "project:git.example.com/team/my%20repo"
    assert scope_from_remote("https://git.example.com/team/my%20repo") == spaced
    assert parse_scope(spaced) == spaced


def test_unusable_remotes_name_nothing() -> None:
    for url in ("", "   ", "https://github.com/", "git@github.com:", "relative/dir"):
        assert scope_from_remote(url) is None


def test_overlong_remote_is_shortened_but_unique() -> None:
    a = scope_from_remote("https://git.example.com/" + "a" * 300 + "/one")
    b = scope_from_remote("https://git.example.com/" + "a" * 300 + "/two")
    assert a is not None and b is not None and a != b
    assert parse_scope(a) == a and parse_scope(b) == b


@given(st.text(max_size=200))
@settings(deadline=None)
def test_scope_from_remote_never_crashes_and_yields_valid_scopes(url: str) -> None:
    result = scope_from_remote(url, base=Path("/srv"))
    if result is not None:
        assert parse_scope(result) == result


# --- detection from real repositories ------------------------------------------------------


def test_ssh_and_https_clones_share_a_scope(tmp_path: Path) -> None:
    ssh = make_repo(tmp_path / "one", origin="git@github.com:Acme/API.git")
    https = make_repo(tmp_path / "two", origin="https://github.com/acme/api.git")
    token = make_repo(tmp_path / "three", origin="https://bob:tok3n@github.com/acme/api")
    expected = "project:github.com/acme/api"
    assert scope_from_cwd(ssh) == scope_from_cwd(https) == scope_from_cwd(token) == expected


def test_subdirectory_has_the_root_scope(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    sub = root / "src" / "pkg"
    sub.mkdir(parents=True)
    assert scope_from_cwd(sub) == scope_from_cwd(root)
    assert scope_from_cwd(root / ".git") == scope_from_cwd(root)


def test_repo_without_remote_uses_its_common_dir(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "My Repo")
    result = scope_from_cwd(root)
    assert re.fullmatch(r"project:local/my-repo-[0-9a-f]{16}", result)
    assert parse_scope(result) == result
    other = make_repo(tmp_path / "other" / "My Repo")
    assert scope_from_cwd(other) != result


def test_repo_without_commits_has_a_scope(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "fresh", commit=False)
    assert scope_from_cwd(root).startswith("project:local/fresh-")


def test_worktrees_share_the_scope(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "main")
    git(root, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "wt"))
    assert scope_from_cwd(tmp_path / "wt") == scope_from_cwd(root)
    assert scope_from_cwd(tmp_path / "wt").startswith("project:local/main-")
    git(root, "remote", "add", "origin", "git@gitlab.com:acme/api.git")
    assert scope_from_cwd(tmp_path / "wt") == scope_from_cwd(root) == "project:gitlab.com/acme/api"


def test_plain_directory_uses_a_path_hash(tmp_path: Path) -> None:
    plain = tmp_path / "notes"
    (plain / "sub").mkdir(parents=True)
    result = scope_from_cwd(plain)
    assert re.fullmatch(r"project:path/notes-[0-9a-f]{16}", result)
    assert scope_from_cwd(str(plain)) == result
    assert scope_from_cwd(plain / "sub") != result


def test_symlinked_directory_resolves_to_its_target(tmp_path: Path) -> None:
    plain = tmp_path / "target"
    plain.mkdir()
    (tmp_path / "link").symlink_to(plain)
    assert scope_from_cwd(tmp_path / "link") == scope_from_cwd(plain)


def test_local_clone_shares_the_source_scope(tmp_path: Path) -> None:
    source = make_repo(tmp_path / "source")
    git(tmp_path, "clone", "-q", str(source), "clone")
    assert scope_from_cwd(tmp_path / "clone") == scope_from_cwd(source)
    bare = tmp_path / "hub.git"
    git(tmp_path, "clone", "-q", "--bare", str(source), str(bare))
    git(tmp_path, "clone", "-q", str(bare), "from-bare")
    assert scope_from_cwd(tmp_path / "from-bare") == scope_from_cwd(bare) == scope_from_cwd(source)


def test_origin_pointing_at_a_missing_path_still_gives_a_stable_scope(tmp_path: Path) -> None:
    a = make_repo(tmp_path / "a", origin="/nonexistent/upstream.git")
    b = make_repo(tmp_path / "b", origin="file:///nonexistent//upstream.git/")
    assert scope_from_cwd(a) == scope_from_cwd(b)
    assert scope_from_cwd(a).startswith("project:path/upstream-")


def test_origin_cycle_terminates(tmp_path: Path) -> None:
    a = make_repo(tmp_path / "a")
    b = make_repo(tmp_path / "b", origin=str(a))
    git(a, "remote", "add", "origin", str(b))
    assert parse_scope(scope_from_cwd(a)) == scope_from_cwd(a)


def test_git_dir_in_the_environment_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = make_repo(tmp_path / "mine", origin="https://github.com/acme/mine")
    other = make_repo(tmp_path / "other", origin="https://github.com/acme/other")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    assert scope_from_cwd(mine) == "project:github.com/acme/mine"


def test_without_git_a_repository_falls_back_to_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(tmp_path / "repo", origin="https://github.com/acme/api")
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    assert scope_from_cwd(root).startswith("project:path/repo-")
    assert current_branch(root) is None


def test_hanging_git_is_reported_not_guessed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow_bin = tmp_path / "slow-bin"
    slow_bin.mkdir()
    fake = slow_bin / "git"
    fake.write_text(f"#!/bin/sh\nexec {shutil.which('sleep')} 30\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(slow_bin))
    monkeypatch.setattr(scope_module, "GIT_TIMEOUT_SECONDS", 0.3)
    with pytest.raises(InvalidScope, match="pass scope explicitly"):
        scope_from_cwd(tmp_path)
    assert current_branch(tmp_path) is None


def test_missing_cwd_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="does not exist"):
        scope_from_cwd(tmp_path / "nope")
    with pytest.raises(InvalidInput, match="does not exist"):
        current_branch(tmp_path / "nope")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(InvalidInput, match="not a directory"):
        scope_from_cwd(tmp_path / "file.txt")
    with pytest.raises(InvalidInput):
        scope_from_cwd("bad\x00path")


# --- branches ----------------------------------------------------------------------------


def test_current_branch(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    assert current_branch(root) == "main"
    assert current_branch(str(root / ".git")) == "main"
    git(root, "checkout", "-q", "-b", "feature/x")
    assert current_branch(root) == "feature/x"
    git(root, "worktree", "add", "-q", "-b", "other", str(tmp_path / "wt"))
    assert current_branch(tmp_path / "wt") == "other"
    git(root, "checkout", "-q", "--detach")
    assert current_branch(root) is None


def test_current_branch_outside_a_repo_and_before_the_first_commit(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert current_branch(plain) is None
    fresh = make_repo(tmp_path / "fresh", commit=False)
    assert current_branch(fresh) == "main"


# --- resolve_scope -----------------------------------------------------------------------


def test_resolve_scope_prefers_explicit_then_cwd_then_default(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", origin="git@github.com:acme/api.git")
    default = make_repo(tmp_path / "default", origin="git@github.com:acme/default.git")
    assert resolve_scope(" User:alice ", repo, default_cwd=default) == "user:alice"
    assert resolve_scope(None, repo, default_cwd=default) == "project:github.com/acme/api"
    assert resolve_scope(None, None, default_cwd=default) == "project:github.com/acme/default"
    assert resolve_scope("global", None, default_cwd=default) == "global"
    with pytest.raises(InvalidScope):
        resolve_scope("not a scope", repo, default_cwd=default)
    with pytest.raises(InvalidScope):
        resolve_scope("", repo, default_cwd=default)
    with pytest.raises(InvalidInput):
        resolve_scope(None, tmp_path / "missing", default_cwd=default)


def test_detected_scopes_are_valid_and_stable(tmp_path: Path) -> None:
    made = [
        make_repo(tmp_path / "a", origin="git@host.example:x/y.git"),
        make_repo(tmp_path / "b b"),
        tmp_path,
    ]
    for path in made:
        first = scope_from_cwd(path)
        assert parse_scope(first) == first
        assert scope_from_cwd(os.fspath(path)) == first
