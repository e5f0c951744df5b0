"""`cairn import`: cairn's own export into an empty store, or (`--from`) the agents' memory
files and other memory stores into a live one, item by item, with a dry run and a progress bar.
"""

from __future__ import annotations

import io
import os
import sys
from dataclasses import asdict

import click

from cairn.adapters.cli_common import emit_json, json_option, opened, reports_errors
from cairn.adapters.cli_progress import lines_with_progress
from cairn.errors import InvalidInput
from cairn.exchange import is_empty
from cairn.importers import SOURCES, Importer, Report


@click.command("import")
@click.argument("path", type=click.Path(allow_dash=True), required=False)
@click.option(
    "--from",
    "source",
    type=click.Choice(SOURCES),
    help="Import another memory: agent instruction files (PATH: the checkout, default the "
    "current one), an MCP memory server's memory.jsonl, a mem0 get_all() JSON export, a "
    "basic-memory folder, or a cairn export merged claim by claim.",
)
@click.option("--scope", help="Scope as kind:id (default: the checkout's, or the current one).")
@click.option("--user", is_flag=True, help="Also the user-level agent files (into global).")
@click.option("--dry-run", is_flag=True, help="Print what would be done; write nothing.")
@json_option
@click.pass_context
@reports_errors
def import_cmd(
    ctx: click.Context,
    /,
    path: str | None,
    source: str | None,
    scope: str | None,
    user: bool,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Load a cairn export (into an empty store: a copy with its history; into a live one: its
    current claims merged), or --from another memory into this one.

    Re-importing is safe: unchanged items are recognised (nothing counted), edited ones are
    corrected with history, removed ones retired."""
    if source is None:
        if user or scope:
            raise InvalidInput("--scope and --user go with --from SOURCE.")
        if _load_export(ctx, path, dry_run=dry_run, as_json=as_json):
            return
        source = "cairn"
    with opened(ctx) as mem:
        found = mem.importers(source, path, scope=scope, user=user, dry_run=dry_run)
        reports = [_run(importer, show_bar=not dry_run and not as_json) for importer in found]
    if as_json:
        emit_json([asdict(report) for report in reports])
        return
    for report in reports:
        _print(report)


def _run(importer: Importer, *, show_bar: bool) -> Report:
    steps = importer.steps()
    if not show_bar or not steps:
        return importer.run(steps)
    label = f"importing {importer.batch.system}"
    with click.progressbar(length=len(steps), label=label, file=sys.stderr) as bar:
        return importer.run(steps, lambda: bar.update(1))


def _print(report: Report) -> None:
    for problem in report.problems:
        click.echo(f"warning: {problem}", err=True)
    for line in report.lines:
        click.echo(f"  {line}")
    click.echo(report.summary())


def _load_export(ctx: click.Context, path: str | None, *, dry_run: bool, as_json: bool) -> bool:
    """Load the export into an empty store; False when it is to be merged instead."""
    if path is None:
        raise InvalidInput("give the export file to load (or - for standard input), or --from.")
    # surrogateescape: a byte that is not UTF-8 reaches the reader, which names its line.
    with opened(ctx) as mem:
        if dry_run or as_json or not is_empty(mem.store):
            if path == "-":
                raise InvalidInput(
                    "merging an export into a non-empty store reads a file; give its path."
                )
            return False
        if path == "-":
            stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape")
            counts = mem.import_(stdin)
        else:
            try:
                source = open(path, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115
            except OSError as exc:
                raise InvalidInput(f"cannot read {path}: {exc.strerror}.") from None
            size = os.path.getsize(path)
            with source, lines_with_progress(source, size, "importing") as lines:
                counts = mem.import_(lines)
    main_tables = ("memories", "events", "vectors")
    others = {name: n for name, n in counts.items() if name not in main_tables}
    more = f" and {sum(others.values())} rows of {len(others)} other tables" if others else ""
    click.echo(
        f"imported {counts.get('memories', 0)} memories, {counts.get('events', 0)} events, "
        f"{counts.get('vectors', 0)} vectors{more}"
    )
    return True
