"""The MCP memory importer against a file written by the real official server
(`@modelcontextprotocol/server-memory`, run from npm), driven by the MCP client."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from cairn import Cairn

SERVER = "@modelcontextprotocol/server-memory"
BILLING = ["Deploys every Tuesday from the release branch", "Owned by the payments team"]
ENTITIES = [
    {"name": "billing_service", "entityType": "service", "observations": BILLING},
    {"name": "payments_team", "entityType": "team", "observations": ["On call rotates weekly"]},
]
RELATIONS = [{"from": "payments_team", "to": "billing_service", "relationType": "owns"}]


def write_with_the_real_server(memory_file: Path, cwd: Path) -> None:
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx (Node) is not installed")
    env = {**os.environ, "MEMORY_FILE_PATH": str(memory_file)}
    params = StdioServerParameters(command=npx, args=["-y", SERVER], env=env, cwd=str(cwd))

    async def drive() -> None:
        with anyio.fail_after(240):  # the first run fetches the package from the registry
            async with Client(params) as client:
                made = await client.call_tool("create_entities", {"entities": ENTITIES})
                assert not made.is_error, made
                linked = await client.call_tool("create_relations", {"relations": RELATIONS})
                assert not linked.is_error, linked
                more = [{"entityName": "payments_team", "contents": ["Meets on Mondays"]}]
                added = await client.call_tool("add_observations", {"observations": more})
                assert not added.is_error, added

    anyio.run(drive)


@pytest.mark.slow
def test_a_file_written_by_the_official_memory_server_imports(mem: Cairn, tmp_path: Path) -> None:
    memory_file = tmp_path / "memory.jsonl"
    write_with_the_real_server(memory_file, tmp_path)
    assert memory_file.is_file(), "the server wrote no memory file"
    [report] = mem.import_memory("mcp-memory", memory_file)
    assert not report.problems, report.problems
    held = {m.content: m for m in mem.store.iter_memories() if m.status == "active"}
    for text in ("Deploys every Tuesday from the release branch", "Owned by the payments team",
                 "On call rotates weekly", "Meets on Mondays"):  # fmt: skip
        assert text in held, (text, sorted(held))
        assert held[text].integration == "mcp-memory"
    owns = [text for text in held if "owns" in text]
    assert owns, sorted(held)
    # Re-importing the same file is recognised: nothing new, nothing counted.
    [again] = mem.import_memory("mcp-memory", memory_file)
    assert again.counts.get("create", 0) == 0
