"""`cairn mcp` (stdio) and `cairn serve` (streamable HTTP): the MCP server's two commands."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cairn.adapters.cli_common import reports_errors
from cairn.adapters.cli_http import http_options
from cairn.config import Settings

if TYPE_CHECKING:
    from cairn.adapters.mcp_http import Listening

TOOLS_HELP = (
    "Which tools to serve: core (the session loop, the default), sessions (core plus trace, "
    "lessons, confirm) or all (plus query, purge, stats, tidy). Default CAIRN_MCP_TOOLS or core."
)


@click.command("mcp")
@click.option("--tools", "tool_set", metavar="core|sessions|all", help=TOOLS_HELP)
@click.pass_context
@reports_errors
def mcp_command(ctx: click.Context, /, tool_set: str | None) -> None:
    """Serve cairn's tools to an MCP client over stdin/stdout."""
    from cairn.adapters.mcp import run_stdio

    settings: Settings = ctx.obj["settings"]
    run_stdio(ctx.obj["store"], settings, tool_set)


@click.command("serve")
@http_options(
    default_port=lambda settings: settings.http_port,
    port_help="Port to listen on (default 8765; 0 picks a free one).",
    token_help="Bearer token every request must carry (CAIRN_HTTP_TOKEN); at least 32 "
    "characters and 128 bits.",
    new_token_help="Make a fresh random token, print it on stdout, and serve with it.",
    cors_help="A browser origin allowed to call the server (repeatable; default none).",
    # The announced address leaves the token out; `cairn ui` puts it in the address instead.
    print_new_token=True,
)
@click.option("--tools", "tool_set", metavar="core|sessions|all", help=TOOLS_HELP)
@click.pass_context
@reports_errors
def serve_command(ctx: click.Context, /, listening: Listening, tool_set: str | None) -> None:
    """Serve cairn's tools over MCP streamable HTTP at http://HOST:PORT/mcp, and the app (see
    `cairn ui`) at http://HOST:PORT/."""
    from cairn.adapters.app.server import app_for
    from cairn.adapters.mcp_http import serve

    host, token = listening.host, listening.token

    def announce(url: str) -> None:
        click.echo(f"cairn: serving MCP at {url}", err=True)
        where = url.removesuffix("/mcp") + "/"
        hint = " (open it once with ?token=<token>)" if token else ""
        click.echo(f"cairn: the app is at {where}{hint}", err=True)

    serve(
        ctx.obj["store"],
        ctx.obj["settings"],
        listening,
        announce=announce,
        tool_set=tool_set,
        beside=lambda binding: app_for(binding, host=host, token=token),
    )
