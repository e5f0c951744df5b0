"""The MCP server in-process, through the official SDK client, on a real temporary SQLite store.

Both protocol eras are driven: `legacy` (the initialize handshake real clients use today) and
`auto` (which negotiates 2026-07-28 in-process), because roots and client identity travel
differently in each.
"""

from __future__ import annotations

import re
import secrets
import subprocess
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from click.testing import CliRunner
from mcp import Client

from cairn.adapters.cli import main as cli_main
from cairn.adapters.mcp import Binding, build_server
from cairn.adapters.mcp_http import check_bind, is_loopback, parse_origins
from cairn.adapters.mcp_surface import DESCRIBED_ON
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.errors import InvalidInput
from cairn.refs import parse_ref
from cairn.scope import scope_from_cwd
from cairn.store import open_store

SCOPE = "project:example/mcp"
MODES = ["legacy", "auto"]
MEMORY_TOOLS = {"remember", "recall", "get_memory", "correct", "forget", "purge", "stats", "tidy"}
SESSION_TOOLS = {"activate", "feedback", "commit", "end", "note", "log_progress", "trace"}
READ_ONLY = {"get_memory", "trace", "stats"}


@pytest.fixture
def binding(
    settings: Settings, embedder: HashingEmbedder, clock: Any, tmp_path: Path
) -> Iterator[Binding]:
    # The adapter never touches SQL, so one backend suffices here; both run the core's tests.
    served = tmp_path / "served"
    served.mkdir()
    store = open_store(str(tmp_path / "memory.db"))
    made = Binding(store, settings, embedder=embedder, clock=clock, cwd=served)
    yield made
    made.close()


Session = Callable[[Client], Awaitable[None]]


def drive(
    binding: Binding,
    body: Session,
    *,
    mode: str = "legacy",
    name: str = "test-agent",
    version: str = "1.2.3",
    roots: list[str] | None = None,
) -> None:
    """Run `body` against a fresh server on `binding`, as a client named `name`."""

    async def list_roots(_: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=uri) for uri in roots or []])

    async def session() -> None:
        async with Client(
            build_server(binding, "all"),
            mode=mode,
            client_info=types.Implementation(name=name, version=version),
            list_roots_callback=list_roots if roots is not None else None,
        ) as client:
            await body(client)

    anyio.run(session)


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def ok(client: Client, tool: str, **arguments: Any) -> types.CallToolResult:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result


def git_checkout(path: Path, origin: str) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin", origin], check=True)
    return path


# the tool list ------------------------------------------------------------------------------
def test_every_tool_is_listed_with_descriptions_and_annotations(binding: Binding) -> None:
    async def body(client: Client) -> None:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(listed) >= MEMORY_TOOLS | SESSION_TOOLS
        for tool in listed.values():
            assert tool.description and len(tool.description) > 40, tool.name
            schema = tool.input_schema
            assert schema["additionalProperties"] is False
            for field, spec in schema["properties"].items():
                # scope and cwd are explained once, in the instructions and on the entry tools.
                if field in {"scope", "cwd"} and tool.name not in DESCRIBED_ON:
                    continue
                assert spec.get("description"), f"{tool.name}.{field} has no description"
            notes = tool.annotations
            assert notes is not None
            assert bool(notes.read_only_hint) is (tool.name in READ_ONLY), tool.name
            if not notes.read_only_hint:
                destructive = {"forget", "purge", "tidy_accept"}
                assert notes.destructive_hint is (tool.name in destructive), tool.name
        # The seeds' field names.
        fields = {name: set(tool.input_schema["properties"]) for name, tool in listed.items()}
        assert {"content", "type", "memories", "scope", "cwd", "session_id", "more"} <= (
            fields["remember"]
        )
        # The rarely used claim fields are listed under more (still accepted flat).
        more = listed["remember"].input_schema["properties"]["more"]["properties"]
        assert {"occurred_at", "weight", "durability", "diff_text", "relates_to"} <= set(more)
        assert {"query", "scope", "cwd", "session_id", "also", "as_of", "evidence"} <= (
            fields["recall"]
        )
        assert {"refs"} <= fields["get_memory"]
        assert {"session_id", "retrieval_id", "assessments"} <= fields["feedback"]
        assert {"session_id", "outcome", "summary", "procedure", "used"} <= fields["commit"]
        assert {"task", "task_context", "cwd"} <= fields["activate"]
        assert set(listed["recall"].input_schema["required"]) == {"query"}

    drive(binding, body)


