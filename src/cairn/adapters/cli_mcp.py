"""`cairn mcp` (stdio) and `cairn serve` (streamable HTTP): the MCP server's two commands."""

from __future__ import annotations

import secrets

import click

from cairn.adapters.cli_common import reports_errors
from cairn.config import Settings
from cairn.errors import InvalidInput

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
@click.option("--host", help="Address to bind (default 127.0.0.1; others need a token).")
@click.option("--port", type=int, help="Port to listen on (default 8765; 0 picks a free one).")
@click.option(
    "--token",
    help="Bearer token every request must carry (CAIRN_HTTP_TOKEN); at least 32 characters "
    "and 128 bits.",
)
@click.option(
    "--new-token",
    is_flag=True,
    help="Make a fresh random token, print it on stdout, and serve with it.",
)
@click.option(
    "--cors-origin",
    "cors_origins",
    multiple=True,
    help="A browser origin allowed to call the server (repeatable; default none).",
)
@click.option("--tools", "tool_set", metavar="core|sessions|all", help=TOOLS_HELP)
@click.pass_context
@reports_errors
def serve_command(
    ctx: click.Context,
    /,
    host: str | None,
    port: int | None,
    token: str | None,
    new_token: bool,
    cors_origins: tuple[str, ...],
    tool_set: str | None,
) -> None:
    """Serve cairn's tools over MCP streamable HTTP at http://HOST:PORT/mcp, and the app (see
    `cairn ui`) at http://HOST:PORT/."""
    from cairn.adapters.app.server import app_for
    from cairn.adapters.mcp_http import parse_origins, serve

    settings: Settings = ctx.obj["settings"]
    if new_token:
        if token:
            raise InvalidInput("give --token or --new-token, not both.")
        token = secrets.token_urlsafe(32)
        # Alone on stdout, so a script can capture it; the address goes to stderr.
        click.echo(token)
    host = host or settings.http_host
    token = token or settings.http_token

    def announce(url: str) -> None:
        click.echo(f"cairn: serving MCP at {url}", err=True)
        where = url.removesuffix("/mcp") + "/"
        hint = " (open it once with ?token=<token>)" if token else ""
        click.echo(f"cairn: the app is at {where}{hint}", err=True)

    serve(
        ctx.obj["store"],
        settings,
        host=host,
        port=settings.http_port if port is None else port,
        token=token,
        cors_origins=parse_origins(cors_origins or settings.http_cors_origins),
        announce=announce,
        tool_set=tool_set,
        beside=lambda binding: app_for(binding, host=host, token=token),
    )
