"""Lessons on tool calls in the `cairn` command: `cairn lessons` (one call, `--stdin`, or an
agent's hook with `--hook claude-code`), its mute rules, `cairn confirm`, and
`cairn hook claude-code install|uninstall`.

In hook mode nothing cairn does can fail the agent (see `cairn.adapters.agent_hooks`). This is
the slow, server-less path: each call starts Python and opens the store. `cairn-hook` (with
`cairn hook serve`, in `cli_hook_server`) answers the same calls alike in a few milliseconds;
the installer writes that command.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from cairn.adapters.agent_hooks import CLAUDE_CODE, GENERIC, answer_in_process
from cairn.adapters.cli_common import (
    cwd_option,
    emit_json,
    json_object,
    json_option,
    located,
    opened,
    option_group,
    reply,
    reports_errors,
    scope_option,
    session_option,
)
from cairn.adapters.cli_hook_server import hook_serve, hook_stop
from cairn.config import Settings
from cairn.lessons import claude_code
from cairn.lessons.models import ClaudeHookInstall, LessonsResult
from cairn.records.lessons import MuteRule


def _run_hook(ctx: click.Context, kind: str, overrides: dict[str, Any] | None = None) -> None:
    try:
        raw = b"" if sys.stdin is None else sys.stdin.buffer.read()
    except (OSError, ValueError):
        raw = b""  # no readable input: answered like an empty one
    reply = answer_in_process(kind, raw, ctx.obj["store"], ctx.obj["settings"], overrides)
    click.echo(reply.stdout, nl=False)
    click.echo(reply.stderr, nl=False, err=True)


@click.group(invoke_without_command=True)
@click.option("--tool", help="The tool about to be called: Edit, Write, Read, Bash, ...")
@click.option("--args", "args_json", help='Its arguments as JSON, e.g. {"file_path": "src/a.py"}.')
@click.option("--command", "shell", help="Shorthand for --tool Bash with this command line.")
@click.option("--path", "paths", multiple=True, help="A file the tool touches (repeatable).")
@click.option("--stdin", "from_stdin", is_flag=True, help="Read one call as JSON on stdin.")
@click.option("--hook", type=click.Choice([CLAUDE_CODE]), help="Answer an agent's hook event.")
@located
@session_option
@click.option("--limit", type=int, default=3, show_default=True, help="At most 10.")
@json_option
@click.pass_context
def lessons(ctx: click.Context, /, **opts: Any) -> None:
    """What memory says before a tool call; `cairn lessons mute|unmute|list` manage mutes."""
    if ctx.invoked_subcommand is not None:
        return
    if opts["hook"] is not None:
        _run_hook(ctx, opts["hook"])
    elif opts["from_stdin"]:
        _run_hook(ctx, GENERIC, _given_on_command_line(ctx, opts))
    else:
        _one_call(ctx, opts)


def _given_on_command_line(ctx: click.Context, opts: dict[str, Any]) -> dict[str, Any]:
    """The call's fields given as options (`--cwd`, ...): they win over the JSON on stdin."""
    given = {name: opts[name] for name in ("scope", "cwd", "session_id") if opts[name] is not None}
    if ctx.get_parameter_source("limit") is click.core.ParameterSource.COMMANDLINE:
        given["limit"] = opts["limit"]
    if "cwd" in given:
        given["cwd"] = str(Path(given["cwd"]).absolute())
    return given


@reports_errors
def _one_call(ctx: click.Context, opts: dict[str, Any]) -> None:
    args = json_object(opts["args_json"], "--args") or {}
    tool = opts["tool"]
    if opts["shell"] is not None:
        tool, args = tool or "Bash", {**args, "command": opts["shell"]}
    if opts["paths"]:
        args = {**args, "files": list(opts["paths"])}
    if tool is None:
        raise click.UsageError("name the call: --tool NAME [--args JSON], --command, or --stdin.")
    with opened(ctx) as mem:
        result = mem.lessons(tool, args, scope=opts["scope"], cwd=opts["cwd"],
                             session_id=opts["session_id"], limit=opts["limit"])  # fmt: skip
    if opts["as_json"]:
        emit_json(result)
    else:
        print_lessons(result)


def print_lessons(result: LessonsResult) -> None:
    if result.text:
        click.echo(result.text)
    else:
        touched = ", ".join(result.targets) or "nothing cairn can tell"
        click.echo(f"nothing worth saying before this {result.tool} call ({touched})")
    if result.repeated or result.muted:
        click.echo(f"({result.repeated} already given in this session, {result.muted} muted)")


# Listed as `--help` shows them.
_rule_options = option_group(
    json_option,
    cwd_option,
    scope_option,
    click.option("--path", help="A path or glob relative to the repository root."),
    click.option("--tag", help="A tag."),
    click.option("--type", "mtype", help="A memory type (warning, lesson, ...)."),
)


@lessons.command("mute")
@_rule_options
@click.pass_context
@reports_errors
def mute(ctx: click.Context, /, mtype: str | None, as_json: bool, **opts: Any) -> None:
    """Stop lessons of a type, with a tag, or on a path, in the scope."""
    with opened(ctx) as mem:
        rule = mem.mute_lessons(type=mtype, **opts)
    reply(rule, as_json, lambda done: click.echo(done.describe()))


