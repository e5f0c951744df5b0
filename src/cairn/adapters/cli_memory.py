"""The memory verbs of the `cairn` command: remember, recall, query, show, correct, forget,
purge and stats. Each opens the store, makes one call on `Cairn` and prints the result.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import click

from cairn.adapters.cli_common import (
    emit_json,
    json_object,
    json_option,
    located,
    opened,
    reply,
    reports_errors,
    session_option,
    stdin_text,
)
from cairn.adapters.mcp_render import link_lines
from cairn.errors import InvalidInput, NotFound
from cairn.models import GetResult, MemoryRecord, RecallResult
from cairn.stats import page_lines


@click.command()
@click.argument("content")
@click.option(
    "--type",
    "mtype",
    required=True,
    help="fact, preference, decision, constraint, "
    "instruction, lesson, warning, open_question, task or artifact.",
)
@located
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--reason", help="Why this is worth remembering.")
@click.option(
    "--source-ref",
    help="What it is about: path, dir/, glob, path:10-24, path::Symbol, commit:<sha> or a URL.",
)
@click.option("--summary", help="One-line summary (default: the first 200 characters).")
@click.option("--weight", type=float, help="Initial importance from 0 to 1 (default 0.5).")
@click.option("--durability", type=click.Choice(["episodic", "semantic", "permanent"]))
@click.option("--pinned", is_flag=True, help="Always include in briefs; never decays.")
@click.option("--occurred-at", help="When it happened (RFC 3339), if not now.")
@click.option("--no-dedup", is_flag=True, help="Store even if an equal memory exists.")
@session_option
@click.option("--used", multiple=True, help="A memory that shaped this claim (repeatable).")
@click.option("--relates-to", multiple=True, help="A memory this claim relates to (repeatable).")
@json_option
@click.pass_context
@reports_errors
def remember(ctx: click.Context, /, content: str, mtype: str, **opts: Any) -> None:
    """Remember a durable claim. CONTENT '-' reads it from stdin; content that starts with
    '-' goes after '--' (cairn remember --type fact -- '-v prints the version')."""
    if content == "-":
        content = stdin_text()
    as_json, dedup = opts.pop("as_json"), not opts.pop("no_dedup")
    for name in ("tags", "used", "relates_to"):
        opts[name] = list(opts[name]) or None
    with opened(ctx) as mem:
        result = mem.remember(content, type=mtype, dedup=dedup, **opts)
    if as_json:
        emit_json(result)
        return
    extra = f" (similarity {result.similarity})" if result.similarity is not None else ""
    click.echo(f"{result.memory_id} {result.disposition}{extra} [{result.type}] {result.scope}")
    if result.may_update:
        click.echo(
            f"  may update {result.may_update} ({result.changed}); both are kept: "
            f"cairn tidy proposes the correction"
        )


@click.command()
@click.argument("query")
@located
@click.option("--limit", type=int, default=8, show_default=True, help="At most 25.")
@click.option("--as-of", help="Answer from what was believed at the end of this day.")
@click.option("--type", "types", multiple=True, help="Only these types (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Only memories with one of these tags.")
@click.option("--since", help="Only memories that occurred on or after this date.")
@click.option("--until", help="Only memories that occurred on or before this date.")
@click.option("--also", multiple=True, help="Another phrasing, searched too (up to 3).")
@click.option("--no-cut", is_flag=True, help="Top LIMIT by rank: no relative cut, no abstention.")
@click.option(
    "--include-resting", is_flag=True, help="No effect: resting memories are always searched."
)
@click.option("--explain", is_flag=True, help="Show each hit's score breakdown.")
@click.option(
    "--kind",
    type=click.Choice(["all", "memories", "pages"]),
    default="all",
    show_default=True,
    help="Memories, the project's docs (pages), or both.",
)
@session_option
@click.option("--task-context", help='Facts steering this session\'s recalls, as JSON: {"k": "v"}.')
@click.option(
    "--evidence",
    type=click.Choice(["references", "full"]),
    default="references",
    help="full adds the source records' text (1000 characters each).",
)
@json_option
@click.pass_context
@reports_errors
def recall(ctx: click.Context, /, query: str, **opts: Any) -> None:
    """Recall memories relevant to QUERY."""
    as_json, cut = opts.pop("as_json"), not opts.pop("no_cut")
    for name in ("types", "tags", "also"):
        opts[name] = list(opts[name]) or None
    opts["task_context"] = json_object(opts["task_context"], "--task-context")
    with opened(ctx) as mem:
        result = mem.recall(query, cut=cut, **opts)
    reply(result, as_json, print_recall)


@click.command()
@click.argument("text")
@located
@click.option("--limit", type=int, help="At most this many (default and maximum 20).")
@json_option
@click.pass_context
@reports_errors
def query(ctx: click.Context, /, text: str, **opts: Any) -> None:
    """The memories nearest to TEXT by embedding alone (no keywords, no cut)."""
    as_json = opts.pop("as_json")
    with opened(ctx) as mem:
        found = mem.query(text, **opts)
    if as_json:
        emit_json(found)
        return
    for hit in found:
        click.echo(f"{hit.ref}  {hit.score:.4f}  [{hit.type}]  {hit.summary}")
    if not found:
        click.echo("no memories in this scope yet")


def print_recall(result: RecallResult) -> None:
    if result.needs_reindex:
        click.echo(f"note: {result.needs_reindex.message}", err=True)
    if not result.hits and not result.procedures:
        click.echo(f"nothing found in {result.scope} for {result.query!r} ({result.retrieval_id})")
        return
    for hit in result.hits:
        flags = " weak" if hit.weak else ""
        flags += " resting" if hit.resting else ""
        flags += " stale-vector" if hit.stale_vector else ""
        flags += f" associated via {hit.via}" if hit.pathway == "associated" else ""
        flags += f" conflicts with {', '.join(hit.conflicts_with)}" if hit.conflicts_with else ""
        until = f" until {hit.until:%Y-%m-%d}" if hit.until else ""
        source = f" ({hit.source_ref})" if hit.source_ref else ""
        click.echo(
            f"{hit.ref}  {hit.score:.4f}  [{hit.type}]{flags}{until}  {hit.summary}{source}"
            f"  citation:{hit.citation}{_lines(hit.citation_lines)}"
        )
        if hit.kind == "brief" and hit.content:
            for line in hit.content.splitlines():
                click.echo(f"    {line}")
        if hit.explain:
            click.echo("    " + "  ".join(f"{k}={v:.4f}" for k, v in hit.explain.items()))
    for procedure in result.procedures:
        click.echo(
            f"{procedure.procedure_id}  {procedure.score:.4f}  [procedure]  {procedure.goal}"
        )
    click.echo(f"({len(result.hits)} hits, {result.retrieval_id})")


@click.command()
@click.argument("refs", nargs=-1, required=True)
@located
@json_option
@click.pass_context
@reports_errors
def show(
    ctx: click.Context, refs: tuple[str, ...], scope: str | None, cwd: str | None, as_json: bool
) -> None:
    """Show full records (with history) for REFS."""
    with opened(ctx) as mem:
        result = mem.get_memory(list(refs), scope=scope, cwd=cwd)
    if not result.records:
        raise NotFound(
            f"no memory {', '.join(result.unknown)} in this scope; check the ref, or pass the "
            "--scope it was stored in (`cairn recall` lists refs)."
        )
    reply(result, as_json, print_records)


def _lines(lines: tuple[int, int] | None) -> str:
    return f" (now lines {lines[0]}-{lines[1]})" if lines else ""


def _print_evidence(evidence: Mapping[str, Any]) -> None:
    clients = evidence.get("clients")
    if isinstance(clients, Mapping) and clients:
        shown = [
            f"{name} ({', '.join(f'{k} {v}' for k, v in tally.items())})"
            for name, tally in clients.items()
            if isinstance(tally, Mapping)
        ]
        click.echo(f"  by client: {'; '.join(shown)}")
    for act in evidence.get("acts") or []:
        if isinstance(act, Mapping):
            click.echo(
                f"  {act.get('act')}: {act.get('kind')} {act.get('subject')} {act.get('effect')}"
                f"  (undo: cairn undo-act {act.get('act')})"
            )
    if evidence.get("rest"):
        click.echo(f"  resting: {evidence['rest']}")


def print_records(result: GetResult) -> None:
    for record in result.records:
        print_record(record)
    if result.unknown:
        click.echo(f"unknown: {', '.join(result.unknown)}")


def print_record(record: MemoryRecord) -> None:
    m = record.memory
    click.echo(f"{m.ref} [{m.type}] {m.status}{' pinned' if m.pinned else ''} scope={m.scope}")
    click.echo(
        f"  written {m.written_at:%Y-%m-%d %H:%M:%S}Z  occurred {m.occurred_at:%Y-%m-%d}"
        + (f"  until {m.until:%Y-%m-%d %H:%M:%S}Z" if m.until else "")
    )
    click.echo(
        f"  citation: {record.citation}{_lines(record.citation_lines)}"
        f"  source_ref: {m.source_ref or '-'}"
    )
    click.echo(f"  tags: {', '.join(m.tags) or '-'}  reason: {m.reason or '-'}")
    for line in link_lines(record):
        click.echo(line)
    click.echo(
        f"  cited {m.cited}  confirmed {m.confirmed}  contradicted {m.contradicted}"
        f"  accessed {m.access_count}"
    )
    _print_evidence(m.evidence)
    for line in m.content.splitlines() or [""]:
        click.echo(f"  | {line}")
    for entry in record.replaced:
        click.echo(
            f"  replaced {entry.ref} (until {entry.until:%Y-%m-%d}): {entry.summary}"
            if entry.until
            else f"  replaced {entry.ref}: {entry.summary}"
        )
    for entry in record.replaced_by_chain:
        click.echo(f"  replaced by {entry.ref}: {entry.summary}")


@click.command()
@click.argument("ref")
@click.argument("content")
@click.option("--reason", required=True, help="Why the claim changed.")
@located
@json_option
@click.pass_context
@reports_errors
def correct(ctx: click.Context, /, ref: str, content: str, reason: str, **opts: Any) -> None:
    """Write a new version of REF with CONTENT; the old version keeps its history. Content
    that starts with '-' goes after '--'."""
    as_json = opts.pop("as_json")
    with opened(ctx) as mem:
        result = mem.correct(ref, content, reason=reason, **opts)
    if as_json:
        emit_json(result)
    else:
        click.echo(f"{result.memory_id} replaces {ref}")


@click.command()
@click.argument("ref")
@click.option("--reason", required=True, help="Why it no longer holds.")
@located
@click.pass_context
@reports_errors
def forget(ctx: click.Context, /, ref: str, reason: str, **opts: Any) -> None:
    """Retire REF: recall stops returning it; --as-of before now still does."""
    with opened(ctx) as mem:
        mem.forget(ref, reason=reason, **opts)
    click.echo(f"{ref} retired")


@click.command()
@click.argument("ref")
@located
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
@reports_errors
def purge(ctx: click.Context, /, ref: str, yes: bool, **opts: Any) -> None:
    """Erase REF and every version of it for good (tombstone events remain)."""
    if not yes:
        if not sys.stdin.isatty():
            raise InvalidInput(
                f"purge erases {ref} for good and asks first, but there is no terminal to ask "
                "on; pass --yes to confirm."
            )
        click.confirm(f"Erase {ref} and every version of it permanently?", abort=True)
    with opened(ctx) as mem:
        tombstone = mem.purge(ref, **opts)
    click.echo(f"{ref} purged (tombstone {tombstone})")


@click.command()
@located
@click.option("--all", "all_scopes", is_flag=True, help="Every scope in the store.")
@json_option
@click.pass_context
@reports_errors
def stats(ctx: click.Context, /, as_json: bool, **opts: Any) -> None:
    """Counts by type, status and scope; vectors; store size; citation health; recall hit,
    used and helped rates; index freshness; pages indexed and skipped (and why)."""
    with opened(ctx) as mem:
        result = mem.stats(**opts)
    if as_json:
        emit_json(result)
        return
    click.echo(
        f"{result['memories']} memories in {result['store']['location']} "
        f"({result['store']['size_bytes']} bytes)"
    )
    for title in ("by_type", "by_status", "by_scope", "vectors", "citations", "recall", "index"):
        counts = result.get(title) or {}
        click.echo(f"{title}: " + (", ".join(f"{k}={v}" for k, v in counts.items()) or "-"))
    for line in page_lines(result.get("pages")):
        click.echo(line)


COMMANDS: tuple[click.Command, ...] = (
    remember,
    recall,
    query,
    show,
    correct,
    forget,
    purge,
    stats,
)
