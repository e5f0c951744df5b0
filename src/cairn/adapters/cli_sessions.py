"""Session verbs of the `cairn` command: activate, feedback, commit, end, pin, episodes,
log-progress and history. Each opens the store, makes one call on `Cairn` and prints.

Sessions live in the store, so one process can activate and another commit: a shell script or
an agent hook passes the `ses_...` id between calls.
"""

from __future__ import annotations

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
)
from cairn.adapters.mcp_render import labelled_memories
from cairn.errors import InvalidInput
from cairn.models import Hit
from cairn.sessions.models import Brief, EpisodesResult, HistoryResult, TraceLine

_USED = {"used": True, "unused": False}


@click.command()
@click.argument("task")
@located
@click.option("--task-context", help='Facts about the task as JSON, e.g. {"platform": "iOS"}.')
@json_option
@click.pass_context
@reports_errors
def activate(ctx: click.Context, /, task: str, task_context: str | None, **opts: Any) -> None:
    """Open a session for TASK and print its id and brief."""
    as_json = opts.pop("as_json")
    context = json_object(task_context, "--task-context")
    with opened(ctx) as mem:
        brief = mem.activate(task, task_context=context, **opts)
    reply(brief, as_json, print_brief)


def print_brief(brief: Brief) -> None:
    click.echo(f"session {brief.session_id} in {brief.scope} (brief {brief.retrieval_id})")
    for label, items in labelled_memories(brief):
        for item in items:
            click.echo(f"{label}: {item.memory_id}  {item.summary}")
    if brief.branch.branch or brief.branch.commits:
        click.echo(f"branch: {brief.branch.branch or '(detached)'}")
        if brief.branch.goal:
            click.echo(f"  goal: {brief.branch.goal}")
        for open_item in brief.branch.open_items:
            click.echo(f"  open {open_item.ref} [{open_item.type}] {open_item.summary}")
        for commit in brief.branch.commits:
            click.echo(f"  {commit.sha} {commit.subject}")
    for hit in brief.memories:
        click.echo(_hit_line(hit))
    for procedure in brief.procedures:
        click.echo(f"procedure: {procedure.procedure_id}  {procedure.goal}")
    if brief.more_available:
        click.echo("(more available: recall in the session for the rest)")
    for rule in brief.lesson_mutes:
        click.echo(f"lessons muted: {rule.kind} {rule.value} ({rule.scope})")


def _hit_line(hit: Hit) -> str:
    return f"relevant: {hit.ref}  [{hit.type}]  {hit.summary}"


@click.command()
@click.argument("session_id")
@click.argument("retrieval_id")
@click.argument("assessments", nargs=-1)
@click.option("--assessments-json", help="Assessments as a JSON list instead of REF:USED:EFFECT.")
@json_option
@click.pass_context
@reports_errors
def feedback(
    ctx: click.Context,
    /,
    session_id: str,
    retrieval_id: str,
    assessments: tuple[str, ...],
    assessments_json: str | None,
    as_json: bool,
) -> None:
    """Assess what RETRIEVAL_ID returned: each ASSESSMENT is REF:used|unused:EFFECT, e.g.
    mem_3:used:helped (effects: helped, no_effect, harmed, unknown)."""
    items = _assessments(assessments, assessments_json)
    with opened(ctx) as mem:
        result = mem.feedback(session_id, retrieval_id, items)
    if as_json:
        emit_json(result)
        return
    pending = ", ".join(result.pending) or "none"
    click.echo(
        f"{result.recorded} assessments recorded on {result.retrieval_id}; "
        f"still waiting for feedback: {pending}"
    )


def _assessments(args: tuple[str, ...], as_json: str | None) -> list[dict[str, Any]]:
    if as_json is not None:
        if args:
            raise InvalidInput("give assessments as arguments or --assessments-json, not both.")
        import json

        try:
            value = json.loads(as_json)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"--assessments-json is not valid JSON ({exc.msg}).") from None
        except RecursionError:
            raise InvalidInput("--assessments-json nests too deeply to read.") from None
        if not isinstance(value, list):
            raise InvalidInput("--assessments-json must be a JSON list of assessments.")
        return value
    items = []
    for arg in args:
        ref, _, rest = arg.partition(":")
        used, _, effect = rest.partition(":")
        if not ref or used not in _USED or not effect:
            raise InvalidInput(
                f"assessment {arg!r} is not REF:used|unused:EFFECT, e.g. mem_3:used:helped."
            )
        items.append({"ref": ref, "used": _USED[used], "effect": effect})
    return items


