"""The app's door: the rules of `cairn serve` (mcp_http.py), made to work for a browser.

* **Host.** Served on loopback, a request must name a loopback host (`Host:`), so a page on
  another site cannot reach the app through DNS rebinding. Off loopback the token guards.
* **Token.** With a token, every request must carry it: `Authorization: Bearer <token>` (API
  clients), or the app's cookie. A browser gets the cookie by opening any page once with
  `?token=<token>`: the answer sets it (HttpOnly, SameSite=Strict, never the token itself but
  an HMAC of it) and redirects to the same page without the token, so the token leaves the
  address bar and the history. A wrong or missing token gets 401 and nothing else.
* **Cross-site writes.** Every POST needs the page's CSRF value (a form field, or the
  `X-Cairn-CSRF` header) unless it is authorised by the `Authorization` header, which a
  browser never sends across sites on its own; a POST whose `Origin` is not this server's
  is refused outright. SameSite=Strict keeps the cookie off cross-site requests as well.
* **Headers.** A strict Content-Security-Policy (only the app's own scripts and styles, no
  inline script, no framing), `nosniff`, no referrer to other sites, no caching of pages.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import json
from urllib.parse import urlencode

from starlette.datastructures import URL, Headers, MutableHeaders, QueryParams
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cairn.adapters.mcp_http import bearer_credentials, is_loopback

COOKIE = "cairn_app"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-cairn-csrf"
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    # same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` on its own
    # form posts, which the origin check must refuse.
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}


def cookie_value(token: str) -> str:
    """What the cookie holds: derived from the token, so a stolen cookie is not the token."""
    return hmac.new(token.encode(), b"cairn-app-cookie", hashlib.sha256).hexdigest()


def host_of(headers: Headers) -> str:
    host = headers.get("host", "")
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class AppGuard:
    """ASGI middleware in front of the app's routes; see the module's rules."""

    def __init__(self, app: ASGIApp, *, token: str | None, loopback: bool) -> None:
        self._app = app
        self._token = token
        self._cookie = cookie_value(token) if token else None
        self._loopback = loopback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = self._refusal(scope, headers)
        if refusal is None and self._token:
            refusal = self._token_step(scope, headers)
        if refusal is not None:
            if "text/html" in headers.get("accept", "") and refusal.status_code in (401, 403):
                refusal = _as_page(refusal)
            await _with_headers(refusal)(scope, receive, send)
            return
        scope.setdefault("state", {})["bearer"] = self._bearer_ok(headers)

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                out = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    out.setdefault(name, value)
            await send(message)

        await self._app(scope, receive, secured)

    def _refusal(self, scope: Scope, headers: Headers) -> Response | None:
        if self._loopback and not is_loopback(host_of(headers)):
            return _refused(403, "this address serves only loopback hosts; open it as 127.0.0.1.")
        if scope["method"] == "POST":
            origin = headers.get("origin")
            if origin is not None and origin != _own_origin(scope, headers):
                return _refused(403, "a cross-site request may not change your memory.")
        return None

    def _token_step(self, scope: Scope, headers: Headers) -> Response | None:
        url = URL(scope=scope)
        query = QueryParams(scope.get("query_string", b""))
        given = query.get("token")
        if given is not None:
            if scope["method"] != "GET" or not self._matches(given):
                return _refused(401, "wrong token; open the address `cairn ui` printed.")
            kept = [(k, v) for k, v in query.multi_items() if k != "token"]
            # Only ever a path of this server: "//host" would send the browser elsewhere.
            path = "/" + url.path.lstrip("/")
            target = path + ("?" + urlencode(kept) if kept else "")
            redirect = RedirectResponse(target, 303)
            assert self._cookie is not None
            redirect.set_cookie(
                COOKIE, self._cookie, httponly=True, samesite="strict", path="/",
                secure=scope.get("scheme") == "https",
            )  # fmt: skip
            return redirect
        if self._bearer_ok(headers) or self._cookie_ok(headers):
            return None
        return _refused(
            401, "missing or wrong token; send Authorization: Bearer <token>, or open the "
            "address `cairn ui` printed (it carries ?token=)."
        )  # fmt: skip

    def _matches(self, given: str) -> bool:
        assert self._token is not None
        return hmac.compare_digest(given.encode(), self._token.encode())

    def _bearer_ok(self, headers: Headers) -> bool:
        if not self._token:
            return False
        sent = bearer_credentials(headers.get("authorization", "").encode("latin-1"))
        return sent is not None and hmac.compare_digest(sent, self._token.encode())

    def _cookie_ok(self, headers: Headers) -> bool:
        assert self._cookie is not None
        jar = _cookies(headers.get("cookie", ""))
        return hmac.compare_digest(jar.get(COOKIE, "").encode(), self._cookie.encode())


def _cookies(header: str) -> dict[str, str]:
    jar: dict[str, str] = {}
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name and name not in jar:
            jar[name] = value
    return jar


def _own_origin(scope: Scope, headers: Headers) -> str:
    return f"{scope.get('scheme', 'http')}://{headers.get('host', '')}"


def _refused(status: int, message: str) -> Response:
    code = "unauthorised" if status == 401 else "forbidden"
    body = json.dumps({"error": {"code": code, "message": message}})
    extra = {"www-authenticate": 'Bearer realm="cairn"'} if status == 401 else {}
    return Response(body, status_code=status, media_type="application/json", headers=extra)


def _as_page(refusal: Response) -> Response:
    """The refusal as a small page for a person's browser (the message is the app's own)."""
    message = json.loads(bytes(refusal.body))["error"]["message"]
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>cairn</title>'
        '<link rel="stylesheet" href="/static/app.css"></head><body><main>'
        f'<h1>Not allowed</h1><p class="error" role="alert">error: {html.escape(message)}</p>'
        "</main></body></html>"
    )
    return HTMLResponse(page, status_code=refusal.status_code, headers=_kept(refusal))


def _kept(response: Response) -> dict[str, str]:
    value = response.headers.get("www-authenticate")
    return {"www-authenticate": value} if value else {}


def _with_headers(response: Response) -> Response:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response