# remember and recall ------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_remember_scalar_then_batch_then_recall(binding: Binding, mode: str) -> None:
    async def body(client: Client) -> None:
        one = await ok(
            client, "remember", content="Deploys go through make release.", type="decision",
            scope=SCOPE, tags=["deploy"], reason="agreed in review",
        )  # fmt: skip
        assert one.structured_content is not None
        data = one.structured_content
        assert data["disposition"] == "created" and data["type"] == "decision"
        assert data["scope"] == SCOPE and data["source_event_id"].startswith("evt_")
        assert text(one).startswith(f"{data['ref']} created [decision] {SCOPE}")

        batch = await ok(
            client, "remember", scope=SCOPE,
            memories=[
                {"content": "The staging database is PostgreSQL 16.", "type": "fact"},
                {"content": "Never deploy on Fridays.", "type": "bogus"},
                {"content": "Deploys go through make release.", "type": "decision"},
            ],
        )  # fmt: skip
        assert batch.structured_content is not None
        results = batch.structured_content["results"]
        assert [r["ok"] for r in results] == [True, False, True]
        assert results[1]["error"]["code"] == "unknown_type"
        assert results[2]["data"]["disposition"] == "matched"
        assert "1: error unknown_type" in text(batch)

        found = await ok(client, "recall", query="how do we deploy", scope=SCOPE)
        assert found.structured_content is not None
        assert found.structured_content["retrieval_id"].startswith("ret_")
        assert found.structured_content["hits"][0]["ref"] == data["ref"]
        assert text(found).splitlines()[0].startswith(data["ref"])

        near = await ok(client, "query", text="deploy release process", scope=SCOPE, limit=2)
        assert near.structured_content is not None
        assert len(text(near).splitlines()) == 2
        assert data["ref"] in text(near)

    drive(binding, body, mode=mode)


def test_default_recall_of_eight_long_memories_stays_compact(binding: Binding) -> None:
    def filler(n: int) -> str:
        # Words of its own for each memory, so none is a near-duplicate of another.
        return " ".join(f"{word}{n}x{i}" for i, word in enumerate(["alpha", "delta", "kappa"] * 60))

    async def body(client: Client) -> None:
        for n in range(12):
            await ok(
                client, "remember", scope=SCOPE, type="lesson",
                content=f"Payment gateway retry budget, lesson {n}: {filler(n)}",
                source_ref=f"src/payments/gateway_{n}.py:10-40",
            )  # fmt: skip
        found = await ok(client, "recall", query="payment gateway retry budget", scope=SCOPE)
        assert found.structured_content is not None
        assert len(found.structured_content["hits"]) == 8
        shown = text(found)
        assert len(shown.splitlines()) == 9  # one line per hit and the retrieval line
        # Word pieces and punctuation each count: a generous stand-in for model tokens.
        tokens = re.findall(r"\w+|[^\w\s]", shown)
        assert len(tokens) < 600, (len(tokens), shown)
        assert len(shown) < 2400

    drive(binding, body)


def test_nothing_found_is_said_plainly(binding: Binding) -> None:
    async def body(client: Client) -> None:
        found = await ok(client, "recall", query="anything at all", scope=SCOPE)
        assert text(found).startswith(f"nothing found in {SCOPE}")
        assert found.structured_content is not None
        assert found.structured_content["hits"] == []

    drive(binding, body)


