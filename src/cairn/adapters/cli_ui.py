"""`cairn ui`: the app in a browser, on 127.0.0.1 unless a token guards it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cairn.adapters.cli_common import reports_errors
from cairn.adapters.cli_http import http_options

if TYPE_CHECKING:
    from cairn.adapters.mcp_http import Listening

UI_PORT = 8766  # beside `cairn serve`'s 8765


@click.command("ui")
@http_options(
    default_port=lambda _: UI_PORT,
    port_help=f"Port to listen on (default {UI_PORT}; 0 picks a free one).",
    token_help="Token every request must carry (CAIRN_HTTP_TOKEN); at least 32 characters and "
    "128 bits. The printed address carries it once; the browser then keeps it in a cookie.",
    new_token_help="Make a fresh random token and serve with it.",
    cors_help="A browser origin allowed to call the app (repeatable; default none).",
    print_new_token=False,
)
@click.pass_context
@reports_errors
def ui_command(ctx: click.Context, /, listening: Listening) -> None:
    """Serve the app: see, search, confirm, correct and undo what your agents remember.

    Prints the address to open. `cairn serve` serves the same app beside MCP.
    """
    from cairn.adapters.app.server import serve_ui

    serve_ui(
        ctx.obj["store"],
        ctx.obj["settings"],
        listening,
        announce=lambda url: click.echo(f"cairn: the app is at {url}"),
    )


COMMANDS: tuple[click.Command, ...] = (ui_command,)
