"""`cairn reindex`: re-embed what another embedder wrote, with a progress bar on stderr."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from typing import Any

import click

from cairn.adapters.cli_common import emit_json, json_option, opened, reports_errors
from cairn.reindex import DEFAULT_BATCH, MAX_BATCH


@click.command("reindex")
@click.option(
    "--batch",
    type=click.IntRange(1, MAX_BATCH),
    default=DEFAULT_BATCH,
    show_default=True,
    help="Memories embedded and committed together.",
)
@click.option("--max-batches", type=click.IntRange(0), help="Stop after this many batches.")
@json_option
@click.pass_context
@reports_errors
def reindex_command(
    ctx: click.Context, /, batch: int, max_batches: int | None, as_json: bool
) -> None:
    """Re-embed memories whose vector another embedder wrote (after changing CAIRN_EMBEDDER or
    the model). Each batch is committed on its own: stop it any time and run it again."""
    bars: list[Any] = []
    with opened(ctx) as mem, ExitStack() as stack:

        def start(waiting: int) -> None:
            # click types a length-only bar loosely; the bar is used only through `update`.
            make: Any = click.progressbar
            bar = make(length=waiting, label="re-embedding", file=sys.stderr)
            bars.append(stack.enter_context(bar))

        report = mem.reindex(
            batch=batch,
            max_batches=max_batches,
            on_start=start,
            on_batch=lambda n: bars[0].update(n),
        )
    if as_json:
        emit_json(report)
        return
    left = f"; {report.remaining} still waiting (run it again)" if report.remaining else ""
    click.echo(f"re-embedded {report.reindexed} memories with {report.embedder}{left}")