@lessons.command("unmute")
@_rule_options
@click.pass_context
@reports_errors
def unmute(ctx: click.Context, /, mtype: str | None, as_json: bool, **opts: Any) -> None:
    """Remove a mute rule of the scope."""
    with opened(ctx) as mem:
        removed = mem.unmute_lessons(type=mtype, **opts)
    said = "mute rule removed" if removed else "no such mute rule in this scope"
    reply({"removed": removed}, as_json, lambda _: click.echo(said))


@lessons.command("list")
@located
@json_option
@click.pass_context
@reports_errors
def list_mutes(ctx: click.Context, /, as_json: bool, **opts: Any) -> None:
    """The mute rules that apply in the scope (its own and global's)."""
    with opened(ctx) as mem:
        rules = mem.lesson_mutes(**opts)
    reply(rules, as_json, print_rules)


def print_rules(rules: list[MuteRule]) -> None:
    if not rules:
        click.echo("no lessons are muted here")
    for rule in rules:
        click.echo(f"{rule.kind} {rule.value}  ({rule.scope}, since {rule.created_at:%Y-%m-%d})")


_person_options = option_group(
    json_option,
    cwd_option,
    scope_option,
    click.option("--person", help="Who confirms (default: CAIRN_PERSON, else your login)."),
)


@click.command()
@click.argument("ref")
@click.option("--undo", is_flag=True, help="Take back your confirmation of REF.")
@_person_options
@click.pass_context
@reports_errors
def confirm(ctx: click.Context, /, ref: str, undo: bool, **opts: Any) -> None:
    """Say, as a person, that memory REF still holds: it counts (never an echo of the agent
    that wrote it) and restores a contradicted or resting memory; --undo takes it back."""
    _confirm(ctx, ref, undo, opts)


@click.command()
@click.argument("ref")
@_person_options
@click.pass_context
@reports_errors
def unconfirm(ctx: click.Context, /, ref: str, **opts: Any) -> None:
    """Take back your confirmation of memory REF (the same as `cairn confirm --undo`)."""
    _confirm(ctx, ref, True, opts)


def _confirm(ctx: click.Context, ref: str, undo: bool, opts: dict[str, Any]) -> None:
    settings: Settings = ctx.obj["settings"]
    person = opts["person"] if opts["person"] is not None else settings.person
    where = {"scope": opts["scope"], "cwd": opts["cwd"]}
    with opened(ctx) as mem:
        if undo:
            result = mem.unconfirm(ref, person=person, **where)
        else:
            result = mem.confirm(ref, person=person, **where)
    if opts["as_json"]:
        emit_json(result)
    else:
        click.echo(result.message)


# Claude Code hooks -----------------------------------------------------------------------------
@click.group("claude-code")
def claude_code_hooks() -> None:
    """Claude Code hooks: lessons before tool calls, the brief at session start, and a
    reminder to remember at the end."""


def _where_options(command: Any) -> Any:
    command = click.option("--user", is_flag=True, help="~/.claude/settings.json.")(command)
    return click.option(
        "--project",
        type=click.Path(file_okay=False),
        help="The project's .claude/settings.json (default: this directory).",
    )(command)


def _settings_path(project: str | None, user: bool) -> Path:
    if user and project is not None:
        raise click.UsageError("give --project DIR or --user, not both.")
    if user:
        return claude_code.settings_file(project=None, user_home=Path.home())
    return claude_code.settings_file(project=Path(project or "."), user_home=None)


@claude_code_hooks.command("install")
@_where_options
@json_option
@click.pass_context
@reports_errors
def install(ctx: click.Context, /, project: str | None, user: bool, as_json: bool) -> None:
    """Add cairn's PreToolUse, SessionStart and Stop hooks to Claude Code's settings (merged
    with what is there; running it again changes nothing)."""
    explicit = ctx.find_root().params.get("store") or _home_store(ctx)
    result = claude_code.install(_settings_path(project, user), claude_code.hook_command(explicit))
    _print_install(result, as_json, "installed")


def _home_store(ctx: click.Context) -> str | None:
    """The store under a `CAIRN_HOME` set where the installer runs: Claude Code starts the
    hooks without that variable (it is the MCP server's), so the command must carry it."""
    settings: Settings = ctx.obj["settings"]
    if os.environ.get("CAIRN_HOME") and not settings.url:
        return settings.store_location
    return None


@claude_code_hooks.command("uninstall")
@_where_options
@json_option
@reports_errors
def uninstall(project: str | None, user: bool, as_json: bool) -> None:
    """Remove cairn's hooks from Claude Code's settings; everything else stays."""
    _print_install(claude_code.uninstall(_settings_path(project, user)), as_json, "removed")


def _print_install(result: ClaudeHookInstall, as_json: bool, verb: str) -> None:
    if as_json:
        emit_json(result)
        return
    click.echo(f"{result.settings_path}:")
    if result.changed:
        click.echo(f"  {verb}: {', '.join(result.changed)}")
    if result.unchanged:
        click.echo(f"  unchanged: {', '.join(result.unchanged)}")
    if result.command:
        click.echo(f"  command: {result.command}")


COMMANDS: tuple[click.Command, ...] = (lessons, confirm, unconfirm)
HOOK_COMMANDS: tuple[click.Command, ...] = (claude_code_hooks, hook_serve, hook_stop)
