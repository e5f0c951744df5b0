"""`cairn hook serve` and `cairn hook stop`: the resident server behind `cairn-hook`.

`cairn-hook` starts the server on its own when none answers, with the hook's environment;
`serve` is there to start it by hand (in the foreground, e.g. under a supervisor) and `stop`
to end it, e.g. after upgrading cairn (a running server keeps the code it started with until
it has been idle for `--idle-minutes`). Both find the server of this store and `CAIRN_*`
environment, as the hooks do.
"""

from __future__ import annotations

import os
import time

import click

from cairn.adapters.cli_common import reports_errors
from cairn.adapters.hook_client import Unanswered, ask, request_bytes, runtime_paths
from cairn.adapters.hook_server import DEFAULT_IDLE_SECONDS, serve
from cairn.errors import Conflict

STOP_WAIT_SECONDS = 10.0


@click.command("serve")
@click.option(
    "--idle-minutes",
    type=click.FloatRange(min=0.01),
    default=DEFAULT_IDLE_SECONDS / 60,
    show_default=True,
    help="Exit after this long without a hook call.",
)
@click.pass_context
@reports_errors
def hook_serve(ctx: click.Context, /, idle_minutes: float) -> None:
    """Answer agent hooks (`cairn-hook`) from a process that keeps the store open."""
    explicit = ctx.find_root().params.get("store")
    paths = runtime_paths(os.environ, explicit)
    location = paths.location if explicit else ctx.obj["store"]
    try:
        started = serve(location, ctx.obj["settings"], paths, idle_minutes * 60)
    except OSError as exc:
        raise Conflict(
            f"cannot serve hooks on {paths.socket}: {exc.strerror or exc}; check that the "
            "directory is yours and writable, or set CAIRN_HOME elsewhere."
        ) from None
    if not started:
        click.echo(f"a hook server is already answering on {paths.socket}", err=True)


@click.command("stop")
@click.pass_context
@reports_errors
def hook_stop(ctx: click.Context, /) -> None:
    """Stop the hook server of this store and environment, if one runs (returns once it is
    gone)."""
    paths = runtime_paths(os.environ, ctx.find_root().params.get("store"))
    try:
        answer = ask(paths.socket, request_bytes("stop", os.getcwd(), b""))
    except (Unanswered, OSError) as exc:
        raise Conflict(f"the hook server on {paths.socket} did not answer ({exc}).") from None
    if answer is None:
        click.echo(f"no hook server runs for {paths.location}")
        return
    deadline = time.monotonic() + STOP_WAIT_SECONDS
    while os.path.exists(paths.socket) and time.monotonic() < deadline:
        time.sleep(0.05)  # it removes its socket on the way out
    click.echo(answer[0].decode(errors="replace"), nl=False)
