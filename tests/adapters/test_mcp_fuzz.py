"""Every MCP tool, fuzzed in-process through the official client with hostile arguments.

Each call must come back as a result or a tool error (never a protocol failure, never a hang),
and a call that errs must store nothing. The tool list is the server's own, so a tool added
later is fuzzed without touching this file.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from cairn.adapters.mcp import Binding, build_server
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.store import open_store
from clocks import FakeClock

SCOPE = "project:example/fuzz"
CALL_TIMEOUT_S = 60  # a hang fails the example instead of the whole run stalling

HOSTILE_TEXT = [
    "", " ", "\x00", "a\x00b", "\u202eevil", "\ufeff", "mem_1", "mem_0",
    "mem_-1", "mem_99999999999999999999999", "evt_1", "../../../etc/passwd", "/", "~",
    "' OR 1=1 --", "%s%n", "{}", "null", "x" * 100_000, "🚀" * 2_000, "fact", "decision",
    "project:a/b", "global", "session:nope", "2026-13-45", "1970-01-01T00:00:00Z",
    "Deploys go through the CI pipeline.",
]  # fmt: skip


# Values a careful caller would send, so one hostile field at a time reaches the deeper paths
# (storing, sessions, feedback) instead of stopping at the first missing argument.
PLAUSIBLE: dict[str, object] = {
    "content": "Deploys go through the CI pipeline.", "type": "fact", "query": "how do deploys run",
    "text": "deploys", "refs": ["mem_1"], "ref": "mem_1", "reason": "it changed",
    "proposal_id": "prop_1", "task": "fix the deploy", "session_id": "ses_1",
    "retrieval_id": "ret_1", "assessments": [{"ref": "mem_1", "verdict": "used"}],
    "outcome": "success", "summary": "fixed the deploy", "note": "halfway through",
    "timestamp": "2026-08-01T12:00:00Z", "tool": "Bash", "scope": "project:example/fuzz",
}  # fmt: skip


def nested(depth: int, leaf: object) -> object:
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def hostile_values() -> st.SearchStrategy[object]:
    scalars = st.one_of(
        st.sampled_from(HOSTILE_TEXT),
        st.text(max_size=50),
        st.none(),
        st.booleans(),
        st.integers(min_value=-(10**30), max_value=10**30),
        st.sampled_from([0.5, -1.0, 1e308, math.inf, -math.inf, math.nan]),
    )
    containers = st.one_of(
        st.lists(scalars, max_size=5),
        st.dictionaries(st.sampled_from(["content", "type", "k", ""]), scalars, max_size=3),
        st.builds(nested, st.integers(min_value=1, max_value=200), scalars),
        st.sampled_from(
            [
                ["x"] * 10_000,
                [{"content": "c", "type": "fact"}] * 200,
                # A batch with a bad claim among good ones: each item stands alone.
                [
                    {"content": "Builds cache wheels.", "type": "fact"},
                    {"content": " ", "type": "fact"},
                ],
                [
                    {"content": "Builds pin numpy.", "type": "fact"},
                    {"content": "x", "type": "nope"},
                ],
            ]
        ),
    )
    # Scalars twice: most hostile calls should get past the schema and reach the core.
    return st.one_of(scalars, scalars, containers)


def arguments_for(
    schema: dict[str, Any], known: dict[str, object]
) -> st.SearchStrategy[dict[str, Any]]:
    fields = sorted(schema.get("properties", {}))
    plausible = st.fixed_dictionaries(
        {name: fresh(name, known[name]) for name in fields if name in known}
    )
    one_bad = st.builds(
        lambda base, name, value: {**base, name: value},
        plausible, st.sampled_from(fields), hostile_values(),
    ) if fields else st.just({})  # fmt: skip
    # The careful call itself too, so the store fills and later hostile calls meet real state.
    return st.one_of(one_bad, one_bad, plausible, any_arguments(fields))


def fresh(name: str, value: object) -> st.SearchStrategy[object]:
    """Content new each time (so remember creates rather than matches); other values as known."""
    if name in ("content", "note", "summary"):
        words = st.text(alphabet="bcdfghjklmnpqrstvwz", min_size=4, max_size=12)
        return st.builds(lambda word: f"{value} Also {word}.", words)
    return st.just(value)


def any_arguments(fields: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    chosen = st.lists(st.sampled_from(fields), unique=True, max_size=len(fields)) if fields else (
        st.just([])
    )  # fmt: skip
    extra = st.one_of(st.just({}), st.dictionaries(st.sampled_from(["sesion_id", ""]),
                                                   hostile_values(), max_size=1))  # fmt: skip
    return st.builds(
        lambda names, values, more: {**dict(zip(names, values, strict=False)), **more},
        chosen,
        st.lists(hostile_values(), min_size=len(fields), max_size=len(fields)),
        extra,
    )


async def timed_call(client: Client, tool: str, arguments: dict[str, Any]) -> Any:
    with anyio.fail_after(CALL_TIMEOUT_S):
        return await client.call_tool(tool, arguments)


def call_once(
    binding: Binding, portal: BlockingPortal, client: Client, tool: str, arguments: dict[str, Any]
) -> None:
    before = binding.store.count_rows("memories")
    result = portal.call(timed_call, client, tool, arguments)
    assert isinstance(result, types.CallToolResult)
    assert result.content and isinstance(result.content[0], types.TextContent)
    said = result.content[0].text
    said.encode("utf-8")  # the answer is valid Unicode, so any transport can carry it
    if result.is_error:
        assert said.startswith("error: ") or "Error" in said, said
        assert binding.store.count_rows("memories") == before, f"{tool} erred but stored: {said}"


async def seed(binding: Binding) -> dict[str, object]:
    """A memory, an open session and a retrieval, so plausible refs and ids name real things."""
    async with Client(build_server(binding, "all"), mode="legacy") as client:

        async def structured(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error and result.structured_content is not None, result
            return result.structured_content

        scope = str(PLAUSIBLE["scope"])
        made = await structured("remember", {"content": PLAUSIBLE["content"], "type": "fact",
                                             "scope": scope})  # fmt: skip
        opened = await structured("activate", {"task": "fix the deploy", "scope": scope})
        session = opened["session_id"]
        found = await structured("recall", {"query": "deploys", "session_id": session})
    ref = made["ref"]
    return {
        **PLAUSIBLE, "ref": ref, "refs": [ref], "session_id": session,
        "retrieval_id": found["retrieval_id"],
        "assessments": [{"ref": ref, "verdict": "used"}],
    }  # fmt: skip


def fuzz_binding(tmp_path: Path) -> Binding:
    served = tmp_path / "served"
    served.mkdir()
    return Binding(
        open_store(str(tmp_path / "memory.db")),
        Settings(home=tmp_path / "home", embedder="hashing"),
        embedder=HashingEmbedder(),
        clock=FakeClock(),
        cwd=served,
    )


def test_every_tool_survives_hostile_arguments(tmp_path: Path) -> None:
    binding = fuzz_binding(tmp_path)
    known = anyio.run(seed, binding)
    info = types.Implementation(name="fuzz", version="1")
    # One client session for the whole run, as an agent has: a call that wedged the server
    # would fail every call after it.
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(
            Client(build_server(binding, "all"), mode="legacy", client_info=info)
        ) as client,
    ):
        tools = portal.call(client.list_tools).tools
        assert len(tools) >= 15
        calls = st.sampled_from(tools).flatmap(
            lambda tool: st.tuples(st.just(tool.name), arguments_for(tool.input_schema, known))
        )

        @settings(
            max_examples=300,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(call=calls)
        def fuzz(call: tuple[str, dict[str, Any]]) -> None:
            call_once(binding, portal, client, *call)

        fuzz()
        assert portal.call(client.list_tools).tools  # still serving
    binding.close()


def test_a_batch_stores_its_good_claims_and_names_each_bad_one(tmp_path: Path) -> None:
    binding = fuzz_binding(tmp_path)

    async def body() -> None:
        async with Client(build_server(binding, "all"), mode="legacy") as client:
            result = await client.call_tool("remember", {"scope": SCOPE, "memories": [
                {"content": "Builds cache pip wheels.", "type": "fact"},
                {"content": "Builds pin numpy.", "type": "no-such-type"},
                {"content": " \t ", "type": "fact"},
            ]})  # fmt: skip
            assert not result.is_error and result.structured_content is not None
            items = result.structured_content["results"]
            assert [item["ok"] for item in items] == [True, False, False], items
            assert items[1]["error"]["code"] == "unknown_type"

    anyio.run(body)
    assert binding.store.count_rows("memories") == 1
    binding.close()


@pytest.mark.parametrize(
    "arguments",
    [{"content": "a\ud800b", "type": "fact"}, {"memories": [{"content": "\udfff", "type": "fact"}]},
     {"content": "ok", "type": "fact", "tags": ["\ud800"]}, {"\ud800": 1}],
)  # fmt: skip
def test_a_lone_surrogate_in_arguments_is_a_tool_error_naming_the_field(
    tmp_path: Path, arguments: dict[str, Any]
) -> None:
    # The official client cannot even encode these; a raw JSON-RPC peer can (see the stdio
    # tests), and the in-process server gets them as they are.
    binding = fuzz_binding(tmp_path)
    result = anyio.run(build_server(binding, "all").call_tool, "remember", arguments)
    assert isinstance(result, types.CallToolResult) and result.is_error
    said = result.content[0]
    assert isinstance(said, types.TextContent)
    assert said.text.startswith("error: remember.") and "lone UTF-16 surrogate" in said.text
    said.text.encode("utf-8")
    assert binding.store.count_rows("memories") == 0
    binding.close()
