"""The MCP surface as a client pays for it: tool sets within budget, lean typed schemas, lean
results, and annotations that match what each tool does to the store."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import mcp_types as types
import pytest
from click.testing import CliRunner
from mcp import Client

from cairn.adapters.cli import main as cli_main
from cairn.adapters.mcp import Binding, build_server
from cairn.adapters.mcp_surface import BUDGETS, CORE, SESSIONS, TOOL_SETS
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.errors import InvalidInput
from cairn.store import open_store

SCOPE = "project:example/surface"
EMPTY_SCOPE = "project:example/empty"
# Eight distinct claims of ordinary length: what an agent's recall usually returns.
CLAIMS = [
    ("decision", "Billing retries reuse the order id as the idempotency key."),
    ("constraint", "The billing API must answer within 300 ms at the 99th percentile."),
    ("warning", "Never run the billing migration script twice; it duplicates invoices."),
    ("lesson", "Stripe webhooks reach billing out of order, so it sorts them by created."),
    ("fact", "Billing stores invoices in Postgres and receipts in S3 under receipts/."),
    ("instruction", "Run make check before pushing changes to the billing service."),
    ("preference", "The team prefers small pull requests for billing changes."),
    ("decision", "Billing amounts are kept in integer cents, never floats."),
]


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
def binding(
    settings: Settings, embedder: HashingEmbedder, clock: Any, tmp_path: Path, store_path: Path
) -> Iterator[Binding]:
    served = tmp_path / "served"
    served.mkdir()
    made = Binding(
        open_store(str(store_path)), settings, embedder=embedder, clock=clock, cwd=served
    )
    yield made
    made.close()


def drive(binding: Binding, body: Callable[[Client], Awaitable[None]], tool_set: str) -> None:
    async def session() -> None:
        info = types.Implementation(name="surface-test", version="1.0")
        async with Client(build_server(binding, tool_set), mode="legacy", client_info=info) as c:
            await body(c)

    anyio.run(session)


def compact_size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def listed_json(tools: list[types.Tool]) -> list[dict[str, Any]]:
    return [tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in tools]


def walk(value: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair in a JSON document, at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, item
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


# budgets and sets -----------------------------------------------------------------------------
@pytest.mark.parametrize("tool_set", list(TOOL_SETS))
def test_each_tool_set_fits_its_budget(binding: Binding, tool_set: str) -> None:
    async def body(client: Client) -> None:
        tools = (await client.list_tools()).tools
        names = [tool.name for tool in tools]
        expected = TOOL_SETS[tool_set]
        assert expected is None or set(names) == set(expected)
        size = compact_size({"tools": listed_json(tools)})
        assert size <= BUDGETS[tool_set], f"{tool_set} lists {size} characters"

    drive(binding, body, tool_set)


def test_sets_nest_and_all_serves_every_tool(binding: Binding) -> None:
    async def body(client: Client) -> None:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert set(CORE) < set(SESSIONS) < names
        assert {"query", "purge", "stats", "tidy", "tidy_accept", "tidy_decline"} <= names

    drive(binding, body, "all")


def test_the_set_comes_from_the_environment_and_a_wrong_name_is_refused(
    binding: Binding, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIRN_MCP_TOOLS", "sessions")

    async def body(client: Client) -> None:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == set(SESSIONS)

    drive(binding, body, None)  # type: ignore[arg-type]
    monkeypatch.setenv("CAIRN_MCP_TOOLS", "everything")
    with pytest.raises(InvalidInput, match="core, sessions, all"):
        build_server(binding)


@pytest.mark.parametrize("command", ["mcp", "serve"])
def test_the_cli_refuses_an_unknown_tool_set_on_one_line(tmp_path: Path, command: str) -> None:
    result = CliRunner().invoke(
        cli_main, [command, "--tools", "most"], env={"CAIRN_HOME": str(tmp_path / "home")}
    )
    assert result.exit_code == 2
    assert result.output.startswith("error: there is no tool set 'most'")
    assert len(result.output.strip().splitlines()) == 1


# lean, typed schemas --------------------------------------------------------------------------
def test_advertised_schemas_carry_no_noise_and_say_what_is_checked(binding: Binding) -> None:
    async def body(client: Client) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name, tool in tools.items():
            for key, value in walk(tool.input_schema):
                assert key != "title", name
                assert not (key == "default" and value is None), name
                if key == "anyOf":
                    assert {"type": "null"} not in value, name
            assert tool.output_schema is not None and tool.output_schema["type"] == "object"
            jsonschema.Draft202012Validator.check_schema(tool.input_schema)
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        props = {name: tool.input_schema["properties"] for name, tool in tools.items()}
        assert "enum" in props["remember"]["type"]
        assert props["recall"]["types"]["items"]["enum"] == props["remember"]["type"]["enum"]
        assert props["commit"]["outcome"]["enum"] == ["success", "partial", "failure", "unknown"]
        assert props["recall"]["evidence"]["enum"] == ["references", "full"]
        assert props["recall"]["kind"]["enum"] == ["all", "memories", "pages"]
        for tool, top in [("recall", 25), ("query", 20), ("lessons", 10)]:
            assert (props[tool]["limit"]["minimum"], props[tool]["limit"]["maximum"]) == (1, top)
        more = props["remember"]["more"]["properties"]
        assert (more["weight"]["minimum"], more["weight"]["maximum"]) == (0, 1)
        assert more["durability"]["enum"] == ["episodic", "semantic", "permanent"]
        remember = tools["remember"].input_schema
        validator = jsonschema.Draft202012Validator(remember)
        assert validator.is_valid({"content": "x", "type": "fact"})
        assert validator.is_valid({"memories": [{"content": "x", "type": "fact"}]})
        assert not validator.is_valid({})  # neither form
        assert not validator.is_valid(
            {"content": "x", "type": "fact", "memories": [{"content": "y", "type": "fact"}]}
        )
        item = props["feedback"]["assessments"]["items"]
        assert item["required"] == ["ref", "used", "effect"]

    drive(binding, body, "all")


def test_neither_prompts_nor_resources_are_advertised(binding: Binding) -> None:
    async def body(client: Client) -> None:
        capabilities = client.server_capabilities
        assert capabilities is not None and capabilities.tools is not None
        assert capabilities.prompts is None and capabilities.resources is None

    drive(binding, body, "core")


# lean results -----------------------------------------------------------------------------------
async def remember_claims(client: Client, scope: str = SCOPE) -> list[str]:
    refs = []
    for kind, content in CLAIMS:
        made = await client.call_tool(
            "remember", {"content": content, "type": kind, "scope": scope, "source_ref": "src/"}
        )
        assert not made.is_error and made.structured_content is not None
        refs.append(made.structured_content["ref"])
    return refs


def test_a_recall_of_eight_hits_is_lean(binding: Binding) -> None:
    async def body(client: Client) -> None:
        await remember_claims(client)
        found = await client.call_tool("recall", {"query": "billing", "scope": SCOPE, "limit": 8})
        data = found.structured_content
        assert data is not None and len(data["hits"]) == 8
        assert compact_size(data) <= 2_500, compact_size(data)
        assert all(value is not None for _, value in walk(data))
        keys = {key for key, _ in walk(data)}
        assert "memory_id" not in keys and "memories" not in keys
        for hit in data["hits"]:
            assert "content" not in hit  # the summary is there; get_memory has the content

    drive(binding, body, "all")


def test_activate_recall_and_query_answer_hits_of_one_shape(binding: Binding) -> None:
    async def body(client: Client) -> None:
        await remember_claims(client)
        brief = await client.call_tool("activate", {"task": "fix billing retries", "scope": SCOPE})
        found = await client.call_tool("recall", {"query": "billing retries", "scope": SCOPE})
        near = await client.call_tool("query", {"text": "billing retries", "scope": SCOPE})
        for result in (brief, found, near):
            data = result.structured_content
            assert data is not None and data["hits"], data
            assert "memories" not in data
            for hit in data["hits"]:
                assert {"ref", "score", "summary"} <= set(hit)
                assert "memory_id" not in hit and None not in hit.values()
        standing = brief.structured_content["constraints"]  # type: ignore[index]
        assert standing and all("ref" in item and "memory_id" not in item for item in standing)
        for item in standing:  # said once: no scope the brief already says, no content twice
            assert "scope" not in item and item.get("content") != item["summary"], item

    drive(binding, body, "all")


def test_old_names_still_work_for_one_release(binding: Binding) -> None:
    async def body(client: Client) -> None:
        refs = await remember_claims(client)
        brief = await client.call_tool("activate", {"task": "billing", "scope": SCOPE})
        data = brief.structured_content
        assert data is not None
        old = [{"memory_id": hit["ref"], "used": True, "effect": "helped"} for hit in data["hits"]]
        said = await client.call_tool(
            "feedback",
            {"session_id": data["session_id"], "retrieval_id": data["retrieval_id"],
             "assessments": old},
        )  # fmt: skip
        assert not said.is_error and said.structured_content["recorded"] == len(old)  # type: ignore[index]
        flat = await client.call_tool(
            "remember",
            {"content": "Refunds go through the ledger service.", "type": "fact", "scope": SCOPE,
             "occurred_at": "2026-01-02T03:04:05Z", "relates_to": refs[:1]},
        )  # fmt: skip
        grouped = await client.call_tool(
            "remember",
            {"content": "Chargebacks are reviewed by hand.", "type": "fact", "scope": SCOPE,
             "more": {"occurred_at": "2026-01-02T03:04:05Z", "weight": 0.9}},
        )  # fmt: skip
        assert not flat.is_error and not grouped.is_error
        both = await client.call_tool(
            "remember",
            {"content": "Disputes expire after 60 days.", "type": "fact", "scope": SCOPE,
             "weight": 0.3, "more": {"weight": 0.9}},
        )  # fmt: skip
        assert both.is_error and "weight given both flat and under more" in str(both.content)
        odd = await client.call_tool(
            "remember",
            {"content": "x", "type": "fact", "scope": SCOPE, "more": {"colour": "red"}},
        )
        assert odd.is_error and "more has no field 'colour'" in str(odd.content)

    drive(binding, body, "all")


def test_an_assessment_giving_ref_and_memory_id_is_refused(binding: Binding) -> None:
    async def body(client: Client) -> None:
        await remember_claims(client)
        brief = await client.call_tool("activate", {"task": "billing", "scope": SCOPE})
        data = brief.structured_content
        assert data is not None
        ref = data["hits"][0]["ref"]
        said = await client.call_tool(
            "feedback",
            {"session_id": data["session_id"], "retrieval_id": data["retrieval_id"],
             "assessments": [{"ref": ref, "memory_id": ref, "used": True, "effect": "helped"}]},
        )  # fmt: skip
        assert said.is_error and "give ref only" in str(said.content)

    drive(binding, body, "all")


# honest annotations and declared output schemas -------------------------------------------------
def snapshot(path: Path) -> dict[str, str]:
    """A digest of every table's rows: equal snapshots mean the call wrote nothing."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        digests = {}
        for table in tables:
            rows = db.execute(f'SELECT * FROM "{table}"').fetchall()
            digests[table] = hashlib.sha256(repr(sorted(map(repr, rows))).encode()).hexdigest()
    return digests