# errors -------------------------------------------------------------------------------------
def test_cairn_errors_come_back_as_tool_errors_with_the_cli_message(
    binding: Binding, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "cli-home"))
    monkeypatch.setenv("CAIRN_EMBEDDER", "hashing")
    cli = CliRunner().invoke(cli_main, ["remember", "x", "--type", "bogus", "--scope", SCOPE])
    assert cli.exit_code == 2
    cli_line = cli.output.strip().splitlines()[-1]
    assert cli_line.startswith("error: ")

    async def body(client: Client) -> None:
        result = await client.call_tool(
            "remember", {"content": "x", "type": "bogus", "scope": SCOPE}
        )
        assert result.is_error
        assert text(result) == cli_line
        assert result.structured_content is not None
        assert result.structured_content["error"]["code"] == "unknown_type"
        assert result.structured_content["error"]["retryable"] is False

        secret = "the deploy token is ghp_R8aK2mX9vQ4tL7wN3pZ6yB1cE5hJ0sD8fG2k"
        refused = await client.call_tool("remember", {"content": secret, "type": "fact"})
        assert refused.is_error and text(refused).startswith("error: ")
        assert refused.structured_content is not None
        assert refused.structured_content["error"]["code"] == "refused"

        missing = await client.call_tool("get_memory", {"refs": ["mem_999"], "scope": SCOPE})
        assert not missing.is_error and "unknown: mem_999" in text(missing)
        gone = await client.call_tool("forget", {"ref": "mem_999", "reason": "x", "scope": SCOPE})
        assert gone.is_error and "mem_999 names no memory" in text(gone)

    drive(binding, body)


def test_bad_calls_in_a_row_never_wedge_the_server(binding: Binding) -> None:
    bad_calls: list[tuple[str, dict[str, Any], str]] = [
        ("no_such_tool", {}, "there is no tool 'no_such_tool'"),
        ("recall", {"query": "x", "qurey": "y"}, "recall has no field 'qurey'"),
        ("recall", {"query": 42}, "query: Input should be a valid string"),
        ("recall", {}, "query: Field required"),
        ("recall", {"query": "x", "limit": "many"}, "limit: Input should be a valid integer"),
        ("recall", {"query": "x", "limit": 99, "scope": SCOPE}, "limit 99 is out of range"),
        ("remember", {"content": "a", "type": "fact", "memories": [{}]}, "not both"),
        ("remember", {"memories": "not a list"}, "memories"),
        ("remember", {"scope": "Not A Scope!", "content": "a", "type": "fact"}, "scope"),
        ("feedback", {"session_id": "nope", "retrieval_id": "ret_1", "assessments": []}, ""),
        ("commit", {"session_id": "ses_x", "outcome": "meh", "summary": "s"}, "outcome 'meh'"),
        ("commit", {"session_id": "ses_x", "outcome": "success", "summary": "s"}, "session"),
    ]

    async def body(client: Client) -> None:
        for tool, arguments, expected in bad_calls:
            result = await client.call_tool(tool, arguments)
            assert result.is_error, (tool, arguments)
            line = text(result)
            assert line.startswith("error: ") and "\n" not in line, line
            assert expected in line, (expected, line)
        good = await ok(client, "remember", content="Still alive.", type="fact", scope=SCOPE)
        assert good.structured_content is not None
        assert good.structured_content["disposition"] == "created"

    drive(binding, body)


# scope and identity -------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_scope_from_cwd_else_roots_else_the_server_directory(
    binding: Binding, tmp_path: Path, mode: str
) -> None:
    rooted = git_checkout(tmp_path / "rooted", "git@github.com:acme/rooted.git")
    named = git_checkout(tmp_path / "named", "git@github.com:acme/named.git")

    async def with_roots(client: Client) -> None:
        plain = await ok(client, "remember", content="From the root.", type="fact")
        assert plain.structured_content is not None
        assert plain.structured_content["scope"] == "project:github.com/acme/rooted"
        given = await ok(client, "remember", content="From cwd.", type="fact", cwd=str(named))
        assert given.structured_content is not None
        assert given.structured_content["scope"] == "project:github.com/acme/named"
        found = await ok(client, "recall", query="root")
        assert found.structured_content is not None
        assert found.structured_content["scope"] == "project:github.com/acme/rooted"

    async def without_roots(client: Client) -> None:
        plain = await ok(client, "remember", content="From the server.", type="fact")
        assert plain.structured_content is not None
        assert plain.structured_content["scope"] == scope_from_cwd(tmp_path / "served")

    drive(binding, with_roots, mode=mode, roots=[rooted.as_uri(), named.as_uri()])
    drive(binding, without_roots, mode=mode)
    drive(binding, without_roots, mode=mode, roots=[])


