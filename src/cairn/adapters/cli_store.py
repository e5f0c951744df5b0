"""The store's health and backup: `cairn check` and `cairn export`.

A SQLite store is exported by the salvage reader (`cairn.integrity`), which reads rowid range
by range and skips what a damaged page hides, so `export` is also the way out of a store that
`cairn check` finds damaged. A healthy store exports exactly as `Cairn.export` would.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

import click

from cairn.adapters.cli_common import emit_json, json_option, opened, reports_errors, store_location
from cairn.adapters.cli_progress import writing_with_progress
from cairn.config import Settings
from cairn.core import Cairn
from cairn.errors import CairnError, InvalidInput, StoreCorrupt
from cairn.exchange import FORMAT as EXPORT_FORMAT
from cairn.integrity import SalvageReport, check_store, is_postgres, salvage_export

EXIT_DAMAGED = 2
_HEADER_MAX = 65_536  # bytes of an existing file's first line read to recognise an export


@click.command("check")
@json_option
@click.pass_context
@reports_errors
def check_cmd(ctx: click.Context, /, as_json: bool) -> None:
    """Check the store's integrity (SQLite's and the full-text index's checks, or amcheck and a
    full read on PostgreSQL); exit 0 when healthy, 2 when damaged."""
    settings: Settings = ctx.obj["settings"]
    report = check_store(store_location(ctx), busy_timeout_ms=settings.busy_timeout_ms)
    if as_json:
        emit_json(
            {
                "location": report.location,
                "backend": report.backend,
                "ok": report.ok,
                "problems": report.problems,
                "notes": report.notes,
            }
        )
    elif report.ok:
        click.echo(f"ok: {report.location} passed every integrity check")
    else:
        for problem in report.problems:
            click.echo(f"problem: {problem}")
    for note in report.notes if not as_json else ():
        click.echo(f"note: {note}", err=True)
    if not report.ok:
        click.echo(
            f"error: {report.location} is damaged ({_count(len(report.problems), 'problem')}); "
            "`cairn export FILE` saves every readable row, then `cairn import FILE` into a new "
            "store.",
            err=True,
        )
        sys.exit(EXIT_DAMAGED)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


@click.command("export")
@click.argument("path", type=click.Path(dir_okay=False, allow_dash=True), default="-")
@click.option(
    "--to",
    "target",
    type=click.Choice(["agent-files"]),
    help="Write the scope's pinned constraints, instructions and preferences into the agent "
    "file PATH of the checkout (default AGENTS.md) between cairn's markers.",
)
@click.option("--scope", help="Scope as kind:id (default: the checkout's); with --to.")
@click.option("--cwd", type=click.Path(file_okay=False), help="The checkout; with --to.")
@json_option
@click.pass_context
@reports_errors
def export_cmd(
    ctx: click.Context,
    /,
    path: str,
    target: str | None,
    scope: str | None,
    cwd: str | None,
    as_json: bool,
) -> None:
    """Write the whole store (history, events, vectors, sessions, ...) as JSON Lines to PATH,
    or (--to agent-files) the scope's pinned rules into an agent file.

    From a damaged SQLite store it writes every row it can read and reports how many it could
    not (on stderr; as JSON with --json), exiting 2."""
    if target is not None:
        _export_agent_file(ctx, "AGENTS.md" if path == "-" else path, scope, cwd, as_json)
        return
    if scope is not None or cwd is not None:
        raise InvalidInput("--scope and --cwd go with --to agent-files.")
    location = store_location(ctx)
    if is_postgres(location):
        with opened(ctx) as mem, _output(path) as out:
            total = _rows(mem)
            with writing_with_progress(out, total, "exporting") as counted:
                report = SalvageReport(mem.export(counted), 0, [], {})
    else:
        total = _prepare(ctx)
        with _output(path) as out, writing_with_progress(out, total, "exporting") as counted:
            report = salvage_export(location, counted)
    summary = {
        "path": path,
        "lines": report.lines,
        "unreadable_rows": report.unreadable_rows,
        "damaged_tables": report.damaged_tables,
        "unreadable_by_table": report.unreadable_by_table,
    }
    if as_json:
        click.echo(json.dumps(summary), err=True)
    where = "standard output" if path == "-" else path
    if report.damaged_tables:
        shown = ", ".join(f"{t} {n}" for t, n in report.unreadable_by_table.items())
        click.echo(
            f"error: exported {report.lines} lines to {where}, but {report.unreadable_rows} rows "
            f"on damaged pages could not be read ({shown}); import the file into a new store "
            "to carry on with everything else.",
            err=True,
        )
        sys.exit(EXIT_DAMAGED)
    if not as_json and path != "-":
        click.echo(f"exported {report.lines} lines to {where}", err=True)


def _export_agent_file(
    ctx: click.Context, path: str, scope: str | None, cwd: str | None, as_json: bool
) -> None:
    with opened(ctx) as mem:
        done = mem.export_agent_file(path, scope=scope, cwd=cwd)
    if as_json:
        emit_json(done)
        return
    state = "written to" if done.changed else "already up to date in"
    click.echo(f"{done.memories} pinned rules {state} {done.path}")


def _prepare(ctx: click.Context) -> int:
    """Open the SQLite store as every command does (creating or migrating it) and count its
    rows for the progress bar; one too damaged to open is left to the salvage, which reads
    what it can (0: the bar then shows no total)."""
    try:
        with opened(ctx) as mem:
            return _rows(mem)
    except StoreCorrupt:
        return 0


def _rows(mem: Cairn) -> int:
    """Lines an export will write: one per row, plus its header and sequences lines."""
    store = mem.store
    try:
        return 2 + sum(store.count_rows(name) for name in store.table_names())
    except (CairnError, sqlite3.DatabaseError):
        return 0  # a damaged table: the salvage counts what it reads, the bar shows no total


@contextmanager
def _output(path: str) -> Iterator[IO[str]]:
    """The file to write (stdout for '-').

    A file is written beside its final place and renamed over it only once complete, so a
    failed export leaves whatever was there, and the export is readable by its owner alone
    (it holds the whole store). What is there already must be nothing, an empty file or an
    earlier cairn export: any other file is refused, never truncated. A device or a pipe
    (`/dev/stdout`, a FIFO) is written in place, as any stream is."""
    if path == "-":
        yield sys.stdout
        return
    target = os.path.realpath(path)  # through a link, so the link stays one
    kind = _existing_kind(path, target)
    if kind == "stream":
        with _opened_stream(path, target) as out:
            yield out
        return
    try:
        handle, temporary = tempfile.mkstemp(
            dir=os.path.dirname(target), prefix=f".{os.path.basename(target)}.", suffix=".part"
        )
    except OSError as exc:
        raise CairnError(_write_failure(path, exc)) from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except OSError as exc:
        _remove(temporary)
        raise CairnError(_write_failure(path, exc)) from None
    except BaseException:
        _remove(temporary)
        raise


def _existing_kind(path: str, target: str) -> str:
    """ "new" (nothing there, or a file an export may replace) or "stream" (a device or pipe);
    raises for a file that is not an export."""
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return "new"
    except OSError as exc:
        raise CairnError(_write_failure(path, exc)) from None
    if stat.S_ISDIR(info.st_mode):
        raise InvalidInput(f"{path} is a folder; give a file path for the export.")
    if not stat.S_ISREG(info.st_mode):
        return "stream"
    if info.st_size == 0 or _is_export(target):
        return "new"
    raise InvalidInput(
        f"{path} exists and is not a cairn export, so it is left as it is; remove it or "
        "choose another path."
    )


def _is_export(path: str) -> bool:
    """Whether the file's first line is a cairn export's header."""
    try:
        with open(path, encoding="utf-8") as existing:
            header = json.loads(existing.readline(_HEADER_MAX))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(header, dict) and header.get("format") == EXPORT_FORMAT


@contextmanager
def _opened_stream(path: str, target: str) -> Iterator[IO[str]]:
    try:
        out = open(target, "w", encoding="utf-8")  # noqa: SIM115 - closed by the with below
    except OSError as exc:
        raise CairnError(_write_failure(path, exc)) from None
    try:
        with out:
            yield out
    except OSError as exc:
        raise CairnError(_write_failure(path, exc)) from None


def _write_failure(path: str, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    parent = os.path.dirname(path) or "."
    if exc.errno == errno.ENOENT:
        return f"cannot write {path}: the directory {parent} does not exist; create it first."
    if exc.errno == errno.ENOSPC:
        return f"cannot write {path}: the device is full ({reason}); free space or write elsewhere."
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"cannot write {path} ({reason}); choose a writable location."
    return f"cannot write {path} ({reason}); choose another location."


def _remove(path: str) -> None:
    # The temporary file of a failed export (it may already be gone).
    if os.path.isfile(path):
        os.remove(path)
