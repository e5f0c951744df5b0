"""`cairn-hook`'s light side: what importing it costs, where it looks for its server, and
that misuse still exits 0 with empty or valid output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cairn.adapters.hook_client import MAX_SOCKET_PATH, runtime_paths, store_location
from cairn.config import Settings

CAIRN_HOOK = str(Path(sys.executable).with_name("cairn-hook"))


def test_importing_the_client_imports_no_core() -> None:
    code = (
        "import sys, cairn.adapters.hook_client; "
        "print(sorted(m for m in sys.modules if m.startswith('cairn') or m in "
        "('numpy', 'sqlite3', 'click', 'json', 'typing', 'subprocess')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(["cairn", "cairn.adapters", "cairn.adapters.hook_client"])


def test_the_package_resolves_public_names_on_first_use() -> None:
    code = (
        "import sys, cairn; before = 'cairn.core' in sys.modules; from cairn import Cairn; "
        "print(before, 'cairn.core' in sys.modules, Cairn.__name__, 'Cairn' in dir(cairn))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "Cairn", "True"]
    import cairn

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        cairn.Nope  # noqa: B018


@pytest.mark.parametrize(
    "env",
    [
        {"CAIRN_HOME": "/srv/cairn"},
        {"XDG_DATA_HOME": "/data/xdg", "HOME": "/home/dev"},
        {"HOME": "/home/dev"},
        {"CAIRN_URL": "postgresql://db.example/cairn", "HOME": "/home/dev"},
    ],
)
def test_the_store_is_the_one_settings_name(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", env.get("HOME", "/root"))
    assert store_location(env, None) == Settings.from_env(env).store_location


def test_socket_paths_per_store_and_configuration(tmp_path: Path) -> None:
    env = {"CAIRN_HOME": str(tmp_path / "home")}
    first = runtime_paths(env, None)
    assert first.socket == str(tmp_path / "home" / "hooks" / f"{first.key}.sock")
    assert runtime_paths(env, None).key == first.key
    assert runtime_paths({**env, "CAIRN_EMBEDDER": "hashing"}, None).key != first.key
    assert runtime_paths(env, str(tmp_path / "other.db")).key != first.key
    relative = runtime_paths(env, "rel.db")
    assert relative.location == os.path.abspath("rel.db")
    deep = {"CAIRN_HOME": str(tmp_path / ("x" * 120)), "TMPDIR": str(tmp_path)}
    moved = runtime_paths(deep, None)
    assert len(moved.socket) <= MAX_SOCKET_PATH + 30
    assert moved.folder == str(tmp_path / f"cairn-{os.getuid()}")


def test_misuse_exits_zero_with_empty_or_valid_output(tmp_path: Path) -> None:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")},
           "CAIRN_HOME": str(tmp_path / "home")}  # fmt: skip
    for args in ([], ["codex"], ["claude-code", "--store"]):
        proc = subprocess.run([CAIRN_HOOK, *args], input="{}", capture_output=True, text=True,
                              env=env, timeout=60, check=False)  # fmt: skip
        assert (proc.returncode, proc.stdout) == (0, ""), args
        assert "usage: cairn-hook" in proc.stderr
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # someone else could plant a socket here: not used
    env["CAIRN_HOME"] = str(tmp_path / "home")
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "hooks").symlink_to(shared)
    proc = subprocess.run([CAIRN_HOOK, "stdin"], input='{"tool": "Bash"}', capture_output=True,
                          text=True, env=env, timeout=60, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr  # answered the slow way, in-process
    assert json.loads(proc.stdout)["lessons"] == [] and list(shared.iterdir()) == []