class Probe:
    """Calls each tool twice, checking its result against its declared schemas and its
    annotations against what the two calls did to the store."""

    def __init__(self, client: Client, tools: dict[str, types.Tool], path: Path) -> None:
        self.client, self.tools, self.path = client, tools, path
        self.wrote: dict[str, bool] = {}

    async def call(self, name: str, twice: bool = True, **arguments: Any) -> dict[str, Any]:
        tool = self.tools[name]
        jsonschema.validate(arguments, tool.input_schema)  # honest calls fit the advertised schema
        before = snapshot(self.path)
        first = await self.client.call_tool(name, arguments)
        assert not first.is_error, (name, first.content)
        assert first.structured_content is not None
        jsonschema.validate(first.structured_content, tool.output_schema or {})
        after = snapshot(self.path)
        self.wrote[name] = before != after
        notes = tool.annotations
        assert notes is not None
        if notes.read_only_hint:
            assert before == after, f"{name} claims read-only but wrote"
        if twice:
            second = await self.client.call_tool(name, arguments)
            if notes.idempotent_hint:
                assert snapshot(self.path) == after, (
                    f"{name} claims idempotent but its repeat wrote"
                )
                assert second.structured_content == first.structured_content, name
        return dict(first.structured_content)


def test_annotations_match_what_each_tool_does(binding: Binding, store_path: Path) -> None:
    async def body(client: Client) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        probe = Probe(client, tools, store_path)
        refs = await remember_claims(client)
        made = await probe.call("remember", content="Tax is computed per line.", type="fact",
                                scope=SCOPE)  # fmt: skip
        brief = await probe.call("activate", twice=False, task="billing retries", scope=SCOPE)
        session = brief["session_id"]
        found = await probe.call("recall", query="billing retries", scope=SCOPE,
                                 session_id=session)  # fmt: skip
        await probe.call("query", text="billing retries", scope=SCOPE)
        await probe.call("get_memory", refs=refs[:2], scope=SCOPE)
        await probe.call("feedback", session_id=session, retrieval_id=found["retrieval_id"],
                         assessments=[{"ref": found["hits"][0]["ref"], "used": True,
                                       "effect": "helped"}])  # fmt: skip
        await probe.call("note", text="Plan: fix the retry key.", session_id=session)
        await probe.call("log_progress", session_id=session, text="Key fixed.")
        await probe.call("trace", at="2026-01-01 00:00:00", scope=SCOPE)
        await probe.call("trace", scope=SCOPE, max_chars=500)
        await probe.call("lessons", tool="Edit", args={"file_path": "src/billing.py"},
                         scope=SCOPE, session_id=session)  # fmt: skip
        await probe.call("confirm", ref=refs[0], scope=SCOPE, session_id=session)
        await probe.call("correct", twice=False, ref=refs[1], scope=SCOPE,
                         content="The payments API must answer within 250 ms.",
                         reason="The SLO was tightened.")  # fmt: skip
        await probe.call("stats", scope=SCOPE)
        for version in ("Python 3.11", "Python 3.12", "Node 18", "Node 20"):
            await client.call_tool(
                "remember", {"content": f"{version} is required for CI.", "type": "constraint",
                             "scope": SCOPE},
            )  # fmt: skip
        proposals = (await probe.call("tidy", scope=SCOPE))["proposals"]
        updates = [p["id"] for p in proposals if p["kind"] == "update"]
        assert len(updates) >= 2, proposals
        await probe.call("tidy_accept", proposal_id=updates[0], scope=SCOPE)
        await probe.call("tidy_decline", proposal_id=updates[1], scope=SCOPE)
        await probe.call("forget", twice=False, ref=refs[2], reason="Script fixed.", scope=SCOPE)
        await probe.call("purge", twice=False, ref=made["ref"], scope=SCOPE)
        await probe.call("end", twice=False, session_id=session, summary="Done.")
        other = await probe.call("activate", twice=False, task="nothing yet", scope=EMPTY_SCOPE)
        await probe.call("commit", twice=False, session_id=other["session_id"],
                         outcome="success", summary="Nothing to do.")  # fmt: skip
        # What makes these tools writers, though they look like reads: recall and activate
        # open retrievals that need feedback; lessons remembers what it said in the session.
        for name in ("recall", "activate", "lessons", "remember", "feedback", "note", "end"):
            assert probe.wrote[name], f"{name} is annotated as a writer; it should write here"
        for name in ("tidy_accept", "tidy_decline"):
            assert probe.wrote[name], f"{name} is annotated as a writer; it should write here"
        assert set(probe.wrote) == set(tools), set(tools) - set(probe.wrote)

    drive(binding, body, "all")


