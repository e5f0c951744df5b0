"""The MCP server as real processes: `cairn mcp` over stdio, `cairn serve` over streamable HTTP,
driven by the official SDK client, by raw HTTP, and by the MCP Inspector's command-line mode.

Every server runs `.venv/bin/cairn` with its own `CAIRN_HOME` and the deterministic embedder.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).parent))

from mcpkit import CAIRN, HEADERS, cairn_env, initialize_request, serving

from cairn import Cairn
from cairn.adapters.mcp_surface import CORE, SESSIONS
from cairn.config import Settings

SCOPE = "project:example/processes"
INSPECTOR = "@modelcontextprotocol/inspector@0.15"
TOKEN = "tok-0123456789abcdefghijklmnopqrstuv"  # 36 characters, 33 different


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return cairn_env(tmp_path)


def stored(env: dict[str, str]) -> Cairn:
    settings = Settings(home=Path(env["CAIRN_HOME"]), embedder="hashing")
    return Cairn.open(settings=settings)


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


# stdio --------------------------------------------------------------------------------------
def stdio(env: dict[str, str], cwd: Path, name: str = "stdio-test") -> Client:
    params = StdioServerParameters(command=CAIRN, args=["mcp"], env=env, cwd=str(cwd))
    return Client(params, mode="legacy", client_info=types.Implementation(name=name, version="1"))


def test_stdio_server_serves_tools(env: dict[str, str], tmp_path: Path) -> None:
    async def session() -> None:
        async with stdio(env, tmp_path) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"remember", "recall", "activate", "commit"} <= names
            made = await client.call_tool(
                "remember", {"content": "CI runs on Python 3.11.", "type": "constraint"}
            )
            assert not made.is_error, text(made)
            assert made.structured_content is not None
            bad = await client.call_tool("remember", {"content": " ", "type": "fact"})
            assert bad.is_error and text(bad).startswith("error: ")
            found = await client.call_tool("recall", {"query": "which python does CI use"})
            assert found.structured_content is not None
            assert found.structured_content["hits"][0]["ref"] == made.structured_content["ref"]

    anyio.run(session)
    with stored(env) as mem:
        memory = mem.store.get_memories([1])[0]
        assert memory.integration == "stdio-test"
        assert memory.scope == mem.scope_for(cwd=tmp_path)


@pytest.mark.slow
def test_several_stdio_servers_on_one_store_lose_no_write(
    env: dict[str, str], tmp_path: Path
) -> None:
    servers, writes = 3, 50

    async def writer(n: int) -> None:
        async with stdio(env, tmp_path, name=f"agent-{n}") as client:
            for i in range(writes):
                # Words of its own for every note, so dedup never merges two of them.
                words = " ".join(f"{stem}{n}q{i}" for stem in ("amber", "cedar", "fjord", "quartz"))
                result = await client.call_tool(
                    "remember", {"content": f"Note {words}.", "type": "fact", "scope": SCOPE}
                )
                assert result.structured_content is not None, text(result)
                assert result.structured_content["disposition"] == "created"

    async def all_writers() -> None:
        async with anyio.create_task_group() as group:
            for n in range(servers):
                group.start_soon(writer, n)

    anyio.run(all_writers)
    with stored(env) as mem:
        assert mem.stats(scope=SCOPE)["by_scope"][SCOPE] == servers * writes


# streamable HTTP ----------------------------------------------------------------------------
def test_http_with_a_token_answers_401_without_it(env: dict[str, str], tmp_path: Path) -> None:
    with serving(env, tmp_path, "--token", TOKEN) as served:
        url = served.url
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        for auth in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
            refused = httpx.post(url, json=initialize_request(), headers={**HEADERS, **auth})
            assert refused.status_code == 401
            assert refused.headers["www-authenticate"].startswith("Bearer")
        allowed = httpx.post(
            url,
            json=initialize_request(),
            headers={**HEADERS, "Authorization": f"Bearer {TOKEN}"},
        )
        assert allowed.status_code == 200

        async def session() -> None:
            http = httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
            transport = streamable_http_client(url, http_client=http)
            info = types.Implementation(name="http-test", version="7")
            async with Client(transport, client_info=info) as client:
                made = await client.call_tool(
                    "remember", {"content": "Staging is at staging.acme.dev.", "type": "fact",
                                 "scope": SCOPE},
                )  # fmt: skip
                assert not made.is_error, text(made)
                found = await client.call_tool("recall", {"query": "staging", "scope": SCOPE})
                assert "Staging is at staging.acme.dev." in text(found)

        anyio.run(session)
    with stored(env) as mem:
        assert mem.store.get_memories([1])[0].integration == "http-test"


def test_http_refuses_to_bind_beyond_loopback_without_a_token(
    env: dict[str, str], tmp_path: Path
) -> None:
    done = subprocess.run(
        [CAIRN, "serve", "--host", "0.0.0.0", "--port", "0"],
        env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith("error: refusing to serve on 0.0.0.0 without a token")
    assert "--token" in done.stderr


def serve_refused(env: dict[str, str], cwd: Path, *args: str) -> str:
    """`cairn serve ARGS` must stop at once with one `error:` line and exit 2; that line."""
    done = subprocess.run(
        [CAIRN, "serve", *args], env=env, cwd=str(cwd), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    return done.stderr


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
@pytest.mark.parametrize(
    "weak",
    ["x", "correct-horse-battery", "a" * 64, "ab" * 32, "abcdefg" * 9],
)
def test_http_refuses_a_weak_token(
    env: dict[str, str], tmp_path: Path, host: str, weak: str
) -> None:
    said = serve_refused(env, tmp_path, "--host", host, "--port", "0", "--token", weak)
    assert "too weak" in said and "32 characters" in said and "--new-token" in said
    if len(weak) > 3:
        assert weak not in said  # a secret is never echoed


def test_http_refuses_a_token_that_cannot_travel_in_a_header(
    env: dict[str, str], tmp_path: Path
) -> None:
    said = serve_refused(env, tmp_path, "--port", "0", "--token", "é" * 40)
    assert "printable ASCII" in said


@pytest.mark.parametrize("port", ["99999", "-1", "65536"])
def test_http_refuses_a_port_out_of_range(env: dict[str, str], tmp_path: Path, port: str) -> None:
    said = serve_refused(env, tmp_path, "--port", port)
    assert said.startswith(f"error: port {port} is out of range") and "65535" in said
    in_env = serve_refused({**env, "CAIRN_HTTP_PORT": port}, tmp_path)
    assert in_env.startswith(f"error: port {port} is out of range")


def test_http_new_token_prints_a_fresh_token_and_serves_with_it(
    env: dict[str, str], tmp_path: Path
) -> None:
    with serving(env, tmp_path, "--host", "0.0.0.0", "--new-token") as served:
        (token,) = served.stdout_lines
        assert len(token) >= 43 and re.fullmatch(r"[A-Za-z0-9_-]+", token)
        local = served.url.replace("0.0.0.0", "127.0.0.1")
        refused = httpx.post(local, json=initialize_request(), headers=HEADERS)
        assert refused.status_code == 401
        body = refused.json()
        assert body["jsonrpc"] == "2.0" and body["error"]["message"].startswith("missing or wrong")
        # The scheme is case-insensitive (RFC 9110 §11.1): lowercase and shouted both pass.
        for scheme in ("bearer", "BEARER", "Bearer"):
            allowed = httpx.post(
                local,
                json=initialize_request(),
                headers={**HEADERS, "Authorization": f"{scheme} {token}"},
            )
            assert allowed.status_code == 200, scheme
        wrong = httpx.post(
            local, json=initialize_request(),
            headers={**HEADERS, "Authorization": f"bearer {token[:-1]}"},
        )  # fmt: skip
        assert wrong.status_code == 401
    with serving(env, tmp_path, "--new-token") as again:
        assert again.stdout_lines != [token]  # fresh each time
    said = serve_refused(env, tmp_path, "--port", "0", "--token", TOKEN, "--new-token")
    assert "--token or --new-token" in said


def test_http_beyond_loopback_with_a_token_from_the_environment(
    env: dict[str, str], tmp_path: Path
) -> None:
    with serving({**env, "CAIRN_HTTP_TOKEN": TOKEN}, tmp_path, "--host", "0.0.0.0") as served:
        url = served.url
        assert url.startswith("http://0.0.0.0:")
        local = url.replace("0.0.0.0", "127.0.0.1")
        refused = httpx.post(local, json=initialize_request(), headers=HEADERS)
        assert refused.status_code == 401
        allowed = httpx.post(
            local,
            json=initialize_request(),
            headers={**HEADERS, "Authorization": f"Bearer {TOKEN}"},
        )
        assert allowed.status_code == 200


def test_http_sends_no_cors_headers_unless_configured(env: dict[str, str], tmp_path: Path) -> None:
    preflight = {
        "Origin": "http://app.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
    }
    with serving(env, tmp_path) as served:
        url = served.url
        answer = httpx.options(url, headers=preflight)
        assert "access-control-allow-origin" not in answer.headers
        open_post = httpx.post(url, json=initialize_request(), headers=HEADERS)
        assert open_post.status_code == 200  # loopback without a token needs none
    with serving(env, tmp_path, "--cors-origin", "http://app.example") as served:
        url = served.url
        answer = httpx.options(url, headers=preflight)
        assert answer.status_code == 200
        assert answer.headers["access-control-allow-origin"] == "http://app.example"
        other = httpx.options(url, headers={**preflight, "Origin": "http://evil.example"})
        assert other.headers.get("access-control-allow-origin") != "http://evil.example"


# MCP Inspector ------------------------------------------------------------------------------
def inspector(env: dict[str, str], cwd: Path, *args: str) -> Any:
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx (Node) is not installed")
    command = [npx, "-y", INSPECTOR, "--cli"]
    command += ["-e", f"CAIRN_HOME={env['CAIRN_HOME']}", "-e", "CAIRN_EMBEDDER=hashing"]
    command += [CAIRN, "mcp", *args]
    done = subprocess.run(
        command, env=env, cwd=str(cwd), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


@pytest.mark.slow
def test_mcp_inspector_cli_lists_and_calls_tools(env: dict[str, str], tmp_path: Path) -> None:
    listed = inspector(env, tmp_path, "--method", "tools/list")
    names = {tool["name"] for tool in listed["tools"]}
    assert {"remember", "recall", "activate", "feedback", "commit"} <= names
    remember = next(tool for tool in listed["tools"] if tool["name"] == "remember")
    assert remember["annotations"].get("readOnlyHint", False) is False

    made = inspector(
        env, tmp_path, "--method", "tools/call", "--tool-name", "remember",
        "--tool-arg", "content=Releases are tagged vX.Y.Z.", "--tool-arg", "type=decision",
        "--tool-arg", f"scope={SCOPE}",
    )  # fmt: skip
    assert not made.get("isError"), made
    assert made["structuredContent"]["disposition"] == "created"
    found = inspector(
        env, tmp_path, "--method", "tools/call", "--tool-name", "recall",
        "--tool-arg", "query=how are releases tagged", "--tool-arg", f"scope={SCOPE}",
        "--tool-arg", "limit=3",
    )  # fmt: skip
    assert found["content"][0]["text"].startswith(made["structuredContent"]["ref"])
    assert "Releases are tagged vX.Y.Z." in found["content"][0]["text"]


# tool sets ----------------------------------------------------------------------------------
def test_the_tool_set_comes_from_the_flag_else_the_environment(
    env: dict[str, str], tmp_path: Path
) -> None:
    async def names(args: list[str], extra: dict[str, str]) -> set[str]:
        params = StdioServerParameters(
            command=CAIRN, args=args, env={**env, **extra}, cwd=str(tmp_path)
        )
        async with Client(params, mode="legacy") as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    async def session() -> None:
        assert await names(["mcp"], {}) == set(CORE)
        assert await names(["mcp"], {"CAIRN_MCP_TOOLS": "sessions"}) == set(SESSIONS)
        assert await names(["mcp", "--tools", "core"], {"CAIRN_MCP_TOOLS": "all"}) == set(CORE)

    anyio.run(session)


def test_serve_serves_the_chosen_tool_set(env: dict[str, str], tmp_path: Path) -> None:
    with serving(env, tmp_path, "--tools", "sessions") as served:

        async def session() -> None:
            async with Client(streamable_http_client(served.url)) as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                assert names == set(SESSIONS)

        anyio.run(session)


# a whole agent session, as the Inspector CLI and the SDK client drive it --------------------
def inspector_http(env: dict[str, str], cwd: Path, url: str, *args: str) -> Any:
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx (Node) is not installed")
    command = [npx, "-y", INSPECTOR, "--cli", url, "--transport", "http", *args]
    done = subprocess.run(
        command, env=env, cwd=str(cwd), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


def tool_args(arguments: dict[str, Any]) -> list[str]:
    """Inspector `--tool-arg` pairs; JSON for anything but a string (it parses them back)."""
    out = []
    for key, value in arguments.items():
        shown = value if isinstance(value, str) else json.dumps(value)
        out += ["--tool-arg", f"{key}={shown}"]
    return out


Caller = Any  # (tool, arguments) -> the result as JSON, with structuredContent


def whole_session(call: Caller) -> None:
    """activate → recall → feedback → remember citing what helped → commit, in SCOPE."""
    seed = call(
        "remember",
        {
            "content": "Orders get a nullable column first, then a backfill.",
            "type": "lesson",
            "scope": SCOPE,
            "source_ref": "db/orders.sql",
        },
    )
    assert not seed.get("isError"), seed
    brief = call("activate", {"task": "add a discount column to orders", "scope": SCOPE})
    session = brief["structuredContent"]["session_id"]
    found = call("recall", {"query": "add a column to orders", "session_id": session})
    hits = found["structuredContent"]["hits"]
    assert hits and hits[0]["ref"] == seed["structuredContent"]["ref"]
    early = call("commit", {"session_id": session, "outcome": "success", "summary": "Added."})
    assert early.get("isError") and "error" in early["structuredContent"]
    for retrieval, shown in (
        (brief["structuredContent"]["retrieval_id"], brief["structuredContent"]["hits"]),
        (found["structuredContent"]["retrieval_id"], hits),
    ):
        if not shown:
            continue  # a retrieval that returned nothing waits for no feedback
        said = call(
            "feedback",
            {
                "session_id": session,
                "retrieval_id": retrieval,
                "assessments": [{"ref": h["ref"], "used": True, "effect": "helped"} for h in shown],
            },
        )
        assert not said.get("isError"), said
    cited = call(
        "remember",
        {
            "content": "The discount column shipped nullable, no lock.",
            "type": "decision",
            "session_id": session,
            "used": [hits[0]["ref"]],
        },
    )
    assert cited["structuredContent"]["disposition"] == "created", cited
    done = call(
        "commit",
        {
            "session_id": session,
            "outcome": "success",
            "summary": "Added orders.discount_code.",
            "used": [hits[0]["ref"]],
        },
    )
    assert done["structuredContent"]["status"] == "committed", done
    assert hits[0]["ref"] in done["structuredContent"]["cited"]


@pytest.mark.slow
def test_a_whole_session_through_the_inspector_cli_over_stdio(
    env: dict[str, str], tmp_path: Path
) -> None:
    def call(tool: str, arguments: dict[str, Any]) -> Any:
        return inspector(env, tmp_path, "--method", "tools/call", "--tool-name", tool,
                         *tool_args(arguments))  # fmt: skip

    whole_session(call)


@pytest.mark.slow
def test_a_whole_session_through_the_inspector_cli_over_http(
    env: dict[str, str], tmp_path: Path
) -> None:
    with serving(env, tmp_path) as served:

        def call(tool: str, arguments: dict[str, Any]) -> Any:
            return inspector_http(env, tmp_path, served.url, "--method", "tools/call",
                                  "--tool-name", tool, *tool_args(arguments))  # fmt: skip

        whole_session(call)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_whole_session_through_the_sdk_client(
    env: dict[str, str], tmp_path: Path, transport: str
) -> None:
    results: list[tuple[str, dict[str, Any]]] = []

    async def sdk_call(client: Client, tool: str, arguments: dict[str, Any]) -> Any:
        result = await client.call_tool(tool, arguments)
        results.append((tool, arguments))
        return result.model_dump(by_alias=True, exclude_none=True, mode="json")

    def drive_with(client_factory: Any) -> None:
        # whole_session is plain code; it runs on a worker thread and calls back into the loop.
        async def session() -> None:
            async with client_factory() as client:

                async def step(tool: str, arguments: dict[str, Any]) -> Any:
                    return await sdk_call(client, tool, arguments)

                await anyio.to_thread.run_sync(
                    lambda: whole_session(
                        lambda tool, arguments: anyio.from_thread.run(step, tool, arguments)
                    )
                )

        anyio.run(session)

    if transport == "stdio":
        drive_with(lambda: stdio(env, tmp_path, name="sdk-session"))
    else:
        with serving(env, tmp_path) as served:
            drive_with(lambda: Client(streamable_http_client(served.url)))
    assert [tool for tool, _ in results][-1] == "commit"