def test_a_client_that_fails_roots_list_gets_the_server_directory(
    binding: Binding, tmp_path: Path
) -> None:
    async def refuse(_: Any) -> types.ErrorData:
        return types.ErrorData(code=types.INTERNAL_ERROR, message="no roots today")

    async def session() -> None:
        server = build_server(binding, "all")
        async with Client(server, mode="legacy", list_roots_callback=refuse) as c:
            made = await ok(c, "remember", content="Roots failed.", type="fact")
            assert made.structured_content is not None
            assert made.structured_content["scope"] == scope_from_cwd(tmp_path / "served")

    anyio.run(session)


@pytest.mark.parametrize("mode", MODES)
def test_the_client_is_the_integration(binding: Binding, mode: str) -> None:
    async def body(client: Client) -> None:
        made = await ok(client, "remember", content="Ports below 1024 need root.", type="fact",
                        scope=SCOPE)  # fmt: skip
        assert made.structured_content is not None
        memory_id = parse_ref(made.structured_content["ref"], kind="mem")
        memory = binding.store.get_memories([memory_id])[0]
        assert memory.integration == "claude-code"
        event = binding.store.get_events([memory.source_event_id or 0])[0]
        assert event.integration == "claude-code"
        assert event.payload.get("integration_version") == "2.0.14"

    drive(binding, body, mode=mode, name="claude-code", version="2.0.14")


# sessions -----------------------------------------------------------------------------------
def test_a_session_activate_recall_feedback_commit(binding: Binding) -> None:
    async def body(client: Client) -> None:
        await ok(client, "remember", scope=SCOPE, type="constraint",
                 content="Migrations must run with --dry-run first.")  # fmt: skip
        await ok(client, "remember", scope=SCOPE, type="fact",
                 content="The migration tool is alembic.")  # fmt: skip
        brief = await ok(client, "activate", task="Add a column with a migration", scope=SCOPE)
        assert brief.structured_content is not None
        session_id = brief.structured_content["session_id"]
        brief_ret = brief.structured_content["retrieval_id"]
        assert session_id.startswith("ses_") and f"session {session_id}" in text(brief)

        found = await ok(client, "recall", query="migration tool", session_id=session_id)
        assert found.structured_content is not None
        retrieval_id = found.structured_content["retrieval_id"]
        assert "give feedback on it before commit" in text(found)

        early = await client.call_tool("commit", {"session_id": session_id, "outcome": "success",
                                                  "summary": "added the column"})  # fmt: skip
        assert early.is_error and retrieval_id in text(early)

        for ret, refs in (
            (brief_ret, brief.structured_content),
            (retrieval_id, found.structured_content),
        ):
            assessed = [{"ref": ref, "used": True, "effect": "helped"}
                        for ref in _refs(refs)]  # fmt: skip
            if assessed:
                await ok(client, "feedback", session_id=session_id, retrieval_id=ret,
                         assessments=assessed)  # fmt: skip
        await ok(client, "log_progress", session_id=session_id, text="column added")
        await ok(client, "pin", note="next: backfill the column", session_id=session_id)
        done = await ok(client, "commit", session_id=session_id, outcome="success",
                        summary="added the column with a dry-run first")  # fmt: skip
        assert done.structured_content is not None
        assert done.structured_content["status"] == "committed"
        assert done.structured_content["episode_id"].startswith("ep_")

        trace = await ok(client, "history", scope=SCOPE)
        assert "next: backfill the column" in text(trace)

    drive(binding, body)


def test_activate_in_a_checkout_names_its_branch(binding: Binding, tmp_path: Path) -> None:
    checkout = git_checkout(tmp_path / "api", "git@github.com:acme/api.git")
    subprocess.run(
        ["git", "-C", str(checkout), "checkout", "-q", "-b", "add-discounts"], check=True
    )

    async def body(client: Client) -> None:
        await ok(client, "remember", cwd=str(checkout), type="task",
                 content="Open on add-discounts: backfill discount codes.")  # fmt: skip
        brief = await ok(client, "activate", task="Finish add-discounts", cwd=str(checkout))
        assert brief.structured_content is not None
        assert brief.structured_content["scope"] == "project:github.com/acme/api"
        assert brief.structured_content["branch"]["branch"] == "add-discounts"
        assert "branch add-discounts" in text(brief)

    drive(binding, body)