def test_tidy_accept_says_it_may_write_files(binding: Binding) -> None:
    async def body(client: Client) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name in ("tidy_accept", "tidy_decline"):
            notes = tools[name].annotations
            assert notes is not None and not notes.read_only_hint and not notes.idempotent_hint
        accept = tools["tidy_accept"].annotations
        assert accept is not None and accept.open_world_hint and accept.destructive_hint

    drive(binding, body, "all")


def test_query_in_a_session_goes_through_the_ledger(binding: Binding) -> None:
    async def body(client: Client) -> None:
        await remember_claims(client)
        opened = await client.call_tool("activate", {"task": "tune retries", "scope": EMPTY_SCOPE})
        session = opened.structured_content["session_id"]  # type: ignore[index]
        outside = await client.call_tool("query", {"text": "billing", "scope": SCOPE})
        assert outside.structured_content is not None
        assert "retrieval_id" not in outside.structured_content
        asked = await client.call_tool("query", {"text": "billing", "session_id": session})
        data = asked.structured_content
        assert data is not None and data["retrieval_id"].startswith("ret_")
        assert data["scope"] == EMPTY_SCOPE and data["hits"] == []  # the session's scope
        assert "give feedback" in str(asked.content)
        # Like a recall that found nothing, a query that returned nothing needs no feedback.
        done = await client.call_tool(
            "commit", {"session_id": session, "outcome": "success", "summary": "Tuned."}
        )
        assert not done.is_error, done.content

    drive(binding, body, "all")


