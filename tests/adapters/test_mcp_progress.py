"""A long tool call tells a client that sent a progress token that it is still working."""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp import Client

from cairn.adapters.mcp import Binding, build_server, with_progress
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.errors import InvalidInput
from cairn.store import open_store
from clocks import FakeClock

SCOPE = "project:example/progress"
BATCH = [
    {"content": f"Service number {i} deploys from the release branch on Tuesdays.", "type": "fact"}
    for i in range(40)
]


def binding(tmp_path: Path, every: float) -> Binding:
    return Binding(
        open_store(str(tmp_path / "memory.db")),
        Settings(home=tmp_path / "home", embedder="hashing"),
        embedder=HashingEmbedder(),
        clock=FakeClock(),
        progress_every=every,
    )


def test_a_long_call_sends_progress_to_a_client_that_asked(tmp_path: Path) -> None:
    # Every 1 ms: any batch of forty writes outlasts that many times over.
    served = binding(tmp_path, 0.001)
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async def scenario() -> None:
        async with Client(build_server(served, "all"), mode="legacy") as client:
            result = await client.call_tool(
                "remember", {"memories": BATCH, "scope": SCOPE}, progress_callback=on_progress
            )
            assert not result.is_error, result

    anyio.run(scenario)
    assert served.store.count_rows("memories") == len(BATCH)
    assert seen, "no progress notification reached the client"
    progress = [p for p, _, _ in seen]
    assert progress == sorted(progress) and progress[0] >= 1
    assert all(message and message.startswith("working") for _, _, message in seen)


def test_without_a_token_the_call_answers_as_before(tmp_path: Path) -> None:
    served = binding(tmp_path, 0.001)

    async def scenario() -> None:
        async with Client(build_server(served, "all"), mode="legacy") as client:
            result = await client.call_tool("remember", {"memories": BATCH, "scope": SCOPE})
            assert not result.is_error, result
            failed = await client.call_tool("recall", {"query": " ", "scope": SCOPE})
            assert failed.is_error  # an error inside the worker still reaches the client

    anyio.run(scenario)
    assert served.store.count_rows("memories") == len(BATCH)


def test_the_worker_error_is_raised_unchanged() -> None:
    def fail() -> None:
        raise InvalidInput("bad argument")

    class Silent:
        async def report_progress(self, *_: object) -> None:
            raise AssertionError("no progress expected before the failure")

    async def scenario() -> None:
        try:
            await with_progress(Silent(), fail, 60.0)  # type: ignore[arg-type]
        except InvalidInput as exc:
            assert exc.message == "bad argument"
        else:
            raise AssertionError("the worker's error was swallowed")

    anyio.run(scenario)
