"""A git the tests can trust: a fixed identity, no user or system config, no inherited repository.

Tests that drive the real git binary call `isolate_git` from an autouse fixture, so a
developer's `~/.gitconfig` (say, an `insteadOf` rewrite) or a `GIT_DIR` left by a hook that ran
the suite can never change what a test sees.
"""

from __future__ import annotations

import pytest

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Cairn Test",
    "GIT_AUTHOR_EMAIL": "cairn@example.invalid",
    "GIT_COMMITTER_NAME": "Cairn Test",
    "GIT_COMMITTER_EMAIL": "cairn@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
_REDIRECTS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE")


def isolate_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty HOME and XDG config, the test identity, and no variable pointing git elsewhere."""
    home = tmp_path_factory.mktemp("githome")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for name, value in GIT_IDENTITY.items():
        monkeypatch.setenv(name, value)
    for name in _REDIRECTS:
        monkeypatch.delenv(name, raising=False)
