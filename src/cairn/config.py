"""Typed settings. The only module that reads the environment (prefix `CAIRN_`).

Everything else receives a `Settings` value, so tests build one directly and nothing depends
on the process environment by accident.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from cairn.errors import InvalidInput

_LOGIN = re.compile(r"^[A-Za-z0-9][\w.@+-]{0,63}$")


def _default_home(env: Mapping[str, str]) -> Path:
    xdg = env.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "share"
    return base / "cairn"


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """The machine's cache for prepared models: `$CAIRN_CACHE_DIR`, else `$XDG_CACHE_HOME/cairn`.

    One per machine, shared by every store: a model exported once serves all homes.
    """
    env = os.environ if env is None else env
    if env.get("CAIRN_CACHE_DIR"):
        return Path(env["CAIRN_CACHE_DIR"])
    xdg = env.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "cairn"


@dataclass(frozen=True, slots=True)
class Settings:
    home: Path
    url: str | None = None
    embedder: str = "local"  # local | hashing | ollama
    ollama_url: str = "http://127.0.0.1:11434"
    ollama_model: str = "nomic-embed-text"
    ollama_fallback: str = "local"  # when Ollama cannot be reached: local | hashing | none
    dedup_threshold: float = 0.82
    max_content_bytes: int = 32 * 1024
    busy_timeout_ms: int = 30_000
    max_recall_items: int = 20
    max_episode_lines: int = 20
    max_history: int = 4_000
    event_payload_chars: int = 4_000
    integration: str = "python"
    brief_budget_chars: int = 8_000  # activate's brief, about 2,000 tokens
    max_evidence_records: int = 20  # source records one recall returns at most
    skills_dir: str = ".claude/skills"  # where tidy writes skill files, under the repository
    # `cairn serve`: off loopback only with a token; CORS only for the listed origins.
    http_host: str = "127.0.0.1"
    http_port: int = 8765
    http_token: str | None = None
    http_cors_origins: str = ""  # comma-separated
    # Who `cairn confirm` confirms as (a person, never an agent client): CAIRN_PERSON, else the
    # login name; empty means an unnamed person.
    person: str = ""
    # Background consolidation runs at most once per this many seconds (0: never on writes).
    consolidate_interval: int = 86_400
    # Where models that must be prepared on this machine go (see `default_cache_dir`); None
    # means the default, so a `Settings` built in code needs no environment.
    cache_dir: Path | None = None

    @property
    def store_location(self) -> str:
        """Where the store lives: an explicit URL, else `memory.db` under `home`."""
        return self.url or str(self.home / "memory.db")

    @property
    def model_cache_dir(self) -> Path:
        return self.cache_dir or default_cache_dir()

    def with_overrides(self, **changes: Any) -> Settings:
        return replace(self, **changes)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        home = Path(env["CAIRN_HOME"]) if env.get("CAIRN_HOME") else _default_home(env)
        values: dict[str, Any] = {"home": home, "cache_dir": default_cache_dir(env)}
        for f in fields(cls):
            if f.name in values:
                continue
            raw = env.get(f"CAIRN_{f.name.upper()}")
            if raw is None or raw == "":
                continue
            values[f.name] = _coerce(f.name, raw, cls.__dataclass_fields__[f.name].default)
        login = env.get("USER") or env.get("LOGNAME") or ""
        values.setdefault("person", login if _LOGIN.match(login) else "")
        if values.get("consolidate_interval", 0) < 0:
            raise InvalidInput(
                "CAIRN_CONSOLIDATE_INTERVAL is negative; give seconds between consolidations "
                "(86400 is daily, 0 never runs it on writes)."
            )
        return cls(**values)


def _coerce(name: str, raw: str, default: Any) -> Any:
    if isinstance(default, bool):
        return raw.lower() in {"1", "true", "yes", "on"}
    if isinstance(default, int):
        try:
            return int(raw)
        except ValueError:
            raise InvalidInput(
                f"CAIRN_{name.upper()}={raw!r} is not a whole number; set it to one, e.g. "
                f"CAIRN_{name.upper()}={default}."
            ) from None
    if isinstance(default, float):
        try:
            return float(raw)
        except ValueError:
            raise InvalidInput(
                f"CAIRN_{name.upper()}={raw!r} is not a number; set it to one, e.g. "
                f"CAIRN_{name.upper()}={default}."
            ) from None
    return raw
