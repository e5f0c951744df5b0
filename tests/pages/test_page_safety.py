"""Pages stay inside the repository: a hostile checkout cannot make recall read outside it,
hang, exhaust memory, index what git ignores, or store a credential (issue 12)."""

from __future__ import annotations

import io
import json
import os
import secrets
import shutil
import socket
import string
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

import cairn
from cairn import Cairn, page_source, pages
from cairn.adapters import mcp_render
from cairn.config import Settings
from cairn.page_source import Found, Skipped
from cairn.records.pages import PageFile

CHILD = Path(__file__).with_name("recall_child.py")
JOIN_SECONDS = 30.0  # generous: the box is noisy; a hang is what this catches, not slowness


def git(path: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=path, check=True, capture_output=True, timeout=60)


def aws_key() -> str:
    # Built at run time, so this file itself holds nothing that looks like a credential.
    alphabet = string.ascii_uppercase + string.digits
    return "AKIA" + "".join(secrets.choice(alphabet) for _ in range(16))


def github_token() -> str:
    alphabet = string.ascii_letters + string.digits
    return "ghp" + "_" + "".join(secrets.choice(alphabet) for _ in range(36))


def sentinel() -> str:
    return "sentinel" + secrets.token_hex(6)


def store_bytes(store_location: str) -> bytes:
    """Every byte of a SQLite store on disk (main file, WAL and shared memory)."""
    return b"".join(
        Path(store_location + suffix).read_bytes()
        for suffix in ("", "-wal", "-shm")
        if Path(store_location + suffix).exists()
    )


def exported(mem: Cairn) -> str:
    out = io.StringIO()
    mem.export(out)
    return out.getvalue()


