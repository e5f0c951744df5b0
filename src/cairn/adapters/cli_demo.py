"""`cairn demo`: remember a few typed memories and recall them, to see cairn work end to end."""

from __future__ import annotations

import click

from cairn.adapters.cli_common import opened, reports_errors
from cairn.adapters.cli_memory import print_recall

DEMO_SCOPE = "project:demo/cairn-quickstart"

DEMO_MEMORIES: tuple[tuple[str, str], ...] = (
    ("decision", "We chose SQLite over PostgreSQL for local deployments: one file, no server."),
    ("constraint", "All API endpoints must require authentication, including health checks."),
    ("warning", "Running the migrations without --dry-run dropped the audit table on 2026-07-15."),
    ("preference", "Prefer pytest fixtures over setUp/tearDown methods in new tests."),
    ("lesson", "The flaky checkout test was a race on the shared temp dir; use tmp_path."),
    ("instruction", "Always run `make check` before opening a pull request."),
)

DEMO_QUERIES = (
    "which database do we use locally?",
    "what went wrong with migrations?",
    "how should I write tests?",
)


@click.command()
@click.pass_context
@reports_errors
def demo(ctx: click.Context) -> None:
    """Remember a few typed memories in a demo scope and recall them."""
    with opened(ctx) as mem:
        click.echo(f"store: {mem.store.location}\n")
        for mtype, content in DEMO_MEMORIES:
            result = mem.remember(content, type=mtype, scope=DEMO_SCOPE)
            click.echo(f"remember [{mtype}] -> {result.memory_id} {result.disposition}")
        for query in DEMO_QUERIES:
            click.echo(f"\nrecall {query!r}")
            print_recall(mem.recall(query, scope=DEMO_SCOPE, limit=3))
