"""A whole agent session through the MCP server, as a transcript with what it costs.

`python -m cairn.adapters.mcp_transcript > docs/agents.md` runs activate → recall → feedback →
remember (citing what helped) → commit against a fresh temporary store with the deterministic
embedder, through the official SDK client in-process, and prints each call, the text cairn
answered, and the characters the session put in front of the model: the tool list once, then
each call's arguments and answer. Tokens are estimated at four characters each.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client

from cairn.adapters.mcp import Binding, build_server
from cairn.adapters.mcp_readme import list_size
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.store import open_store

SCOPE = "project:github.com/acme/api"
CHARS_PER_TOKEN = 4
SEED = (
    ("constraint", "Database migrations must run with --dry-run in CI before they are applied."),
    ("lesson", "Adding a NOT NULL column without a default locked the orders table for minutes."),
    ("decision", "Order amounts are kept in integer cents, never floats."),
    ("warning", "Never run the backfill script twice; it duplicates invoices."),
)


@dataclass
class Transcript:
    tool_list_chars: int
    lines: list[str] = field(default_factory=list)
    call_chars: int = 0  # arguments and text answers of every call
    structured_chars: int = 0  # the structured content beside the answers (compact JSON)
    calls: int = 0

    async def call(self, client: Client, tool: str, arguments: dict[str, Any]) -> Any:
        result = await client.call_tool(tool, arguments)
        block = result.content[0]
        text = block.text if isinstance(block, types.TextContent) else ""
        shown = json.dumps(arguments, ensure_ascii=False)
        self.lines.append(f"→ {tool} {shown}")
        self.lines += [f"  {line}" for line in text.splitlines()]
        self.call_chars += len(shown) + len(text)
        self.structured_chars += len(
            json.dumps(result.structured_content or {}, separators=(",", ":"), ensure_ascii=False)
        )
        self.calls += 1
        return result.structured_content or {}

    @property
    def total_chars(self) -> int:
        return self.tool_list_chars + self.call_chars


async def _session(client: Client, out: Transcript) -> None:
    for kind, content in SEED:
        await client.call_tool("remember", {"content": content, "type": kind, "scope": SCOPE})
    brief = await out.call(
        client, "activate", {"task": "Add a nullable discount_code column to orders",
                             "scope": SCOPE})  # fmt: skip
    session = brief["session_id"]
    found = await out.call(
        client, "recall", {"query": "add a column to orders without locking",
                           "session_id": session})  # fmt: skip
    for answer in (brief, found):
        if answer["hits"]:
            await out.call(client, "feedback", {
                "session_id": session, "retrieval_id": answer["retrieval_id"],
                "assessments": [{"ref": h["ref"], "used": True, "effect": "helped"}
                                for h in answer["hits"][:2]]})  # fmt: skip
    cited = [found["hits"][0]["ref"]] if found["hits"] else []
    await out.call(client, "remember", {
        "content": "Add columns as nullable first, backfill in batches, then add NOT NULL.",
        "type": "lesson", "session_id": session, "used": cited})  # fmt: skip
    await out.call(client, "commit", {
        "session_id": session, "outcome": "success", "used": cited,
        "summary": "Added orders.discount_code as a nullable column."})  # fmt: skip


def run_session(tool_set: str = "core") -> Transcript:
    """The whole session on a fresh temporary store; the transcript and its costs."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        settings = Settings(home=home, embedder="hashing")
        binding = Binding(open_store(str(home / "memory.db")), settings,
                          embedder=HashingEmbedder(), cwd=home)  # fmt: skip
        try:
            server = build_server(binding, tool_set)

            async def drive() -> Transcript:
                info = types.Implementation(name="transcript", version="1")
                async with Client(server, mode="legacy", client_info=info) as client:
                    out = Transcript(list_size((await client.list_tools()).tools))
                    await _session(client, out)
                    return out

            return anyio.run(drive)
        finally:
            binding.close()


def markdown(out: Transcript) -> str:
    tokens = out.total_chars // CHARS_PER_TOKEN
    return "\n".join([
        "# An agent's session with cairn, and what it costs",
        "",
        "Generated by `python -m cairn.adapters.mcp_transcript > docs/agents.md`: a fresh store "
        f"holding {len(SEED)} memories of `{SCOPE}`, the default `core` tool set, the official "
        "MCP SDK client, the deterministic test embedder. `→` is the agent's call, the indented "
        "lines are the text cairn answered (structured content comes beside it).",
        "",
        "```text", *out.lines, "```",
        "",
        "| what the model reads | characters | about tokens |",
        "| --- | --- | --- |",
        f"| the tool list (once per session) | {out.tool_list_chars:,} | "
        f"{out.tool_list_chars // CHARS_PER_TOKEN:,} |",
        f"| {out.calls} calls: arguments and answers | {out.call_chars:,} | "
        f"{out.call_chars // CHARS_PER_TOKEN:,} |",
        f"| the whole session | {out.total_chars:,} | {tokens:,} |",
        "",
        f"Tokens are estimated at {CHARS_PER_TOKEN} characters each. A client that also shows "
        f"the model each answer's structured content adds {out.structured_chars:,} characters "
        f"(about {out.structured_chars // CHARS_PER_TOKEN:,} tokens) for these calls.",
        "",
    ])  # fmt: skip


if __name__ == "__main__":
    print(markdown(run_session()), end="")