def _refs(structured: dict[str, Any]) -> list[str]:
    hits = structured.get("hits", [])
    found: list[str] = [hit["ref"] for hit in hits if hit.get("kind", "memory") == "memory"]
    for group in ("pinned", "constraints", "warnings", "instructions", "preferences"):
        found += [m["ref"] for m in structured.get(group, [])]
    return sorted(set(found))


# history tools ------------------------------------------------------------------------------
def test_get_correct_forget_purge_and_stats(binding: Binding) -> None:
    async def body(client: Client) -> None:
        made = await ok(client, "remember", content="The API limit is 100 rpm.", type="fact",
                        scope=SCOPE)  # fmt: skip
        assert made.structured_content is not None
        ref = made.structured_content["ref"]
        new = await ok(client, "correct", ref=ref, content="The API limit is 200 rpm.",
                       reason="raised in v2", scope=SCOPE)  # fmt: skip
        assert new.structured_content is not None
        new_ref = new.structured_content["ref"]
        assert text(new) == f"{new_ref} replaces {ref}"

        shown = await ok(client, "get_memory", refs=[new_ref, "mem_404"], scope=SCOPE)
        assert shown.structured_content is not None
        record = shown.structured_content["records"][0]
        assert record["ref"] == new_ref and record["replaced"][0]["ref"] == ref
        assert shown.structured_content["unknown"] == ["mem_404"]
        assert "| The API limit is 200 rpm." in text(shown)

        retired = await ok(client, "forget", ref=new_ref, reason="limit removed", scope=SCOPE)
        assert text(retired) == f"{new_ref} retired: limit removed"
        other = await ok(client, "remember", content="token leaked here", type="fact", scope=SCOPE)
        assert other.structured_content is not None
        gone = await ok(client, "purge", ref=other.structured_content["ref"], scope=SCOPE)
        assert gone.structured_content is not None
        assert gone.structured_content["tombstone"].startswith("evt_")

        counts = await ok(client, "stats", scope=SCOPE)
        assert counts.structured_content is not None
        assert counts.structured_content["memories"] == 3
        assert "by_status:" in text(counts)
        proposals = await ok(client, "tidy", scope=SCOPE)
        assert proposals.structured_content is not None
        assert isinstance(proposals.structured_content["proposals"], list)

    drive(binding, body)


# HTTP rules, unit by unit ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.0.0.2", True), ("localhost", True), ("::1", True),
     ("[::1]", True), ("0.0.0.0", False), ("192.168.1.10", False), ("example.com", False),
     ("::", False)],
)  # fmt: skip
def test_only_loopback_binds_without_a_token(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    check_bind(host, secrets.token_urlsafe(32))
    if loopback:
        check_bind(host, None)
    else:
        with pytest.raises(InvalidInput, match="--token"):
            check_bind(host, None)


def test_cors_origins_parse_from_flags_and_the_environment() -> None:
    assert parse_origins("") == []
    assert parse_origins("http://a.example, https://b.example/") == [
        "http://a.example",
        "https://b.example",
    ]
    assert parse_origins(("http://a.example",)) == ["http://a.example"]


@pytest.mark.parametrize("mode", MODES)
def test_a_relative_cwd_is_resolved_against_the_first_root_or_refused(
    binding: Binding, tmp_path: Path, mode: str
) -> None:
    root = tmp_path / "workspace"
    git_checkout(root / "api", "git@github.com:acme/api.git")

    async def with_roots(client: Client) -> None:
        made = await ok(client, "remember", content="Under the root.", type="fact", cwd="api")
        assert made.structured_content is not None
        assert made.structured_content["scope"] == "project:github.com/acme/api"

    async def without_roots(client: Client) -> None:
        for cwd in (".", "api", "../elsewhere"):
            refused = await client.call_tool(
                "remember", {"content": "Where?", "type": "fact", "cwd": cwd}
            )
            assert refused.is_error
            assert text(refused).startswith(f"error: cwd {cwd!r} is relative")

    drive(binding, with_roots, mode=mode, roots=[root.as_uri()])
    drive(binding, without_roots, mode=mode)
    drive(binding, without_roots, mode=mode, roots=[])