def bind_socket(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A relative name: AF_UNIX paths are limited to about 100 bytes and tmp paths are long.
    monkeypatch.chdir(path.parent)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(path.name)


def in_thread(call: Callable[[], Any]) -> Any:
    """`call()` on a daemon thread; fails the test when it has not returned after a while."""
    box: list[Any] = []
    worker = threading.Thread(target=lambda: box.append(call()), daemon=True)
    worker.start()
    worker.join(JOIN_SECONDS)
    assert not worker.is_alive(), "still blocked: a FIFO or device was opened for reading"
    return box[0]


# the hostile checkout ---------------------------------------------------------------------
@pytest.fixture
def hostile(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The repo fixture plus every trap; returns the markers that must never be stored."""
    marks = {name: sentinel() for name in ("outside", "big", "ignored", "keys", "dir")}
    keys = {"aws": aws_key(), "github": github_token()}
    outside = tmp_path / "outside"
    (outside / "linked").mkdir(parents=True)
    (outside / "credentials.md").write_text(f"# Creds\n\nzanzibar harbour {marks['outside']}\n")
    (outside / "linked" / "a.md").write_text(f"# A\n\nzanzibar harbour {marks['dir']}\n")
    docs = repo / "docs"
    (docs / "passwd.md").symlink_to(outside / "credentials.md")
    (docs / "zero.md").symlink_to("/dev/zero")
    (docs / "ext").symlink_to(outside / "linked", target_is_directory=True)
    os.mkfifo(docs / "pipe.md")
    bind_socket(docs / "sock.md", monkeypatch)
    line = f"zanzibar harbour {marks['big']}\n"
    (docs / "big.md").write_text(line * (page_source.MAX_FILE_BYTES // len(line) + 2))
    (docs / "private.md").write_text(f"# Private\n\nzanzibar harbour {marks['ignored']}\n")
    (repo / ".gitignore").write_text("docs/private.md\n")
    (docs / "keys.md").write_text(
        f"# Keys\n\nzanzibar harbour {marks['keys']}\n\naws {keys['aws']}\ngh {keys['github']}\n"
    )
    (repo / "notes" / "link.md").symlink_to("../docs/faq.md")
    return {**marks, **keys}


EXPECTED_SKIPS = {
    "ignored": 1,
    "outside_checkout": 2,
    "symlink": 1,
    "not_regular": 2,
    "too_large": 1,
    "secret": 1,
    "unreadable": 0,
}


def run_child(store_location: str, settings: Settings, repo: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(Path(cairn.__file__).parents[1])}
    proc = subprocess.run(
        [sys.executable, str(CHILD), store_location, str(settings.home), str(repo), "zanzibar"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,  # without the fix the FIFO blocks forever: this timeout fails the test
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def test_a_hostile_checkout_is_read_promptly_and_nothing_outside_is_kept(
    store_location: str, settings: Settings, repo: Path, hostile: dict[str, str]
) -> None:
    got = run_child(store_location, settings, repo)
    assert got["default"] == [] and got["pages"] == []
    assert got["install"] == ["README.md:7-7"]  # the real docs still answer
    report = got["stats"]
    assert report["skipped"] == EXPECTED_SKIPS
    assert report["files_indexed"] == 4  # README, guide, faq and design
    named = {e["path"]: e["reason"] for e in report["skipped_files"]}
    assert named == {
        "docs/big.md": "too_large",
        "docs/keys.md": "secret",
        "docs/passwd.md": "outside_checkout",
        "docs/pipe.md": "not_regular",
        "docs/sock.md": "not_regular",
        "docs/zero.md": "outside_checkout",
        "notes/link.md": "symlink",
    }
    keys_entry = next(e for e in report["skipped_files"] if e["path"] == "docs/keys.md")
    assert set(keys_entry["kinds"]) == {"AWS access key id", "GitHub token"}
    shown = json.dumps(report)
    assert hostile["aws"] not in shown and hostile["github"] not in shown
    assert str(repo.parent / "outside") not in shown  # where a link points is never told
    if not store_location.startswith("postgres"):
        raw = store_bytes(store_location)
        for value in hostile.values():
            assert value.encode() not in raw


def test_nothing_of_a_skipped_file_reaches_either_store(
    mem_repo: Cairn, repo: Path, hostile: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The traps that block or never end are removed: this test runs in the test process.
    for name in ("pipe.md", "zero.md"):
        (repo / "docs" / name).unlink()
    assert in_thread(lambda: mem_repo.recall("zanzibar harbour", kind="pages").hits) == ()
    report = in_thread(mem_repo.stats)["pages"]
    assert report["skipped"] == {**EXPECTED_SKIPS, "outside_checkout": 1, "not_regular": 1}
    dump = exported(mem_repo)
    assert "notes/link.md" not in dump  # a link is never followed, even inside the checkout
    for value in hostile.values():
        assert value not in dump


def test_a_fifo_and_dev_zero_are_never_opened_in_process(mem_repo: Cairn, repo: Path) -> None:
    os.mkfifo(repo / "docs" / "pipe.md")
    (repo / "docs" / "zero.md").symlink_to("/dev/zero")
    (repo / "docs" / "null.md").symlink_to("/dev/null")
    hits = in_thread(lambda: mem_repo.recall("install pipx").hits)
    assert [h.source_ref for h in hits if h.kind == "page"] == ["README.md:7-7"]
    report = in_thread(mem_repo.stats)["pages"]
    assert report["skipped"]["not_regular"] == 1
    assert report["skipped"]["outside_checkout"] == 2


# secrets ----------------------------------------------------------------------------------
def test_a_secret_added_to_an_indexed_file_drops_its_chunks(mem_repo: Cairn, repo: Path) -> None:
    faq = repo / "docs" / "faq.md"
    assert [h.source_ref for h in mem_repo.recall("hashing download", kind="pages").hits] == [
        "docs/faq.md:5-5"
    ]
    token = github_token()
    faq.write_text(faq.read_text() + f"\nDeploy token: {token}\n")
    os.utime(faq, ns=(1, 1))
    assert mem_repo.recall("hashing download", kind="pages").hits == ()
    report = mem_repo.stats()["pages"]
    assert report["skipped"]["secret"] == 1
    assert report["skipped_files"] == [
        {"path": "docs/faq.md", "reason": "secret", "kinds": ["GitHub token"]}
    ]
    assert token not in exported(mem_repo) and token not in json.dumps(report)
    assert all(p.path != "docs/faq.md" for p in mem_repo.store.pages_in(_scope(mem_repo)))
    lines = mcp_render.stats(mem_repo.stats())
    assert "  skipped docs/faq.md: secret (GitHub token)" in lines and token not in lines


def test_a_file_indexed_before_the_checks_is_read_again(mem_repo: Cairn, repo: Path) -> None:
    keys = repo / "docs" / "keys.md"
    key = aws_key()
    keys.write_text(f"# Keys\n\nThe staging key is {key}.\n")
    info = keys.stat()
    scope = _scope(mem_repo)
    # What an older cairn stored: the same mtime and size, a digest without the CHECKED mark.
    legacy = PageFile("docs/keys.md", info.st_mtime_ns, info.st_size, "0" * 64)
    mem_repo.store.sync_page_file(scope, legacy, pages.chunk_file("docs/keys.md", keys.read_text()))
    assert "docs/keys.md" in mem_repo.store.page_files(scope)
    assert mem_repo.recall("staging key", kind="pages").hits == ()
    assert "docs/keys.md" not in mem_repo.store.page_files(scope)
    assert key not in exported(mem_repo)


def test_an_unchanged_secret_file_is_not_scanned_again(
    mem_repo: Cairn, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "docs" / "keys.md").write_text(f"# Keys\n\nkey {aws_key()}\n")
    mem_repo.recall("key", kind="pages")
    scans: list[str] = []
    real = pages.find_secrets
    monkeypatch.setattr(pages, "find_secrets", lambda text: scans.append(text) or real(text))
    assert mem_repo.stats()["pages"]["skipped"]["secret"] == 1
    assert scans == []  # remembered by stat identity, still reported


# git ignore and listing -------------------------------------------------------------------
def test_gitignored_docs_are_not_indexed_even_when_tracked_files_match(
    mem_repo: Cairn, repo: Path
) -> None:
    (repo / ".gitignore").write_text("*.md\n!README.md\n")
    (repo / "docs" / "new.md").write_text("# New\n\nzanzibar harbour notes.\n")
    # Tracked files stay pages (git tracks them despite the pattern); untracked ones do not.
    assert mem_repo.recall("zanzibar harbour", kind="pages").hits == ()
    assert mem_repo.recall("hashing download", kind="pages").hits
    assert mem_repo.stats()["pages"]["skipped"]["ignored"] == 1


def test_odd_file_names_do_not_break_the_ignore_check(mem_repo: Cairn, repo: Path) -> None:
    (repo / "docs" / ":!odd.md").write_text("# Odd\n\nzanzibar harbour odd.\n")
    (repo / "docs" / "-n.md").write_text("# Dash\n\nzanzibar harbour dash.\n")
    found = {h.source_ref.rsplit(":", 1)[0] for h in mem_repo.recall("zanzibar", kind="pages").hits}
    assert found == {"docs/-n.md"} | {"docs/:!odd.md"}
    assert mem_repo.stats()["pages"]["listing_failed"] is False


def test_nested_repositories_and_symlinked_directories_are_not_entered(repo: Path) -> None:
    nested = repo / "libs" / "other"
    nested.mkdir(parents=True)
    (nested / "README.md").write_text("# Other\n")
    git(nested, "init", "-q")
    (repo / "docs" / "loop").symlink_to(repo, target_is_directory=True)
    listed = page_source.list_docs(repo).files
    assert "libs/other/README.md" not in listed
    assert not any(path.startswith("docs/loop/") for path in listed)


def test_when_git_cannot_say_what_is_ignored_nothing_is_listed(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(repo / "no-bin-here"))
    listing = page_source.list_docs(repo)
    assert listing == page_source.Listing((), 0, failed=True)


# reading one file -------------------------------------------------------------------------
@pytest.fixture
def doc(repo: Path) -> Iterator[tuple[str, Path, Found]]:
    root = os.path.realpath(repo)
    found = page_source.examine(root, "docs/faq.md")
    assert isinstance(found, Found)
    yield root, repo / "docs" / "faq.md", found


def test_a_fifo_swapped_in_after_the_check_is_refused_without_blocking(
    doc: tuple[str, Path, Found],
) -> None:
    root, path, found = doc
    path.unlink()
    os.mkfifo(path)
    assert in_thread(lambda: page_source.read_bounded(root, found)) == Skipped(
        "docs/faq.md", "not_regular"
    )


def test_a_symlink_swapped_in_after_the_check_is_refused(
    doc: tuple[str, Path, Found], tmp_path: Path
) -> None:
    root, path, found = doc
    outside = tmp_path / "elsewhere.md"
    outside.write_text("outside\n")
    path.unlink()
    path.symlink_to(outside)
    assert page_source.read_bounded(root, found) == Skipped("docs/faq.md", "unreadable")


def test_a_directory_swapped_for_a_symlink_is_refused(
    doc: tuple[str, Path, Found], tmp_path: Path
) -> None:
    root, path, found = doc
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "faq.md").write_text("outside\n")
    path.parent.rename(tmp_path / "old-docs")
    path.parent.symlink_to(elsewhere, target_is_directory=True)
    assert page_source.read_bounded(root, found) == Skipped("docs/faq.md", "unreadable")


def test_a_file_that_grew_past_the_cap_is_not_read(doc: tuple[str, Path, Found]) -> None:
    root, path, found = doc
    with path.open("a") as out:
        out.write("x" * page_source.MAX_FILE_BYTES)
    assert page_source.read_bounded(root, found) == Skipped("docs/faq.md", "too_large")


def test_reads_stop_at_the_cap(
    doc: tuple[str, Path, Found], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file whose size says small but whose reads go on (as a growing file's do) is cut off
    # after MAX_FILE_BYTES + 1 bytes instead of read to its end.
    root, _, found = doc
    asked: list[int] = []

    def endless(fd: int, n: int) -> bytes:
        asked.append(n)
        return b"x" * n

    monkeypatch.setattr(page_source.os, "read", endless)
    assert page_source.read_bounded(root, found) == Skipped("docs/faq.md", "too_large")
    assert sum(asked) == page_source.MAX_FILE_BYTES + 1


def test_a_link_to_an_ignored_file_inside_the_checkout_is_not_followed(
    mem_repo: Cairn, repo: Path
) -> None:
    # A committed link must not turn the user's own ignored .env into a page.
    token = sentinel()
    (repo / ".gitignore").write_text(".env\n")
    (repo / ".env").write_text(f"# Env\n\nzanzibar harbour {token}\n")
    (repo / "docs" / "env.md").symlink_to("../.env")
    assert mem_repo.recall("zanzibar harbour", kind="pages").hits == ()
    report = mem_repo.stats()["pages"]
    assert {"path": "docs/env.md", "reason": "symlink"} in report["skipped_files"]
    assert token not in exported(mem_repo)


def test_a_directory_swapped_for_a_link_after_the_walk_is_caught_by_examine(
    repo: Path, tmp_path: Path
) -> None:
    root = os.path.realpath(repo)
    (repo / "docs").rename(tmp_path / "old-docs")
    (repo / "docs").symlink_to(repo / "notes", target_is_directory=True)
    (repo / "notes" / "faq.md").write_text("# Not the FAQ\n")
    assert page_source.examine(root, "docs/faq.md") == Skipped("docs/faq.md", "symlink")
    (repo / "docs").unlink()
    (repo / "docs").symlink_to(tmp_path / "old-docs", target_is_directory=True)
    assert page_source.examine(root, "docs/faq.md") == Skipped("docs/faq.md", "outside_checkout")


def test_the_cli_prints_what_pages_skipped(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from cairn.adapters.cli import main

    (repo / "docs" / "zero.md").symlink_to("/dev/zero")
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAIRN_EMBEDDER", "hashing")
    result = CliRunner().invoke(main, ["stats", "--cwd", str(repo)])
    assert result.exit_code == 0, result.output
    assert "pages: files=4, chunks=" in result.output
    assert "skipped: outside_checkout=1" in result.output
    assert "  skipped docs/zero.md: outside_checkout" in result.output


def _scope(mem: Cairn) -> str:
    return mem.scope_for(None, None)


NAME_CHARS = string.ascii_letters + string.digits + " :!*?[]{}\\#'\"-_.~^$%&@=+,;\n\t"


@hypothesis_settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    names=st.sets(
        # Not starting "ign": those are the names the .gitignore below ignores.
        st.text(NAME_CHARS, min_size=1, max_size=12).filter(lambda n: not n.startswith("ign")),
        min_size=1,
        max_size=6,
    )
)
def test_any_file_name_is_listed_or_ignored_as_git_says(
    repo: Path, names: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(page_source, "LIST_TTL_SECONDS", 0.0)
    docs = repo / "hyp"
    shutil.rmtree(docs, ignore_errors=True)
    docs.mkdir()
    (docs / ".gitignore").write_text("ign-*\n")
    for name in names:
        (docs / f"{name}.md").write_text("# Name\n\nbody\n")
        (docs / f"ign-{name}.md").write_text("# Ignored\n\nbody\n")
    listing = page_source.list_docs(repo)
    assert not listing.failed
    assert {p for p in listing.files if p.startswith("hyp/")} == {f"hyp/{n}.md" for n in names}
    assert listing.ignored == len(names)