@click.command()
@click.argument("session_id")
@click.option("--outcome", required=True, help="success, partial, failure or unknown.")
@click.option("--summary", required=True, help="What happened, in a few sentences.")
@click.option("--procedure", "procedure_json", help="The method as JSON: {goal, steps, ...}.")
@click.option("--step", "steps", multiple=True, help="A step of the method (repeatable).")
@click.option("--caveat", "caveats", multiple=True, help="A caveat of the method (repeatable).")
@click.option("--goal", help="What the method achieves (default: the session's task).")
@click.option("--used", multiple=True, help="A memory that shaped the work (repeatable).")
@json_option
@click.pass_context
@reports_errors
def commit(ctx: click.Context, /, session_id: str, **opts: Any) -> None:
    """Close SESSION_ID with its outcome; --step (or --procedure) captures the method."""
    procedure = _procedure(opts)
    with opened(ctx) as mem:
        result = mem.commit(
            session_id,
            outcome=opts["outcome"],
            summary=opts["summary"],
            procedure=procedure,
            used=list(opts["used"]) or None,
        )
    if opts["as_json"]:
        emit_json(result)
        return
    captured = f", procedure {result.procedure_id}" if result.procedure_id else ""
    click.echo(f"{result.session_id} committed: episode {result.episode_id}{captured}")


def _procedure(opts: dict[str, Any]) -> dict[str, Any] | None:
    spec = json_object(opts["procedure_json"], "--procedure")
    loose = {"steps": list(opts["steps"]), "caveats": list(opts["caveats"]), "goal": opts["goal"]}
    if spec is not None and any(loose.values()):
        raise InvalidInput("give the procedure as --procedure JSON or as --step/--caveat/--goal.")
    if spec is not None:
        return spec
    if not opts["steps"]:
        if opts["caveats"] or opts["goal"]:
            raise InvalidInput("a procedure needs its steps: add --step for each.")
        return None
    return {k: v for k, v in loose.items() if v}


@click.command()
@click.argument("session_id")
@click.option("--summary", help="Why the session ends without a commit.")
@click.pass_context
@reports_errors
def end(ctx: click.Context, /, session_id: str, summary: str | None) -> None:
    """Close SESSION_ID without a procedure (no feedback needed)."""
    with opened(ctx) as mem:
        result = mem.end(session_id, summary=summary)
    click.echo(f"{result.session_id} ended: episode {result.episode_id}")


@click.command()
@click.argument("note")
@located
@session_option
@click.pass_context
@reports_errors
def pin(ctx: click.Context, /, note: str, **opts: Any) -> None:
    """Append NOTE to the trace for the next turns (not semantically indexed)."""
    with opened(ctx) as mem:
        written = mem.pin(note, **opts)
    click.echo(f"pinned {written.event_id} in {written.scope}")


@click.command("log-progress")
@click.argument("session_id")
@click.argument("text")
@click.option("--used", multiple=True, help="A memory that shaped this step (repeatable).")
@click.pass_context
@reports_errors
def log_progress(ctx: click.Context, /, session_id: str, text: str, used: tuple[str, ...]) -> None:
    """Add a progress line TEXT to SESSION_ID's trace."""
    with opened(ctx) as mem:
        written = mem.log_progress(session_id, text, list(used) or None)
    click.echo(f"logged {written.event_id} on {session_id}")


@click.command()
@click.argument("timestamp")
@located
@json_option
@click.pass_context
@reports_errors
def episodes(ctx: click.Context, /, timestamp: str, as_json: bool, **opts: Any) -> None:
    """The trace around TIMESTAMP ("YYYY-MM-DD HH:MM:SS", UTC when no zone)."""
    with opened(ctx) as mem:
        result = mem.episodes(timestamp, **opts)
    reply(result, as_json, _print_trace)


@click.command()
@click.option("--max-chars", type=int, help="At most this many characters (default max_history).")
@located
@json_option
@click.pass_context
@reports_errors
def history(ctx: click.Context, /, max_chars: int | None, as_json: bool, **opts: Any) -> None:
    """The most recent lines of the trace, pins included, for the next turn."""
    with opened(ctx) as mem:
        result = mem.history(max_chars, **opts)
    reply(result, as_json, _print_trace)


def _print_trace(result: EpisodesResult | HistoryResult) -> None:
    _print_lines(result.lines, f"nothing in the trace of {result.scope}")


def _print_lines(lines: tuple[TraceLine, ...], empty: str) -> None:
    if not lines:
        click.echo(empty)
    for line in lines:
        click.echo(line.line)


COMMANDS: tuple[click.Command, ...] = (
    activate,
    feedback,
    commit,
    end,
    pin,
    log_progress,
    episodes,
    history,
)
