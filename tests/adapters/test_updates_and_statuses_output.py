"""What the CLI and the MCP server say about possible updates and statuses, on both backends:
`may update` on remember, `conflicts with` on recall, `replaced` and the retire reason on
show / get_memory, `replaced` in stats."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from click.testing import CliRunner
from mcp import Client

from cairn.adapters.cli import main
from cairn.adapters.mcp import Binding, build_server
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.store import open_store

SCOPE = "project:example/output"
OLD = "Python 3.11 is required for CI."
NEW = "Python 3.12 is required for CI."


@pytest.fixture
def run(store_location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAIRN_EMBEDDER", "hashing")
    runner = CliRunner()

    def invoke(*args: str) -> str:
        out = runner.invoke(main, ["--store", store_location, *args], catch_exceptions=False)
        assert out.exit_code == 0, out.output
        return out.output

    return invoke


def test_cli_remember_recall_show_stats(run) -> None:  # type: ignore[no-untyped-def]
    old = json.loads(run("remember", OLD, "--type", "constraint", "--scope", SCOPE, "--json"))
    text = run("remember", NEW, "--type", "constraint", "--scope", SCOPE)
    new = text.split()[0]
    assert f"{new} created" in text and f"may update {old['memory_id']} (3.11 → 3.12)" in text
    recalled = run("recall", "which python is required for CI", "--scope", SCOPE)
    lines = [line for line in recalled.splitlines() if line.startswith("mem_")]
    assert lines[0].startswith(new) and f"conflicts with {old['memory_id']}" in lines[0]
    assert f"conflicts with {new}" in lines[1]
    data = json.loads(run("recall", "which python is required", "--scope", SCOPE, "--json"))
    assert data["hits"][0]["conflicts_with"] == [old["memory_id"]]
    shown = run("show", old["memory_id"], new, "--scope", SCOPE)
    assert f"may be updated by: {new}" in shown and f"may update: {old['memory_id']}" in shown

    fixed = json.loads(run("correct", old["memory_id"], "Python 3.13 is required for CI.",
                           "--reason", "moved on", "--scope", SCOPE, "--json"))  # fmt: skip
    shown = run("show", old["memory_id"], "--scope", SCOPE)
    assert shown.startswith(f"{old['memory_id']} [constraint] replaced ")
    record = json.loads(run("show", old["memory_id"], "--scope", SCOPE, "--json"))["records"][0]
    assert record["memory"]["status"] == "replaced"
    run("forget", fixed["memory_id"], "--reason", "CI moved to Nix", "--scope", SCOPE)
    shown = run("show", fixed["memory_id"], "--scope", SCOPE)
    assert " retired " in shown.splitlines()[0] and "retired because: CI moved to Nix" in shown
    stats = json.loads(run("stats", "--scope", SCOPE, "--json"))
    assert stats["by_status"] == {"active": 1, "replaced": 1, "retired": 1}


@pytest.fixture
def binding(
    store_location: str, settings: Settings, embedder: HashingEmbedder, clock: Any, tmp_path: Path
) -> Iterator[Binding]:
    made = Binding(
        open_store(store_location), settings, embedder=embedder, clock=clock, cwd=tmp_path
    )
    yield made
    made.close()


def drive(binding: Binding, body: Callable[[Client], Awaitable[None]]) -> None:
    async def session() -> None:
        info = types.Implementation(name="test-agent", version="1.0")
        async with Client(build_server(binding, "all"), client_info=info) as client:
            await body(client)

    anyio.run(session)


async def call(client: Client, tool: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    result = await client.call_tool(tool, arguments)
    block = result.content[0]
    assert isinstance(block, types.TextContent) and not result.is_error, block
    assert result.structured_content is not None
    return block.text, dict(result.structured_content)


def test_mcp_remember_recall_get_memory_forget(binding: Binding) -> None:
    async def body(client: Client) -> None:
        _, old = await call(client, "remember", content=OLD, type="constraint", scope=SCOPE)
        text, new = await call(client, "remember", content=NEW, type="constraint", scope=SCOPE)
        old_ref, new_ref = old["ref"], new["ref"]
        assert new["disposition"] == "created" and new["may_update"] == old_ref
        assert f"may update {old_ref} (3.11 → 3.12), both kept" in text
        text, found = await call(client, "recall", query="which python is required for CI",
                                 scope=SCOPE)  # fmt: skip
        assert [h["ref"] for h in found["hits"]][:2] == [new_ref, old_ref]
        assert found["hits"][0]["conflicts_with"] == [old_ref]
        assert f"conflicts with {old_ref}" in text.splitlines()[0]
        text, got = await call(client, "get_memory", refs=[old_ref, new_ref], scope=SCOPE)
        assert got["records"][0]["may_be_updated_by"] == [new_ref]
        assert f"may update: {old_ref}" in text

        await call(client, "correct", ref=old_ref, content="Python 3.13 is required.",
                   reason="moved on", scope=SCOPE)  # fmt: skip
        text, got = await call(client, "get_memory", refs=[old_ref], scope=SCOPE)
        assert got["records"][0]["memory"]["status"] == "replaced"
        assert text.startswith(f"{old_ref} [constraint] replaced")
        text, gone = await call(client, "forget", ref=new_ref, reason="3.12 broke the build",
                                scope=SCOPE)  # fmt: skip
        assert gone["reason"] == "3.12 broke the build" and text.endswith("3.12 broke the build")
        text, got = await call(client, "get_memory", refs=[new_ref], scope=SCOPE)
        assert got["records"][0]["retire_reason"] == "3.12 broke the build"
        assert "retired because: 3.12 broke the build" in text
        text, counts = await call(client, "stats", scope=SCOPE)
        assert counts["by_status"] == {"active": 1, "replaced": 1, "retired": 1}
        assert "replaced=1" in text

    drive(binding, body)
