"""The app's routes: pages (each also as `.json`), the actions a card offers, static files.

A page is a view (views.py) rendered by its template; `<page>.json` returns the same dict. An
action is one `Cairn` call (actions.py). Everything runs behind `AppGuard` (guard.py); the
`Cairn` calls run in Starlette's thread pool, since the store is synchronous.
"""

from __future__ import annotations

import hmac
import secrets
import sys
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from cairn.adapters.app import actions, views
from cairn.adapters.app.guard import CSRF_FIELD, CSRF_HEADER, AppGuard
from cairn.core import Cairn
from cairn.errors import CairnError, Conflict, InvalidInput, NotFound

CairnGetter = Callable[[], Cairn]
View = Callable[[Cairn, views.Params], dict[str, Any]]
PAGES: dict[str, tuple[View, str]] = {
    "scopes": (views.scopes_view, "scopes.html"),
    "memories": (views.memories_view, "memories.html"),
    "sessions": (views.sessions_view, "sessions.html"),
    "procedures": (views.procedures_view, "procedures.html"),
    "tidy": (views.tidy_view, "tidy.html"),
    "stats": (views.stats_view, "stats.html"),
}
MAX_FORM_BYTES = 256 * 1024


class App:
    def __init__(self, cairn: CairnGetter) -> None:
        self._cairn = cairn
        self.csrf = secrets.token_urlsafe(32)
        self._env = Environment(
            loader=PackageLoader("cairn.adapters.app", "templates"),
            autoescape=select_autoescape(["html"]),
            trim_blocks=True,
            lstrip_blocks=True,
        )

    async def page(self, request: Request) -> Response:
        name = request.path_params["page"]
        as_json = name.endswith(".json")
        name = name.removesuffix(".json")
        if name not in PAGES:
            return self._error(request, NotFound(f"no page {name[:40]!r}; see the menu."), as_json)
        view, template = PAGES[name]
        params = _params(request)
        return await self._render(request, lambda m: view(m, params), template, as_json, name)

    async def card(self, request: Request) -> Response:
        ref = str(request.path_params["ref"])
        as_json = ref.endswith(".json")
        ref = ref.removesuffix(".json")
        params = _params(request)
        return await self._render(
            request, lambda m: views.card_view(m, ref, params), "card.html", as_json, "memories"
        )

    async def act(self, request: Request) -> Response:
        wants_json = "application/json" in request.headers.get("accept", "")
        try:
            form = await _form(request)
            if not request.state.bearer and not self._csrf_ok(request, form):
                raise InvalidInput("the form is stale or came from another site; reload the page.")
            action = actions.find(request.path_params["kind"], request.path_params["verb"])
            target = str(request.path_params["target"])
            mem = await run_in_threadpool(self._cairn)
            done = await run_in_threadpool(action.run, mem, target, form)
        except CairnError as exc:
            return self._error(request, exc, wants_json)
        except Exception as exc:  # noqa: BLE001 - one line for the person, the type for the log
            return self._crash(request, exc, wants_json)
        if wants_json:
            return JSONResponse({"ok": True, "result": done.result})
        return RedirectResponse(done.next_url, status_code=303)

    async def home(self, request: Request) -> Response:
        return RedirectResponse("/memories", status_code=303)

    def _csrf_ok(self, request: Request, form: dict[str, list[str]]) -> bool:
        sent = request.headers.get(CSRF_HEADER) or (form.get(CSRF_FIELD) or [""])[0]
        return hmac.compare_digest(sent.encode(), self.csrf.encode())

    async def _render(
        self,
        request: Request,
        build: Callable[[Cairn], dict[str, Any]],
        template: str,
        as_json: bool,
        section: str,
    ) -> Response:
        try:
            mem = await run_in_threadpool(self._cairn)
            data = await run_in_threadpool(build, mem)
            if as_json:
                return JSONResponse({**_without_charts(data), "csrf": self.csrf})
            html = self._env.get_template(template).render(
                **data,
                csrf=self.csrf,
                section=section,
                did=actions.DID.get(request.query_params.get("did", ""), ""),
            )
        except CairnError as exc:
            return self._error(request, exc, as_json)
        except Exception as exc:  # noqa: BLE001 - one line for the person, the type for the log
            return self._crash(request, exc, as_json)
        return HTMLResponse(html)

    def _error(self, request: Request, exc: CairnError, as_json: bool) -> Response:
        status = 404 if isinstance(exc, NotFound) else 409 if isinstance(exc, Conflict) else 400
        if not isinstance(exc, (InvalidInput, NotFound, Conflict)):
            status = 503
        if as_json:
            return JSONResponse({"error": exc.as_dict()}, status_code=status)
        html = self._env.get_template("error.html").render(
            message=exc.message, status=status, csrf=self.csrf, section="", scope=None
        )
        return HTMLResponse(html, status_code=status)

    def _crash(self, request: Request, exc: Exception, as_json: bool) -> Response:
        print(f"cairn app: {request.url.path}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return self._error(
            request, CairnError("something went wrong inside cairn; the log has the details."),
            as_json,
        )  # fmt: skip


def _without_charts(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "charts"}


def _params(request: Request) -> views.Params:
    out: dict[str, list[str]] = {}
    for key, value in request.query_params.multi_items():
        out.setdefault(key, []).append(value)
    return out


async def _form(request: Request) -> dict[str, list[str]]:
    """The POSTed form (urlencoded), read up to `MAX_FORM_BYTES` and refused past it."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in ("", "application/x-www-form-urlencoded"):
        raise InvalidInput("send the form urlencoded (application/x-www-form-urlencoded).")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise InvalidInput(f"the form is over {MAX_FORM_BYTES // 1024} KB; shorten the text.")
    try:
        text = body.decode("utf-8")
        return parse_qs(text, keep_blank_values=True, strict_parsing=False, max_num_fields=50)
    except (UnicodeDecodeError, ValueError):
        raise InvalidInput("the form is not valid UTF-8 with at most 50 fields.") from None


def build_app(cairn: CairnGetter, *, token: str | None, loopback: bool) -> ASGIApp:
    """The app as an ASGI application, guarded (token, host, CSRF, headers)."""
    app = App(cairn)
    routes = [
        Route("/", app.home),
        Mount("/static", StaticFiles(packages=[("cairn.adapters.app", "static")]), name="static"),
        Route("/memories/{ref}", app.card),
        Route("/{kind}/{target}/{verb}", app.act, methods=["POST"]),
        Route("/{page}", app.page),
    ]
    return AppGuard(Starlette(routes=routes), token=token, loopback=loopback)
