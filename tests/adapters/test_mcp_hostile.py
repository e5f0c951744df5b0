"""Hostile bytes on the real wires: `cairn mcp` over stdio and `cairn serve` over HTTP answer
every message (a JSON-RPC error at worst, never silence) and keep serving; a store that will
not open still lets the server start, list its tools and say what is wrong on every call."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).parent))

from mcpkit import CAIRN, HEADERS, RawStdio, cairn_env, initialize_request, serving

from cairn import Cairn
from cairn.config import Settings

SCOPE = "project:example/hostile"
DEEP = b"[" * 200 + b"]" * 200
FIVE_MIB = 5 * 1024 * 1024


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return cairn_env(tmp_path)


def call(request_id: int, arguments: bytes, name: bytes = b"remember") -> bytes:
    return (
        b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "%s", '
        b'"arguments": %s}}' % (request_id, name, arguments)
    )


def remember_args(content: bytes) -> bytes:
    return b'{"content": "%s", "type": "fact", "scope": "%s"}' % (content, SCOPE.encode())


# (line, the error code it must get, the id it must echo)
HOSTILE_LINES = [
    pytest.param(b'{"jsonrpc": "2.0", "id": 5, "method":', types.PARSE_ERROR, None, id="malformed"),
    pytest.param(b"{not json at all", types.PARSE_ERROR, None, id="garbage"),
    pytest.param(call(6, b'{"x": %s}' % DEEP), types.INVALID_REQUEST, 6, id="200-deep"),
    pytest.param(b"[" * 100_000, types.PARSE_ERROR, None, id="100000-deep"),
    pytest.param(call(7, b"{}", name=b"rem\\ud800"), types.INVALID_REQUEST, 7, id="surrogate-name"),
    pytest.param(remember_args(b"a\xff\xfeb"), types.PARSE_ERROR, None, id="invalid-utf8"),
    pytest.param(call(8, remember_args(b"x" * FIVE_MIB)), types.INVALID_REQUEST, None, id="5MiB"),
    pytest.param(b"[]", types.INVALID_REQUEST, None, id="empty-batch"),
    pytest.param(b'{"jsonrpc": "2.0", "id": 9}', types.INVALID_REQUEST, 9, id="no-method"),
    pytest.param(b'"just a string"', types.INVALID_REQUEST, None, id="not-an-object"),
    pytest.param(b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600, None, id="bool-id"),
]


@pytest.fixture(scope="module")
def stdio_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawStdio]:
    # One server for every hostile line: each must leave it serving the next.
    where = tmp_path_factory.mktemp("stdio")
    server = RawStdio(cairn_env(where), where)
    server.start()
    yield server
    server.close()


@pytest.mark.parametrize(("line", "code", "echoed"), HOSTILE_LINES)
def test_stdio_answers_a_hostile_line_with_a_jsonrpc_error(
    stdio_server: RawStdio, line: bytes, code: int, echoed: int | None
) -> None:
    stdio_server.send(line)
    answer = stdio_server.answer()
    assert answer["jsonrpc"] == "2.0"
    assert answer["id"] == echoed
    assert answer["error"]["code"] == code, answer
    assert answer["error"]["message"]
    # ...and the next request is served as if nothing happened.
    listed = stdio_server.request({"jsonrpc": "2.0", "id": 100, "method": "tools/list"})
    assert listed["id"] == 100 and listed["result"]["tools"]


def test_stdio_answers_a_surrogate_in_tool_arguments_with_a_tool_error(
    env: dict[str, str], tmp_path: Path
) -> None:
    server = RawStdio(env, tmp_path)
    server.start()
    server.send(call(3, remember_args(b"a\\ud800b")))
    answer = server.answer()
    assert answer["id"] == 3 and answer["result"]["isError"] is True
    said = answer["result"]["content"][0]["text"]
    assert said.startswith("error: remember.content holds a lone UTF-16 surrogate (\\ud800)")
    # A valid pair is one character, not a surrogate: stored as written.
    server.send(call(4, remember_args(b"rocket \\ud83d\\ude80 launch")))
    stored = server.answer()
    assert stored["result"]["isError"] is False, stored
    server.close()
    with Cairn.open(settings=Settings(home=Path(env["CAIRN_HOME"]), embedder="hashing")) as mem:
        assert mem.stats(scope=SCOPE)["by_scope"] == {SCOPE: 1}  # only the valid one
        assert mem.store.get_memories([1])[0].content == "rocket \U0001f680 launch"


# HTTP ---------------------------------------------------------------------------------------
# (body, the status, the error code, the id it must echo)
HOSTILE_BODIES = [
    pytest.param(b'{"jsonrpc": "2.0", "id": 5, "method":', 400, -32700, None, id="malformed"),
    pytest.param(call(6, b'{"x": %s}' % DEEP), 400, -32600, 6, id="200-deep"),
    pytest.param(call(7, remember_args(b"a\\ud800b")), 400, -32602, 7, id="surrogate"),
    pytest.param(call(8, remember_args(b"a\xff\xfeb")), 400, -32700, None, id="invalid-utf8"),
    pytest.param(call(9, remember_args(b"x" * FIVE_MIB)), 413, -32600, None, id="5MiB"),
    pytest.param(b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', 400, -32600, None, id="bool"),
    pytest.param(b"[]", 400, -32600, None, id="empty-batch"),
]


@pytest.fixture(scope="module")
def http_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    where = tmp_path_factory.mktemp("http")
    with serving(cairn_env(where), where) as served:
        made = httpx.post(served.url, json=initialize_request(), headers=HEADERS)
        assert made.status_code == 200
        headers = {**HEADERS, "Mcp-Session-Id": made.headers["mcp-session-id"]}
        headers["Mcp-Protocol-Version"] = "2025-06-18"
        yield served.url, headers


@pytest.mark.parametrize(("body", "status", "code", "echoed"), HOSTILE_BODIES)
def test_http_answers_a_hostile_body_with_a_jsonrpc_error(
    http_session: tuple[str, dict[str, str]], body: bytes, status: int, code: int, echoed: int
) -> None:
    url, headers = http_session
    answer = httpx.post(url, content=body, headers=headers, timeout=20)
    assert answer.status_code == status
    assert answer.headers["content-type"].startswith("application/json")
    error: dict[str, Any] = answer.json()
    assert error["jsonrpc"] == "2.0" and error["id"] == echoed
    assert error["error"]["code"] == code and error["error"]["message"], error
    listed = httpx.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                        headers=headers, timeout=20)  # fmt: skip
    assert listed.status_code == 200 and '"tools"' in listed.text


# a store that will not open ----------------------------------------------------------------
def test_stdio_on_a_corrupt_store_lists_tools_and_answers_the_store_error(
    env: dict[str, str], tmp_path: Path
) -> None:
    store = Path(env["CAIRN_HOME"]) / "memory.db"
    garbage = os.urandom(16384)
    store.write_bytes(garbage)
    params = StdioServerParameters(command=CAIRN, args=["mcp"], env=env, cwd=str(tmp_path))

    async def session() -> None:
        async with Client(params, mode="legacy") as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"remember", "recall", "get_memory", "activate"} <= names
            for tool, arguments in [
                ("remember", {"content": "Deploys go through CI.", "type": "fact"}),
                ("recall", {"query": "deploys"}),
                ("get_memory", {"refs": ["mem_1"]}),
            ]:
                result = await client.call_tool(tool, arguments)
                assert result.is_error
                said = result.content[0]
                assert isinstance(said, types.TextContent)
                # One line naming the file and what is wrong with it, whichever layer said it.
                assert said.text.startswith("error: ") and str(store) in said.text
                assert "\n" not in said.text
                assert "database" in said.text
                assert result.structured_content is not None
                assert result.structured_content["error"]["code"].startswith("store")
            assert store.read_bytes() == garbage  # never overwritten
            # Moved aside, the next call opens a fresh store: no restart needed.
            store.rename(store.with_suffix(".bad"))
            made = await client.call_tool(
                "remember", {"content": "Deploys go through CI.", "type": "fact"}
            )
            assert not made.is_error

    anyio.run(session)


def test_serve_on_a_corrupt_store_starts_and_lists_tools(
    env: dict[str, str], tmp_path: Path
) -> None:
    (Path(env["CAIRN_HOME"]) / "memory.db").write_bytes(os.urandom(4096))
    with serving(env, tmp_path) as served:
        listed = httpx.post(served.url, json=initialize_request(), headers=HEADERS)
        assert listed.status_code == 200
        assert json.loads(listed.text.split("data: ", 1)[1])["result"]["serverInfo"]


def test_stdio_on_a_store_it_cannot_open_says_to_check_access(
    env: dict[str, str], tmp_path: Path
) -> None:
    store = Path(env["CAIRN_HOME"]) / "memory.db"
    store.mkdir()  # a directory where the file should be
    params = StdioServerParameters(command=CAIRN, args=["mcp"], env=env, cwd=str(tmp_path))

    async def session() -> None:
        async with Client(params, mode="legacy") as client:
            assert (await client.list_tools()).tools
            result = await client.call_tool("get_memory", {"refs": ["mem_1"]})
            said = result.content[0]
            assert result.is_error and isinstance(said, types.TextContent)
            # The store's own words (or the adapter's fallback): where, and what to check.
            assert said.text.startswith("error: ") and str(store) in said.text
            assert "writ" in said.text

    anyio.run(session)


def test_http_guard_refusals_carry_jsonrpc_bodies(
    http_session: tuple[str, dict[str, str]],
) -> None:
    # The SDK's DNS-rebinding guard answers in plain text; the client still gets JSON-RPC.
    url, headers = http_session
    answer = httpx.post(
        url, json=initialize_request(), headers={**headers, "Origin": "http://evil.example"}
    )
    assert answer.status_code == 403
    assert answer.headers["content-type"].startswith("application/json")
    error = answer.json()
    assert error["jsonrpc"] == "2.0" and error["error"]["code"] == types.INVALID_REQUEST
    assert "Origin" in error["error"]["message"] and "(HTTP 403)" in error["error"]["message"]
    assert int(answer.headers["content-length"]) == len(answer.content)
