"""Every failure of the installed `cairn` command is one `error:` line and exit status 2.

Each case runs the real console script in a subprocess, as a user would, against a real file
in the state the case names. Permission cases drop every capability when the tests run as
root (root ignores permission bits otherwise); the full-disk case mounts a tiny tmpfs in a
private mount namespace, and is skipped where the machine does not allow one.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn import Cairn
from cairn.adapters.cli import main
from cairn.config import Settings
from damagekit import checkpoint, damage_page_holding, memory_row_marker, numbered_facts

SCRIPT = Path(sys.executable).parent / "cairn"
SCOPE = "project:example/failures"


def _env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "CAIRN_HOME": str(tmp_path / "home"), "CAIRN_EMBEDDER": "hashing"}
    env.pop("CAIRN_URL", None)
    return env


def _unprivileged() -> list[str]:
    """A prefix that makes permission bits bind: none for a normal user; for root, setpriv
    dropping every capability (uid 0 without CAP_DAC_OVERRIDE obeys the owner's bits)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: permission bits cannot be enforced")
    return ["setpriv", "--bounding-set=-all", "--inh-caps=-all"]


def cairn(
    tmp_path: Path,
    *args: str | bytes,
    prefix: Sequence[str] = (),
    stdin: bytes = b"",
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [*prefix, str(SCRIPT), *args],
        env=_env(tmp_path),
        input=stdin,
        capture_output=True,
        check=False,
        cwd=tmp_path,
    )
    return subprocess.CompletedProcess(
        proc.args,
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def assert_one_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def make_store(path: Path, count: int = 1) -> Path:
    settings = Settings(home=path.parent, embedder="hashing")
    with Cairn.open(str(path), settings=settings) as mem:
        if count == 1:
            mem.remember("The CI runs Python 3.11.", type="fact", scope=SCOPE)
        else:
            mem.remember_many(numbered_facts(count), dedup=False)
    checkpoint(path)
    return path


# corrupt and foreign files -----------------------------------------------------------------
def test_truncated_store(tmp_path: Path) -> None:
    store = make_store(tmp_path / "whole.db")
    cut = tmp_path / "cut.db"
    cut.write_bytes(store.read_bytes()[:1500])
    assert_one_error(cairn(tmp_path, "--store", str(cut), "stats"), "damaged", "cairn check")


def test_random_bytes(tmp_path: Path) -> None:
    noise = tmp_path / "noise.db"
    noise.write_bytes(bytes((i * 7919 + 13) % 256 for i in range(64 * 1024)))
    assert_one_error(cairn(tmp_path, "--store", str(noise), "stats"), "not a SQLite database")


def test_foreign_sqlite_file_is_left_alone(tmp_path: Path) -> None:
    foreign = tmp_path / "browser.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE cookies (host TEXT, value TEXT)")
    conn.commit()
    conn.close()
    before = foreign.read_bytes()
    proc = cairn(tmp_path, "--store", str(foreign), "remember", "x y z", "--type", "fact")
    assert_one_error(proc, "another application", "cookies")
    assert foreign.read_bytes() == before


def test_damaged_pages(tmp_path: Path) -> None:
    store = make_store(tmp_path / "m.db", count=300)
    damage_page_holding(store, memory_row_marker(150))
    proc = cairn(tmp_path, "--store", str(store), "recall", "port", "--scope", "global")
    assert_one_error(proc, "damaged")


# permissions -------------------------------------------------------------------------------
def test_read_only_store_file(tmp_path: Path) -> None:
    store = make_store(tmp_path / "m.db")
    store.chmod(0o444)
    args = ("--store", str(store), "remember", "A new fact.", "--type", "fact", "--scope", SCOPE)
    assert_one_error(cairn(tmp_path, *args, prefix=_unprivileged()), "read-only")


def test_read_only_directory(tmp_path: Path) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    store = make_store(folder / "m.db")
    for extra in folder.glob("m.db-*"):
        extra.unlink()
    folder.chmod(0o555)
    try:
        proc = cairn(tmp_path, "--store", str(store), "stats", prefix=_unprivileged())
    finally:
        folder.chmod(0o755)
    assert_one_error(proc, "read-only")


def test_unwritable_parent_directory(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    env_home = locked / "home"
    proc = subprocess.run(
        [*_unprivileged(), str(SCRIPT), "stats"],
        env={**_env(tmp_path), "CAIRN_HOME": str(env_home)},
        capture_output=True,
        text=True,
        check=False,
    )
    locked.chmod(0o755)
    assert_one_error(proc, "cannot create the directory")
    assert not env_home.exists()


def test_store_in_missing_directory_is_not_created(tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "m.db"
    assert_one_error(cairn(tmp_path, "--store", str(target), "stats"), "does not exist")
    assert not (tmp_path / "no").exists()


def _private_tmpfs() -> list[str]:
    for prefix in (["unshare", "-m"], ["unshare", "-rm"]):
        if shutil.which(prefix[0]) is None:
            continue
        probe = subprocess.run(
            [*prefix, "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt 2>/dev/null"],
            capture_output=True,
            check=False,
        )
        if probe.returncode == 0:
            return prefix
    pytest.skip("this machine cannot mount a private tmpfs (needs root or user namespaces)")


def test_disk_full(tmp_path: Path) -> None:
    mount = tmp_path / "tiny"
    mount.mkdir()
    store = mount / "m.db"
    big = " ".join(f"word{i}" for i in range(1_500))
    script = (
        f"mount -t tmpfs -o size=512k tmpfs {mount} && "
        f"{SCRIPT} --store {store} remember 'first fact' --type fact --scope global && "
        f"(dd if=/dev/zero of={mount}/fill bs=4k 2>/dev/null; true) && "
        f'{SCRIPT} --store {store} remember "$BIG" --type fact --scope global'
    )
    proc = subprocess.run(
        [*_private_tmpfs(), "sh", "-c", script],
        env={**_env(tmp_path), "BIG": big},
        capture_output=True,
        text=True,
        check=False,
    )
    assert_one_error(proc, "full", "Free some space")
    assert "no transaction is active" not in proc.stderr


# hostile arguments -------------------------------------------------------------------------
def test_invalid_utf8_argument(tmp_path: Path) -> None:
    proc = cairn(tmp_path, "recall", b"caf\xff", "--scope", SCOPE)
    assert_one_error(proc, "not valid UTF-8", "0xff")


def test_invalid_utf8_on_stdin(tmp_path: Path) -> None:
    proc = cairn(tmp_path, "remember", "-", "--type", "fact", "--scope", SCOPE, stdin=b"caf\xff")
    assert_one_error(proc, "content is not valid Unicode")


def test_deeply_nested_json_option(tmp_path: Path) -> None:
    proc = cairn(tmp_path, "lessons", "--tool", "Edit", "--args", "[" * 100_000)
    assert_one_error(proc, "--args", "nests too deeply")


def test_port_out_of_range(tmp_path: Path) -> None:
    assert_one_error(cairn(tmp_path, "serve", "--port", "99999"), "--port", "out of range")


def test_show_unknown_ref(tmp_path: Path) -> None:
    assert_one_error(cairn(tmp_path, "show", "mem_999999", "--scope", SCOPE), "mem_999999")


def test_purge_without_yes_and_no_terminal_refuses(tmp_path: Path) -> None:
    store = make_store(tmp_path / "m.db")
    proc = cairn(tmp_path, "--store", str(store), "purge", "mem_1", "--scope", SCOPE, stdin=b"y\n")
    assert_one_error(proc, "--yes")
    settings = Settings(home=tmp_path, embedder="hashing")
    with Cairn.open(str(store), settings=settings) as mem:
        record = mem.get_memory(["mem_1"], scope=SCOPE).records[0]
    assert record.memory.content == "The CI runs Python 3.11." and record.memory.status == "active"


# export ------------------------------------------------------------------------------------
def test_export_to_missing_directory(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "out.jsonl"
    assert_one_error(cairn(tmp_path, "export", str(target)), "does not exist")
    assert not target.parent.exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_export_to_full_device(tmp_path: Path) -> None:
    make_store(tmp_path / "home" / "memory.db")
    assert_one_error(cairn(tmp_path, "export", "/dev/full"), "full")
    assert Path("/dev/full").is_char_device()


def _export(tmp_path: Path, target: Path | str) -> subprocess.CompletedProcess[str]:
    return cairn(tmp_path, "export", str(target))


def _header(path: Path) -> dict[str, object]:
    header: dict[str, object] = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    return header


def test_export_never_overwrites_a_file_that_is_not_an_export(tmp_path: Path) -> None:
    """Found by fuzzing `cairn export ../../../etc/passwd` as root: the file was replaced."""
    make_store(tmp_path / "home" / "memory.db")
    precious = tmp_path / "passwd"
    precious.write_bytes(b"root:x:0:0:root:/root:/bin/bash\n")
    assert_one_error(_export(tmp_path, precious), "not a cairn export", "choose another path")
    assert precious.read_bytes() == b"root:x:0:0:root:/root:/bin/bash\n"
    link = tmp_path / "link.jsonl"
    link.symlink_to(precious)
    assert_one_error(_export(tmp_path, link), "not a cairn export")
    assert precious.read_bytes() == b"root:x:0:0:root:/root:/bin/bash\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "link.jsonl", "passwd"]


def test_export_replaces_an_earlier_export_an_empty_file_and_through_a_link(
    tmp_path: Path,
) -> None:
    make_store(tmp_path / "home" / "memory.db")
    empty = tmp_path / "empty.jsonl"
    empty.touch()
    assert _export(tmp_path, empty).returncode == 0
    assert _header(empty)["format"] == "cairn-export"
    first = empty.read_bytes()
    assert _export(tmp_path, empty).returncode == 0  # an earlier export: replaced
    assert empty.read_bytes() == first
    assert empty.stat().st_mode & 0o077 == 0  # the whole store: its owner's eyes only
    link = tmp_path / "latest.jsonl"
    link.symlink_to(empty)
    assert _export(tmp_path, link).returncode == 0
    assert link.is_symlink() and empty.read_bytes() == first
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


def test_a_failed_export_leaves_the_earlier_one(tmp_path: Path) -> None:
    store = make_store(tmp_path / "home" / "memory.db")
    earlier = tmp_path / "backup.jsonl"
    assert _export(tmp_path, earlier).returncode == 0
    kept = earlier.read_bytes()
    store.write_bytes(b"not a database, and not one that can be salvaged" * 100)
    proc = _export(tmp_path, earlier)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert earlier.read_bytes() == kept
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


def test_export_streams_into_a_pipe(tmp_path: Path) -> None:
    make_store(tmp_path / "home" / "memory.db")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    proc = _export(tmp_path, fifo)
    reader.join(timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(received[0].splitlines()[0])["format"] == "cairn-export"
    assert fifo.is_fifo()


def test_export_to_a_folder(tmp_path: Path) -> None:
    make_store(tmp_path / "home" / "memory.db")
    proc = _export(tmp_path, tmp_path / "home")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


# the last resort -----------------------------------------------------------------------------
def test_unexpected_exception_is_one_internal_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug (here: stats raising a bare RuntimeError) still reaches the user as one line."""

    def broken(self: Cairn, **_: object) -> None:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAIRN_EMBEDDER", "hashing")
    monkeypatch.setattr(Cairn, "stats", broken)
    result = CliRunner().invoke(main, ["stats"])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert result.stderr == (
        "error: internal error (RuntimeError): boom; please report it, with the command you ran.\n"
    )