def test_query_in_a_session_of_the_scope_needs_feedback_on_what_it_returned(
    binding: Binding,
) -> None:
    async def body(client: Client) -> None:
        await remember_claims(client)
        opened = await client.call_tool("activate", {"task": "tune retries", "scope": SCOPE})
        brief = opened.structured_content
        assert brief is not None
        asked = await client.call_tool(
            "query", {"text": "billing retries", "session_id": brief["session_id"], "limit": 2}
        )
        data = asked.structured_content
        assert data is not None and len(data["hits"]) == 2
        early = await client.call_tool(
            "commit", {"session_id": brief["session_id"], "outcome": "success", "summary": "Ok."}
        )
        assert early.is_error and data["retrieval_id"] in str(early.content)
        for retrieval, hits in ((brief["retrieval_id"], brief["hits"]),
                                (data["retrieval_id"], data["hits"])):  # fmt: skip
            said = await client.call_tool(
                "feedback",
                {"session_id": brief["session_id"], "retrieval_id": retrieval,
                 "assessments": [{"ref": h["ref"], "used": False, "effect": "no_effect"}
                                 for h in hits]},
            )  # fmt: skip
            assert not said.is_error, said.content
        done = await client.call_tool(
            "commit", {"session_id": brief["session_id"], "outcome": "success", "summary": "Ok."}
        )
        assert not done.is_error, done.content

    drive(binding, body, "all")


