"""What every operation of the core needs: the store, settings, clock and (lazily) the embedder.

The embedder is built on first use, so commands that never embed (`show`, `export`, `stats`)
never pay for loading a model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cairn.config import Settings
from cairn.embeddings.base import Embedder
from cairn.store.base import Store
from cairn.timeutil import Clock


@dataclass
class Context:
    store: Store
    settings: Settings
    clock: Clock
    embedder_factory: Callable[[], Embedder]
    integration: str
    integration_version: str | None = None
    _embedder: Embedder | None = field(default=None, init=False)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self.embedder_factory()
        return self._embedder
