"""`cairn ui`: the app in a browser, on 127.0.0.1 unless a token guards it."""

from __future__ import annotations

import secrets

import click

from cairn.adapters.cli_common import reports_errors
from cairn.config import Settings
from cairn.errors import InvalidInput

UI_PORT = 8766  # beside `cairn serve`'s 8765


@click.command("ui")
@click.option("--host", help="Address to bind (default 127.0.0.1; others need a token).")
@click.option(
    "--port", type=int, help=f"Port to listen on (default {UI_PORT}; 0 picks a free one)."
)
@click.option(
    "--token",
    help="Token every request must carry (CAIRN_HTTP_TOKEN); at least 32 characters and 128 "
    "bits. The printed address carries it once; the browser then keeps it in a cookie.",
)
@click.option("--new-token", is_flag=True, help="Make a fresh random token and serve with it.")
@click.option(
    "--cors-origin",
    "cors_origins",
    multiple=True,
    help="A browser origin allowed to call the app (repeatable; default none).",
)
@click.pass_context
@reports_errors
def ui_command(
    ctx: click.Context,
    /,
    host: str | None,
    port: int | None,
    token: str | None,
    new_token: bool,
    cors_origins: tuple[str, ...],
) -> None:
    """Serve the app: see, search, confirm, correct and undo what your agents remember.

    Prints the address to open. `cairn serve` serves the same app beside MCP.
    """
    from cairn.adapters.app.server import serve_ui
    from cairn.adapters.mcp_http import parse_origins

    settings: Settings = ctx.obj["settings"]
    if new_token:
        if token:
            raise InvalidInput("give --token or --new-token, not both.")
        token = secrets.token_urlsafe(32)
    serve_ui(
        ctx.obj["store"],
        settings,
        host=host or settings.http_host,
        port=UI_PORT if port is None else port,
        token=token or settings.http_token,
        cors_origins=parse_origins(cors_origins or settings.http_cors_origins),
        announce=lambda url: click.echo(f"cairn: the app is at {url}"),
    )


COMMANDS: tuple[click.Command, ...] = (ui_command,)
