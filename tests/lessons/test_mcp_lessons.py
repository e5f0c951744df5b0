"""`lessons` and `confirm` as MCP tools, through the official SDK client in-process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from lessonkit import Repo
from mcp import Client

from cairn.adapters.mcp import Binding, build_server
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.store import open_store

OLD_CHARGE = '    key = customer.id + ":" + str(amount)'


@pytest.fixture
def binding(
    settings: Settings, embedder: HashingEmbedder, clock: Any, tmp_path: Path, repo: Repo
) -> Iterator[Binding]:
    made = Binding(open_store(str(tmp_path / "mcp.db")), settings, embedder=embedder,
                   clock=clock, cwd=repo.path)  # fmt: skip
    yield made
    made.close()


def drive(binding: Binding, body: Any, name: str) -> None:
    async def session() -> None:
        async with Client(
            build_server(binding, "all"), mode="legacy",
            client_info=types.Implementation(name=name, version="1.0"),
        ) as client:  # fmt: skip
            await body(client)

    anyio.run(session)


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def test_lessons_and_confirm_both_write(binding: Binding) -> None:
    async def body(client: Client) -> None:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        lessons, confirm = listed["lessons"], listed["confirm"]
        # lessons remembers what it said in a session (repeats are left out), so it writes.
        assert lessons.annotations is not None and not lessons.annotations.read_only_hint
        assert confirm.annotations is not None and not confirm.annotations.read_only_hint
        assert confirm.annotations.destructive_hint is False
        assert {"tool", "args", "cwd", "session_id", "limit"} <= set(
            lessons.input_schema["properties"]
        )
        assert lessons.input_schema["required"] == ["tool"]

    drive(binding, body, "claude-code")


def test_lessons_then_confirm_over_mcp(binding: Binding, repo: Repo) -> None:
    writer = binding.cairn_for("writer", None)
    ref = writer.remember("charge() must stay idempotent", type="warning",
                          source_ref="src/billing.py:8-11", cwd=repo.path).memory_id  # fmt: skip

    async def body(client: Client) -> None:
        args = {"file_path": repo.file("src/billing.py"), "old_string": OLD_CHARGE,
                "new_string": "    key = None"}  # fmt: skip
        result = await client.call_tool(
            "lessons", {"tool": "Edit", "args": args, "cwd": str(repo.path), "session_id": "c1"}
        )
        assert not result.is_error, text(result)
        data = result.structured_content
        assert data is not None and data["lessons"][0]["ref"] == ref
        assert data["lessons"][0]["question"] and f"confirm('{ref}')" in text(result)
        again = await client.call_tool(
            "lessons", {"tool": "Edit", "args": args, "cwd": str(repo.path), "session_id": "c1"}
        )
        assert text(again) == "nothing worth saying before this Edit call"
        done = await client.call_tool("confirm", {"ref": ref, "cwd": str(repo.path)})
        assert not done.is_error, text(done)
        assert done.structured_content is not None
        assert done.structured_content["outcome"] == "confirmation"
        assert text(done).startswith(f"{ref} confirmed by claude-code")
        missing = await client.call_tool("confirm", {"ref": "mem_999", "cwd": str(repo.path)})
        assert missing.is_error and text(missing).startswith("error: mem_999 names no memory")

    drive(binding, body, "claude-code")
    assert writer.get_memory(ref).records[0].memory.confirmed == 1