def test_a_procedure_is_named_by_ref_and_assessed_by_ref(binding: Binding) -> None:
    async def body(client: Client) -> None:
        first = await client.call_tool("activate", {"task": "rotate keys", "scope": SCOPE})
        done = await client.call_tool(
            "commit",
            {"session_id": first.structured_content["session_id"],  # type: ignore[index]
             "outcome": "success", "summary": "Rotated the billing keys.",
             "procedure": {"goal": "rotate billing keys", "summary": "Rotate, then redeploy.",
                           "steps": ["rotate the key", "redeploy billing"]}},
        )  # fmt: skip
        assert not done.is_error, done.content
        again = await client.call_tool("activate", {"task": "rotate billing keys", "scope": SCOPE})
        data = again.structured_content
        assert data is not None and data["procedures"], data
        jsonschema.validate(data, (await tool_named(client, "activate")).output_schema or {})
        ref = data["procedures"][0]["ref"]
        assert ref.startswith("proc_") and "procedure_id" not in data["procedures"][0]
        said = await client.call_tool(
            "feedback",
            {"session_id": data["session_id"], "retrieval_id": data["retrieval_id"],
             "assessments": [{"ref": ref, "used": True, "effect": "helped"}]},
        )  # fmt: skip
        assert not said.is_error and said.structured_content["pending"] == []  # type: ignore[index]

    drive(binding, body, "all")


