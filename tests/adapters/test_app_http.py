"""The app over HTTP (Starlette's test client on the real app and a real store, both backends):
the door (token, cookie, host, CSRF, origin, headers), every page and its JSON form, the
actions and what the store recorded, escaped output, and hostile parameters."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from cairn import Cairn
from cairn.adapters.app.guard import COOKIE, cookie_value
from cairn.adapters.app.routes import build_app
from cairn.adapters.mcp_http import http_app

SCOPE = "project:example/app"
TOKEN = "app-0123456789abcdefghijklmnopqrstuvwxyz"
HOSTILE = "<script>alert('owned')</script> and <img src=x onerror=alert(1)> \"quoted\""
BASE = "http://127.0.0.1:8766"
PAGES = ["/scopes", "/memories", "/sessions", "/procedures", "/tidy", "/stats"]


def client(mem: Cairn, token: str | None = None, base: str = BASE) -> TestClient:
    return TestClient(build_app(lambda: mem, token=token, loopback=True), base_url=base)


def csrf_of(answer: Any) -> str:
    found = re.search(r'name="cairn-csrf" content="([^"]+)"', answer.text)
    assert found, answer.text[:300]
    return found.group(1)


@pytest.fixture
def app(mem: Cairn) -> Iterator[TestClient]:
    with client(mem) as opened:
        yield opened


def test_every_page_and_its_json(mem: Cairn, app: TestClient) -> None:
    ref = mem.remember("Deploys go out on Tuesdays", type="decision", scope=SCOPE).memory_id
    for path in [*PAGES, f"/memories/{ref}"]:
        page = app.get(path, params={"scope": SCOPE})
        assert page.status_code == 200, path
        assert page.headers["content-type"].startswith("text/html")
        data = app.get(path + ".json", params={"scope": SCOPE})
        assert data.status_code == 200 and data.json()["scope"] == SCOPE, path
    listed = app.get("/memories.json", params={"scope": SCOPE}).json()
    assert [i["memory"]["ref"] for i in listed["page"]["items"]] == [ref]
    card = app.get(f"/memories/{ref}.json", params={"scope": SCOPE}).json()
    assert card["record"]["memory"]["content"] == "Deploys go out on Tuesdays"
    assert app.get("/", follow_redirects=False).headers["location"] == "/memories"


def test_memory_text_is_escaped_everywhere(mem: Cairn, app: TestClient) -> None:
    ref = mem.remember(HOSTILE, type="warning", scope=SCOPE, reason=HOSTILE,
                       source_ref="<b>x</b>.py").memory_id  # fmt: skip
    mem.remember(HOSTILE + " again", type="warning", scope=SCOPE, dedup=False)
    mem.activate(HOSTILE, scope=SCOPE)
    for path in [*PAGES, f"/memories/{ref}"]:
        for params in ({"scope": SCOPE}, {"scope": SCOPE, "q": HOSTILE}):
            html = app.get(path, params=params).text
            assert "<script>alert" not in html and "<img src=x" not in html, path
            assert "<b>x</b>" not in html
    html = app.get(f"/memories/{ref}", params={"scope": SCOPE}).text
    assert "&lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt;" in html


def test_security_headers_on_every_answer(mem: Cairn, app: TestClient) -> None:
    for path in ["/memories", "/memories.json", "/static/app.css", "/nope"]:
        headers = app.get(path).headers
        assert "script-src 'self'" in headers["content-security-policy"], path
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff"
        assert "access-control-allow-origin" not in headers


def test_a_foreign_host_is_refused_on_loopback(mem: Cairn) -> None:
    with client(mem, base="http://attacker.example") as foreign:
        answer = foreign.get("/memories")
    assert answer.status_code == 403 and "loopback" in answer.json()["error"]["message"]


def test_the_token_guards_every_request(mem: Cairn) -> None:
    ref = mem.remember("Deploys go out on Tuesdays", type="decision", scope=SCOPE).memory_id
    with client(mem, TOKEN) as app:
        for path in ["/", "/memories", "/memories.json", f"/memories/{ref}", "/static/app.js"]:
            assert app.get(path, follow_redirects=False).status_code == 401, path
        assert app.post(f"/memories/{ref}/pin", data={"scope": SCOPE}).status_code == 401
        assert app.get("/memories", params={"token": "x" * 40}).status_code == 401
        assert app.get("/memories", headers={"Authorization": "Bearer nope"}).status_code == 401
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        assert app.get("/memories.json", params={"scope": SCOPE}, headers=bearer).status_code == 200
        # A bearer client needs no CSRF value: a browser never sends the header across sites.
        pinned = app.post(f"/memories/{ref}/pin", data={"scope": SCOPE},
                          headers={**bearer, "Accept": "application/json"})  # fmt: skip
        assert pinned.status_code == 200 and pinned.json()["result"]["pinned"] is True
    assert mem.get_memory([ref], scope=SCOPE).records[0].memory.pinned


def test_the_token_in_the_address_becomes_a_strict_cookie(mem: Cairn) -> None:
    with client(mem, TOKEN) as app:
        answer = app.get("/memories", params={"token": TOKEN, "scope": SCOPE},
                         follow_redirects=False)  # fmt: skip
        assert answer.status_code == 303
        assert answer.headers["location"] == "/memories?scope=project%3Aexample%2Fapp"
        cookie = answer.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and TOKEN not in cookie
        assert cookie_value(TOKEN) in cookie
        assert app.get("/memories", params={"scope": SCOPE}).status_code == 200  # the cookie
        app.cookies.set(COOKIE, "forged")
        assert app.get("/memories").status_code == 401
    with client(mem, TOKEN) as app:
        evil = app.get("//attacker.example/x", params={"token": TOKEN}, follow_redirects=False)
        assert evil.headers["location"].startswith("/") and "//" not in evil.headers["location"]


def test_a_post_needs_the_pages_csrf_value_and_its_own_origin(mem: Cairn, app: TestClient) -> None:
    ref = mem.remember("Deploys go out on Tuesdays", type="decision", scope=SCOPE).memory_id
    csrf = csrf_of(app.get(f"/memories/{ref}", params={"scope": SCOPE}))
    missing = app.post(f"/memories/{ref}/pin", data={"scope": SCOPE})
    assert missing.status_code == 400 and "reload the page" in missing.text
    forged = app.post(f"/memories/{ref}/pin", data={"scope": SCOPE, "csrf": "x" * 43})
    assert forged.status_code == 400
    cross = app.post(f"/memories/{ref}/pin", data={"scope": SCOPE, "csrf": csrf},
                     headers={"Origin": "http://attacker.example"})  # fmt: skip
    assert cross.status_code == 403
    null = app.post(f"/memories/{ref}/pin", data={"scope": SCOPE, "csrf": csrf},
                    headers={"Origin": "null"})  # fmt: skip
    assert null.status_code == 403
    assert not mem.get_memory([ref], scope=SCOPE).records[0].memory.pinned
    done = app.post(f"/memories/{ref}/pin", data={"scope": SCOPE, "csrf": csrf},
                    headers={"Origin": BASE}, follow_redirects=False)  # fmt: skip
    assert done.status_code == 303 and "did=pin" in done.headers["location"]
    assert mem.get_memory([ref], scope=SCOPE).records[0].memory.pinned


def post(app: TestClient, path: str, **form: str) -> Any:
    csrf = csrf_of(app.get("/memories", params={"scope": SCOPE}))
    return app.post(path, data={"scope": SCOPE, "csrf": csrf, **form}, follow_redirects=False)


def test_actions_go_through_the_facade_and_the_store_records_them(
    mem: Cairn, app: TestClient
) -> None:
    ref = mem.remember("The API rate limit is 100 rpm", type="fact", scope=SCOPE).memory_id
    assert post(app, f"/memories/{ref}/confirm").status_code == 303
    memory = mem.get_memory([ref], scope=SCOPE).records[0].memory
    assert memory.confirmed == 1 and "person" in memory.evidence["people"]
    assert post(app, f"/memories/{ref}/unconfirm").status_code == 303
    assert mem.get_memory([ref], scope=SCOPE).records[0].memory.confirmed == 0

    corrected = post(app, f"/memories/{ref}/correct", content="The API rate limit is 200 rpm",
                     reason="raised")  # fmt: skip
    assert corrected.status_code == 303
    record = mem.get_memory([ref], scope=SCOPE).records[0]
    new = f"mem_{record.memory.replaced_by}"
    assert record.memory.status == "replaced" and new in corrected.headers["location"]
    assert post(app, f"/memories/{new}/unpin").status_code == 303  # already unpinned: fine

    blank = post(app, f"/memories/{new}/forget", reason=" ")
    assert blank.status_code == 400 and "reason is blank" in blank.text
    assert post(app, f"/memories/{new}/forget", reason="moved to the gateway").status_code == 303
    forgotten = mem.get_memory([new], scope=SCOPE).records[0]
    assert forgotten.memory.status == "retired"
    assert forgotten.retire_reason == "moved to the gateway"

    wrong = post(app, f"/memories/{new}/purge", confirm_ref="mem_1")
    assert wrong.status_code == 400 and f"type {new}" in wrong.text
    assert mem.get_memory([new], scope=SCOPE).records[0].memory.content  # nothing erased
    assert post(app, f"/memories/{new}/purge", confirm_ref=new).status_code == 303
    assert mem.get_memory([new], scope=SCOPE).records[0].memory.status == "purged"


def test_tidy_accept_and_decline(mem: Cairn, app: TestClient) -> None:
    for text in (
        "Webhooks retry five times with backoff",
        "Webhooks retry five times w/ backoff",
        "Logs rotate daily at midnight UTC",
        "Logs rotate daily at midnight (UTC)",
    ):
        mem.remember(text, type="fact", scope=SCOPE, dedup=False)  # fmt: skip
    proposals = mem.tidy(scope=SCOPE)
    assert len(proposals) >= 2
    first, second = proposals[0], proposals[1]
    assert post(app, f"/tidy/{first.id}/accept").status_code == 303
    assert post(app, f"/tidy/{second.id}/decline").status_code == 303
    statuses = {p.id: p.status for p in mem.tidy(scope=SCOPE)}
    assert first.id not in statuses and second.id not in statuses
    again = post(app, f"/tidy/{first.id}/accept")
    assert again.status_code in (404, 409) and "error:" in again.text


def test_errors_are_one_line_never_a_traceback(mem: Cairn, app: TestClient) -> None:
    cases = [
        (app.get("/memories/mem_999", params={"scope": SCOPE}), 404),
        (app.get("/memories/nonsense"), 404),
        (app.get("/memories", params={"type": "factoid"}), 400),
        (app.get("/memories", params={"cursor": "abc"}), 400),
        (app.get("/memories", params={"size": "100000"}), 400),
        (app.get("/memories", params=[("q", "a"), ("q", "b")]), 400),
        (app.get("/nope"), 404),
        (post(app, "/memories/mem_1/explode"), 404),
        (post(app, "/acts/act_99/undo"), 404),
    ]
    for answer, status in cases:
        assert answer.status_code == status, answer.text[:200]
        assert "Traceback" not in answer.text and "error: " in answer.text
    data = app.get("/memories.json", params={"type": "factoid"}).json()
    assert data["error"]["code"] == "invalid_input" and "factoid" in data["error"]["message"]


def test_serve_routes_mcp_and_the_app_apart(mem: Cairn) -> None:
    async def mcp(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"mcp"})

    app = build_app(lambda: mem, token=TOKEN, loopback=True)
    both = http_app(mcp, token=TOKEN, cors_origins=[], beside=app)
    served = TestClient(both, base_url=BASE)  # no lifespan: the stand-in MCP app has none
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    assert served.get("/mcp").status_code == 401
    assert served.get("/mcp", headers=bearer).text == "mcp"
    assert served.get("/memories").status_code == 401
    assert served.get("/memories", headers=bearer).status_code == 200
    assert served.get("/memories", params={"token": TOKEN}).status_code == 200


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(
    name=st.sampled_from(["q", "type", "tag", "status", "citation", "cursor", "size", "scope"]),
    value=st.text(max_size=60),
    path=st.sampled_from(["/memories", "/memories.json", "/stats", "/scopes.json", "/tidy"]),
)
def test_hostile_parameters_get_an_answer_never_a_crash(
    app: TestClient, name: str, value: str, path: str
) -> None:
    answer = app.get(path, params={name: value})
    assert answer.status_code in (200, 400, 404), answer.text[:300]
    assert "Traceback" not in answer.text and "something went wrong" not in answer.text


def test_forms_are_bounded_and_urlencoded(mem: Cairn, app: TestClient) -> None:
    ref = mem.remember("Deploys go out on Tuesdays", type="decision", scope=SCOPE).memory_id
    huge = post(app, f"/memories/{ref}/correct", content="x" * 300_000, reason="long")
    assert huge.status_code == 400 and "over 256 KB" in huge.text
    csrf = csrf_of(app.get("/memories"))
    multipart = app.post(f"/memories/{ref}/pin", data={"csrf": csrf}, files={"f": b"x"})
    assert multipart.status_code == 400 and "urlencoded" in multipart.text
    nul = post(app, f"/memories/{ref}/correct", content="a\x00b", reason="nul")
    assert nul.status_code == 400 and "error: " in nul.text
    assert mem.get_memory([ref], scope=SCOPE).records[0].memory.status == "active"


def test_a_browser_without_the_token_gets_a_page(mem: Cairn) -> None:
    with client(mem, TOKEN) as app:
        answer = app.get("/memories", headers={"Accept": "text/html"})
    assert answer.status_code == 401 and answer.headers["content-type"].startswith("text/html")
    assert "error: missing or wrong token" in answer.text
    assert answer.headers["www-authenticate"].startswith("Bearer")


def test_cors_only_for_configured_origins(mem: Cairn) -> None:
    from cairn.adapters.app.server import with_cors

    app = build_app(lambda: mem, token=TOKEN, loopback=True)
    assert with_cors(app, []) is app
    allowed = TestClient(with_cors(app, ["http://good.example"]), base_url=BASE)
    preflight = {"Origin": "http://good.example", "Access-Control-Request-Method": "POST"}
    answer = allowed.options("/memories/mem_1/pin", headers=preflight)
    assert answer.headers["access-control-allow-origin"] == "http://good.example"
    other = allowed.options("/memories/mem_1/pin", headers={**preflight, "Origin": "http://x.io"})
    assert "access-control-allow-origin" not in other.headers
    assert allowed.get("/memories", headers={"Origin": "http://good.example"}).status_code == 401
