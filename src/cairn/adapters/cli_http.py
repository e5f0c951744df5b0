"""The options `cairn serve` and `cairn ui` share, settled once for both: the address to bind,
the port, the token (given, made fresh, or from the settings) and the browser origins.

Each command words the help to fit what it serves and has its own default port; what the
options mean, and how they fall back on `Settings`, is the same, so it lives here.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Any

import click

from cairn.adapters.cli_common import option_group, reports_errors
from cairn.config import Settings
from cairn.errors import InvalidInput

if TYPE_CHECKING:
    # Only the annotation: mcp_http brings uvicorn and the MCP SDK, which every other
    # command would then load at start-up; `settle` imports it when a server is about to run.
    from cairn.adapters.mcp_http import Listening

HOST_HELP = "Address to bind (default 127.0.0.1; others need a token)."


def settle(
    settings: Settings,
    *,
    host: str | None,
    port: int,
    token: str | None,
    new_token: bool,
    cors_origins: tuple[str, ...],
) -> Listening:
    """The options as given, falling back on the settings (`CAIRN_HTTP_*`)."""
    from cairn.adapters.mcp_http import Listening, parse_origins

    if new_token:
        if token:
            raise InvalidInput("give --token or --new-token, not both.")
        token = secrets.token_urlsafe(32)
    return Listening(
        host=host or settings.http_host,
        port=port,
        token=token or settings.http_token,
        cors_origins=tuple(parse_origins(cors_origins or settings.http_cors_origins)),
    )


def http_options(
    *,
    default_port: Callable[[Settings], int],
    port_help: str,
    token_help: str,
    new_token_help: str,
    cors_help: str,
    print_new_token: bool,
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """--host, --port, --token, --new-token and --cors-origin, handed to the command settled,
    as one `listening` keyword argument. With `print_new_token`, a fresh token goes alone to
    stdout first, so a script can capture it. Put this right under `@click.command`: the
    command's own options go below it, and its errors report as the command's do."""

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        @wraps(command)
        def settled(
            *,
            host: str | None,
            port: int | None,
            token: str | None,
            new_token: bool,
            cors_origins: tuple[str, ...],
            **rest: Any,
        ) -> None:
            settings: Settings = click.get_current_context().obj["settings"]
            listening = settle(
                settings,
                host=host,
                port=default_port(settings) if port is None else port,
                token=token,
                new_token=new_token,
                cors_origins=cors_origins,
            )
            if new_token and print_new_token:
                click.echo(listening.token)
            command(listening=listening, **rest)

        options = option_group(
            click.option("--host", help=HOST_HELP),
            click.option("--port", type=int, help=port_help),
            click.option("--token", help=token_help),
            click.option("--new-token", is_flag=True, help=new_token_help),
            click.option("--cors-origin", "cors_origins", multiple=True, help=cors_help),
        )
        return options(reports_errors(settled))

    return decorate