async def tool_named(client: Client, name: str) -> types.Tool:
    return next(tool for tool in (await client.list_tools()).tools if tool.name == name)


def test_renamed_tools_answer_under_their_old_names_unlisted(binding: Binding) -> None:
    async def body(client: Client) -> None:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"note", "trace"} <= names and not {"pin", "episodes", "history"} & names
        pinned = await client.call_tool("pin", {"note": "Old name.", "scope": SCOPE})
        noted = await client.call_tool("note", {"text": "New name.", "scope": SCOPE})
        assert not pinned.is_error and not noted.is_error
        latest = await client.call_tool("trace", {"scope": SCOPE})
        old = await client.call_tool("history", {"scope": SCOPE})
        assert latest.structured_content == old.structured_content
        assert "Old name." in str(latest.content) and "New name." in str(latest.content)
        moment = latest.structured_content["lines"][0]["at"]  # type: ignore[index]
        around = await client.call_tool("trace", {"at": moment, "scope": SCOPE})
        before = await client.call_tool("episodes", {"timestamp": moment, "scope": SCOPE})
        assert not around.is_error and around.structured_content == before.structured_content
        both = await client.call_tool("trace", {"at": moment, "max_chars": 10, "scope": SCOPE})
        assert both.is_error and "give at or max_chars, not both" in str(both.content)

    drive(binding, body, "sessions")


def test_an_unknown_field_is_answered_with_the_listed_fields_only(binding: Binding) -> None:
    async def body(client: Client) -> None:
        wrong = await client.call_tool("remember", {"content": "x", "type": "fact", "wieght": 1})
        said = str(wrong.content)
        assert wrong.is_error and "remember has no field 'wieght'" in said
        assert "more" in said and "occurred_at" not in said  # the deprecated spelling is unlisted

    drive(binding, body, "core")


def test_every_tool_error_fits_its_output_schema(binding: Binding) -> None:
    # Clients such as the TypeScript SDK validate structured content against the output
    # schema even when isError is set: a tool error must fit it too.
    async def body(client: Client) -> None:
        for tool in (await client.list_tools()).tools:
            wrong = await client.call_tool(tool.name, {"no_such_field": 1})
            assert wrong.is_error and wrong.structured_content is not None, tool.name
            assert wrong.structured_content["error"]["code"] == "invalid_input"
            jsonschema.validate(wrong.structured_content, tool.output_schema or {})
        gone = await client.call_tool(
            "feedback",
            {"session_id": "ses_gone", "retrieval_id": "ret_1",
             "assessments": [{"ref": "mem_1", "used": True, "effect": "helped"}]},
        )  # fmt: skip
        assert gone.is_error and gone.structured_content is not None
        jsonschema.validate(
            gone.structured_content, (await tool_named(client, "feedback")).output_schema or {}
        )

    drive(binding, body, "all")


def test_activate_can_leave_out_what_the_session_start_brief_gave(binding: Binding) -> None:
    async def body(client: Client) -> None:
        await remember_claims(client)
        full = await client.call_tool("activate", {"task": "billing retries", "scope": SCOPE})
        lean = await client.call_tool(
            "activate", {"task": "billing retries", "scope": SCOPE, "standing": False}
        )
        assert full.structured_content is not None and lean.structured_content is not None
        assert full.structured_content["constraints"]
        assert lean.structured_content["constraints"] == [] and lean.structured_content["hits"]
        assert "constraint:" not in str(lean.content)

    drive(binding, body, "core")
