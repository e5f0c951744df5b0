"""The `cairn` command: a thin adapter over `cairn.Cairn`.

This module only assembles the command group: the root group and its `--store` option here,
the commands in their own modules (`cli_memory.py`, `cli_sessions.py`, ...), which share
`cli_common.py`. Each command opens the store, makes one call, and prints the result (`--json`
on every read). A `CairnError` becomes one line on stderr and exit status 2; whatever else
fails is caught once, at the top (`cli_root.CairnGroup`), and reported the same way.
"""

from __future__ import annotations

import os

# One BLAS thread unless the user chose otherwise, set before anything imports numpy. On the
# machines measured (2 cores, shared), OpenBLAS's second thread made the dense scans no faster
# and, spinning after each product, took a core from the numpy work after it and from the
# query's embedding, which runs beside the keyword lookup: at 1M memories, load 3.3-4.3, recall
# medians 62-74 ms against 98-127 ms, p95 91-116 ms against 162-190 (docs/benchmarks.md).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import click

from cairn.adapters import (
    cli_bench,
    cli_code,
    cli_demo,
    cli_import,
    cli_lessons,
    cli_mcp,
    cli_memory,
    cli_migrate,
    cli_reindex,
    cli_sessions,
    cli_store,
    cli_ui,
)
from cairn.adapters.cli_common import reports_errors
from cairn.adapters.cli_root import CairnGroup
from cairn.config import Settings


@click.group(cls=CairnGroup)
@click.option(
    "--store",
    "store",
    help="SQLite path or postgresql:// URL (default: CAIRN_URL, else memory.db under CAIRN_HOME).",
)
@click.pass_context
@reports_errors
def main(ctx: click.Context, store: str | None) -> None:
    """cairn: long-term memory for AI agents."""
    settings = Settings.from_env()
    ctx.obj = {
        "settings": settings,
        "store": store or settings.store_location,
        "explicit": store is not None,
    }


def register(command: click.Command) -> None:
    main.add_command(command)


def _register_all() -> None:
    for command in (
        *cli_memory.COMMANDS,
        cli_bench.bench,
        cli_demo.demo,
        cli_migrate.migrate_command,
        cli_reindex.reindex_command,
        cli_mcp.mcp_command,
        cli_mcp.serve_command,
        *cli_ui.COMMANDS,
        cli_store.export_cmd,
        cli_store.check_cmd,
        cli_import.import_cmd,
        *cli_sessions.COMMANDS,
        *cli_code.COMMANDS,
        *cli_lessons.COMMANDS,
    ):
        register(command)
    for command in cli_lessons.HOOK_COMMANDS:  # `cairn hook claude-code|serve|stop`
        cli_code.hook.add_command(command)


_register_all()
