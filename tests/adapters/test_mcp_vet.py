"""Line vetting and the HTTP guard rules, unit by unit: whatever bytes arrive, the answer is a
message for the session or a JSON-RPC error that can itself be sent; tokens and ports are
checked before anything listens."""

from __future__ import annotations

import json
import secrets

import mcp_types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.adapters.mcp_http import bearer_credentials, check_port, check_token
from cairn.adapters.mcp_stdio import encode
from cairn.adapters.mcp_vet import MAX_LINE_BYTES, MAX_MESSAGE_DEPTH, Rejected, find_flaw, vet_line
from cairn.errors import InvalidInput

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(line=st.binary(max_size=300) | json_values.map(lambda v: json.dumps(v).encode()))
def test_any_line_is_a_message_an_answer_or_blank(line: bytes) -> None:
    vetted = vet_line(line)
    if isinstance(vetted, Rejected):
        sent = json.loads(encode(vetted.reply))
        assert sent["jsonrpc"] == "2.0" and sent["error"]["code"] < 0 and sent["error"]["message"]
    elif vetted is None:
        assert not line.strip()
    else:
        encode(vetted)  # whatever passes can be sent on


@given(method=st.sampled_from(["tools/list", "ping", "tools/call"]), rid=st.integers(0, 10**6))
def test_a_valid_request_passes_unchanged(method: str, rid: int) -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": {}}).encode()
    vetted = vet_line(line)
    assert isinstance(vetted, types.JSONRPCRequest)
    assert vetted.id == rid and vetted.method == method


@pytest.mark.parametrize(
    ("line", "code", "said"),
    [
        (b'{"jsonrpc": "2.0", "id": 1', types.PARSE_ERROR, "Parse error"),
        (b'{"id": 1, "method": "x\xff"}', types.PARSE_ERROR, "not UTF-8 (byte 0xff at offset 22)"),
        (b"[" * 100_000, types.PARSE_ERROR, "Parse error"),
        (b"x" * (MAX_LINE_BYTES + 1), types.INVALID_REQUEST, f"longer than {MAX_LINE_BYTES}"),
        (b'{"jsonrpc": "2.0", "id": 4, "method": "a\\ud800"}', types.INVALID_REQUEST, "surrogate"),
        (b'{"jsonrpc": "1.0", "id": 5, "method": "ping"}', types.INVALID_REQUEST, "JSON-RPC 2.0"),
    ],
)
def test_bad_lines_say_what_is_wrong(line: bytes, code: int, said: str) -> None:
    vetted = vet_line(line)
    assert isinstance(vetted, Rejected)
    assert vetted.reply.error.code == code and said in vetted.reply.error.message


@pytest.mark.parametrize("rid", [True, None, 1.5, [1], {"a": 1}])
def test_a_request_whose_id_is_not_a_string_or_integer_is_answered(rid: object) -> None:
    # The SDK reads these as notifications, which nobody answers.
    line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/list"}).encode()
    vetted = vet_line(line)
    assert isinstance(vetted, Rejected) and vetted.reply.id is None
    assert "id must be a string or an integer" in vetted.reply.error.message


def test_the_request_id_is_echoed_when_there_is_a_valid_one() -> None:
    deep: object = "leaf"
    for _ in range(MAX_MESSAGE_DEPTH + 1):
        deep = [deep]
    for rid, echoed in [(7, 7), ("a", "a")]:
        line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "ping", "params": {"x": deep}})
        vetted = vet_line(line.encode())
        assert isinstance(vetted, Rejected) and vetted.reply.id == echoed
        assert "nests more than 64 levels" in vetted.reply.error.message


def test_a_surrogate_in_tool_arguments_is_left_to_the_tool_layer() -> None:
    call = b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": %s}'
    passed = vet_line(call % b'{"name": "remember", "arguments": {"content": "\\ud800"}}')
    assert isinstance(passed, types.JSONRPCRequest)
    refused = vet_line(call % b'{"name": "re\\udc00member", "arguments": {}}')
    assert isinstance(refused, Rejected) and refused.reply.id == 3
    beside = vet_line(call % b'{"name": "remember", "arguments2": "\\ud800"}')
    assert isinstance(beside, Rejected)


def test_find_flaw_names_the_path() -> None:
    flaw = find_flaw({"memories": [{"content": "ok"}, {"tags": ["a\udfff"]}]}, max_depth=8,
                     root="remember")  # fmt: skip
    assert flaw is not None and flaw.where == "remember.memories[1].tags[0]"
    assert "(\\udfff) at character 1" in flaw.problem
    key = find_flaw({"\ud800": 1}, max_depth=8, root="r")
    assert key is not None and key.where == "r.\\ud800" and "(a key)" in key.problem
    assert find_flaw({"a": [[["fine 🚀"]]]}, max_depth=8, root="r") is None


def test_an_answer_that_cannot_be_encoded_becomes_an_error_for_its_request() -> None:
    answer = types.JSONRPCResponse(jsonrpc="2.0", id=9, result={"text": "\ud800"})
    sent = json.loads(encode(answer))
    assert sent["id"] == 9 and sent["error"]["code"] == types.INTERNAL_ERROR


# HTTP rules ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "token",
    ["x", "", "a" * 200, "ab" * 16, "abcdefg" * 9, "0123456789" * 3 + "01", "Short-of-32-chars!"],
)
def test_weak_tokens_are_refused(token: str) -> None:
    with pytest.raises(InvalidInput, match="too weak") as refused:
        check_token(token)
    if len(token) > 3:
        assert token not in refused.value.message  # a secret is never echoed


@pytest.mark.parametrize(
    "token",
    [secrets.token_urlsafe(32), secrets.token_hex(16), "0123456789" * 4, "Tr0ub4dor&3" * 3],
)
def test_strong_tokens_pass(token: str) -> None:
    check_token(token)


def test_random_128_bit_hex_tokens_pass() -> None:
    # What `openssl rand -hex 16` prints. Only a draw of 32 decimal digits, about 3 in 10^7,
    # would be refused (it reads as a decimal token of 106 bits).
    for _ in range(100):
        check_token(secrets.token_hex(16))


@pytest.mark.parametrize("token", ["é" * 40, "has space " * 4, "tab\t" * 10])
def test_tokens_that_cannot_travel_in_a_header_are_refused(token: str) -> None:
    with pytest.raises(InvalidInput, match="printable ASCII"):
        check_token(token)


@pytest.mark.parametrize(
    ("header", "token"),
    [
        (b"Bearer abc", b"abc"), (b"bearer abc", b"abc"), (b"BEARER abc", b"abc"),
        (b"  Bearer   abc  ", b"abc"), (b"Basic abc", None), (b"abc", None), (b"", None),
        (b"Bearerabc", None),
    ],
)  # fmt: skip
def test_the_bearer_scheme_is_case_insensitive(header: bytes, token: bytes | None) -> None:
    assert bearer_credentials(header) == token


@pytest.mark.parametrize("port", [-1, 65536, 99999])
def test_ports_out_of_range_are_refused(port: int) -> None:
    with pytest.raises(InvalidInput, match=f"port {port} is out of range"):
        check_port(port)
    for fine in (0, 1, 8765, 65535):
        check_port(fine)
