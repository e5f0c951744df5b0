"""`cairn migrate --from <location> --to <location>`: copy a whole store between backends.

The copy itself is `cairn.migrate` (batches, checkpoints, verification); this adds the progress
bar on stderr and the summary. Interrupted, it says how to resume: run the same command again.
"""

from __future__ import annotations

import sqlite3
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING

import click

from cairn.adapters.cli_common import emit_json, json_option, reports_errors
from cairn.migrate import DEFAULT_BATCH, MigrationResult, migrate, rows_to_copy
from cairn.store import open_store
from cairn.store.base import Store
from cairn.store.sqlite.errors import translate

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar

EXIT_INTERRUPTED = 130


@click.command("migrate")
@click.option(
    "--from", "source", required=True, help="The store to copy: a SQLite path or postgresql:// URL."
)
@click.option("--to", "target", required=True, help="An empty store, or one this copy was filling.")
@click.option(
    "--batch-size",
    type=click.IntRange(1, 100_000),
    default=DEFAULT_BATCH,
    show_default=True,
    help="Rows per committed batch: what an interrupted copy may have to redo.",
)
@json_option
@reports_errors
def migrate_command(source: str, target: str, batch_size: int, as_json: bool) -> None:
    """Copy a whole store (memories, history, events, sessions, procedures, vectors, ...) to
    another location on either backend, verify counts and checksums, resume if interrupted."""
    src = open_store(source)
    try:
        dst = open_store(target)
        try:
            result = _copy_with_progress(src, dst, batch_size)
        finally:
            dst.close()
    finally:
        src.close()
    if as_json:
        emit_json(asdict(result))
        return
    how = "resumed: copied" if result.resumed else "copied"
    click.echo(
        f"{how} {result.copied} rows from {result.source} to {result.target}; verified "
        f"{len(result.tables)} tables ({sum(t.rows for t in result.tables)} rows): counts and "
        "checksums match."
    )


def _copy_with_progress(source: Store, target: Store, batch_size: int) -> MigrationResult:
    bar = _Bar(rows_to_copy(source))
    try:
        return migrate(source, target, batch_size=batch_size, progress=bar.advance)
    except sqlite3.Error as exc:
        # Writes fail inside transactions, already translated: a raw error is a read, which
        # the source answers when it is a SQLite file (e.g. a damaged page).
        sqlite_side = source if source.backend == "sqlite" else target
        raise translate(exc, sqlite_side.location) from exc
    except KeyboardInterrupt:
        bar.close()
        click.echo(
            "interrupted: the batches already copied are kept; run the same command again to "
            "resume.",
            err=True,
        )
        sys.exit(EXIT_INTERRUPTED)
    finally:
        bar.close()


class _Bar:
    """A progress bar on stderr, drawn from the first copied batch on, so that a refusal
    (checked before anything is copied) prints only its error line."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.bar: ProgressBar[int] | None = None

    def advance(self, _table: str, rows: int) -> None:
        if self.bar is None:
            self.bar = click.progressbar(
                length=self.total, label="copying", file=sys.stderr, show_pos=True
            )
            self.bar.__enter__()
        self.bar.update(rows)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None
