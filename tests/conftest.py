"""Shared fixtures: real stores in temporary directories, a deterministic embedder, a clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from cairn import Cairn
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from clocks import FakeClock
from postgres_fixture import postgres_database_url, postgres_url

__all__ = ["FakeClock", "postgres_database_url", "postgres_url"]  # fixtures, re-exported for pytest

# Hypothesis' default 200 ms deadline per example, and its too-slow health check, are wall-clock
# assertions: on a shared 2-core box under load an example of a correct property can take longer
# and the test fails at random (seen here: a vector property failed once and its seed did not
# reproduce). Speed is measured by `cairn bench`, never asserted in tests.
hypothesis_settings.register_profile(
    "cairn", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.load_profile("cairn")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # No background consolidation: tests that move the clock by days would start one beside
    # their own assertions (tests/lifecycle/test_consolidate.py turns it on).
    return Settings(home=tmp_path / "home", embedder="hashing", consolidate_interval=0)


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Every test that opens a Cairn through this fixture runs on both backends: the contract
    suite is the whole test suite. PostgreSQL gets a fresh database per test."""
    if request.param == "sqlite":
        return str(tmp_path / "memory.db")
    url: str = request.getfixturevalue("postgres_database_url")
    return url


@pytest.fixture
def mem(
    store_location: str,
    settings: Settings,
    embedder: HashingEmbedder,
    clock: FakeClock,
    tmp_path: Path,
) -> Iterator[Cairn]:
    with Cairn.open(
        store_location, settings=settings, embedder=embedder, clock=clock, cwd=tmp_path
    ) as opened:
        yield opened
