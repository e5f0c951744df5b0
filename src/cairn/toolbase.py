"""What every group of tools on the `Cairn` facade shares.

The facade is assembled from small mixins (memories in `core.py`, sessions, code awareness,
lessons, ...), each in its own module, so no single file grows into a god object. They all
reach the same `Context` and resolve scopes the same way.
"""

from __future__ import annotations

from pathlib import Path

from cairn.consolidate import Background
from cairn.context import Context
from cairn.scope import resolve_scope


class ToolBase:
    _ctx: Context
    _cwd: Path | None
    _background: Background

    def _wrote(self) -> None:
        """A write happened: start consolidation in the background when it is due."""
        self._background.after_write()

    def _default_cwd(self) -> Path:
        return self._cwd or Path.cwd()

    def scope_for(self, scope: str | None = None, cwd: str | Path | None = None) -> str:
        """The scope a call with these arguments would use."""
        return resolve_scope(scope, cwd, default_cwd=self._default_cwd())
