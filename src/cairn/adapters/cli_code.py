"""Code-awareness verbs of the `cairn` command: branch goal and brief, git hooks, acts
(observe merge/revert/discard, undo-act) and tidy. Each opens the store, makes one call on
`Cairn` and prints.

`cairn hook run` is what the installed git hooks call; it reads the hook's standard input (the
rewritten or updated refs) and reports as the `git-hook` client.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from cairn.adapters.cli_common import (
    cwd_option,
    emit_json,
    json_option,
    located,
    opened,
    reply,
    reports_errors,
    stdin_text,
    store_location,
)
from cairn.code.records import ActResult, BranchBrief, Proposal
from cairn.config import Settings
from cairn.core import Cairn

HOOK_INTEGRATION = "git-hook"


@contextmanager
def _as_hook(ctx: click.Context) -> Iterator[Cairn]:
    settings: Settings = ctx.obj["settings"]
    mem = Cairn.open(store_location(ctx), settings=settings, integration=HOOK_INTEGRATION)
    try:
        yield mem
    finally:
        mem.close()


# branch ------------------------------------------------------------------------------------
@click.group()
def branch() -> None:
    """The checked-out branch: its goal and brief."""


@branch.command("goal")
@click.argument("text", required=False)
@click.option("--branch", "name", help="Another branch than the one checked out.")
@located
@json_option
@click.pass_context
@reports_errors
def branch_goal(ctx: click.Context, /, text: str | None, name: str | None, **opts: Any) -> None:
    """Set the branch's goal to TEXT, or show it when TEXT is omitted."""
    as_json = opts.pop("as_json")
    with opened(ctx) as mem:
        if text is None:
            goal = mem.branch_goal(branch=name, **opts)
        else:
            goal = mem.set_branch_goal(text, branch=name, **opts)
    if as_json:
        emit_json(goal)
    elif goal is None:
        click.echo("no goal set for this branch; set one with `cairn branch goal TEXT`")
    else:
        click.echo(f"{goal.branch}: {goal.goal}")


@branch.command("brief")
@located
@json_option
@click.pass_context
@reports_errors
def branch_brief(ctx: click.Context, /, **opts: Any) -> None:
    """Where work on the checked-out branch stands."""
    as_json = opts.pop("as_json")
    with opened(ctx) as mem:
        found = mem.branch_brief(**opts)
    reply(found, as_json, print_brief)


def print_brief(found: BranchBrief | None) -> None:
    if found is None:
        click.echo("no branch is checked out here (not a git checkout, or a detached HEAD)")
        return
    click.echo(found.render())


# hooks -------------------------------------------------------------------------------------
@click.group()
def hook() -> None:
    """Git hooks that report merges, reverts, discards and rewrites to cairn."""


@hook.command("install")
@cwd_option
@json_option
@click.pass_context
@reports_errors
def hook_install(ctx: click.Context, /, cwd: str | None, as_json: bool) -> None:
    """Write post-merge, post-commit, post-rewrite and reference-transaction hooks (idempotent;
    existing hooks are kept and run first)."""
    with opened(ctx) as mem:
        result = mem.install_hooks(cwd=cwd)
    if as_json:
        emit_json(result)
        return
    click.echo(f"hooks in {result.hooks_dir}")
    for title, names in (
        ("written", result.written),
        ("kept and chained", result.chained),
        ("already installed", result.unchanged),
    ):
        if names:
            click.echo(f"  {title}: {', '.join(names)}")


@hook.command("run", hidden=True)
@click.argument("name")
@click.argument("args", nargs=-1)
@click.pass_context
@reports_errors
def hook_run(ctx: click.Context, /, name: str, args: tuple[str, ...]) -> None:
    """Called by the installed hooks with the hook's name, arguments and input."""
    stdin = "" if sys.stdin is None or sys.stdin.isatty() else stdin_text()
    with _as_hook(ctx) as mem:
        for result in mem.run_hook(name, list(args), stdin):
            print_act(result)


# acts --------------------------------------------------------------------------------------
@click.group()
def observe() -> None:
    """Tell cairn what happened to the code (the git hooks do this for you)."""


def _act_command(kind: str, argument: str, help_text: str) -> click.Command:
    @click.argument(argument)
    @located
    @json_option
    @click.pass_context
    @reports_errors
    def command(ctx: click.Context, /, as_json: bool, **opts: Any) -> None:
        subject = opts.pop(argument)
        with opened(ctx) as mem:
            result = getattr(mem, f"observe_{kind}")(subject, **opts)
        reply(result, as_json, print_act)

    command.__doc__ = help_text
    return observe.command(kind)(command)


_act_command("merge", "branch", "BRANCH was merged: confirm the memories its sessions cited.")
_act_command("revert", "commit", "COMMIT was reverted: contradict what its branch cited.")
_act_command("discard", "branch", "BRANCH was dropped unmerged: contradict what it cited.")


@click.command("undo-act")
@click.argument("act_id")
@located
@json_option
@click.pass_context
@reports_errors
def undo_act(ctx: click.Context, /, act_id: str, as_json: bool, **opts: Any) -> None:
    """Take back ACT_ID (act_N): its confirmations or contradictions."""
    with opened(ctx) as mem:
        result = mem.undo_act(act_id, **opts)
    reply(result, as_json, print_act)


def print_act(result: ActResult) -> None:
    verb = "undone" if result.undone else "recorded"
    click.echo(f"{result.act_id} {result.kind} {result.subject} {verb} in {result.scope}")
    for title, refs in (
        ("confirmed", result.confirmed),
        ("contradicted", result.contradicted),
        ("rested", result.rested),
        ("restored", result.restored),
    ):
        if refs:
            click.echo(f"  {title}: {', '.join(refs)}")
    if not result.undone:
        click.echo(f"  undo with: {result.undo}")


# tidy --------------------------------------------------------------------------------------
@click.group(invoke_without_command=True)
@located
@click.option("--skills-dir", help="Where skill files go, relative to the repository root "
              "(default .claude/skills).")  # fmt: skip
@json_option
@click.pass_context
@reports_errors
def tidy(ctx: click.Context, /, as_json: bool, **opts: Any) -> None:
    """List tidy proposals; `cairn tidy accept|decline ID` decides one."""
    if ctx.invoked_subcommand is not None:
        return
    with opened(ctx) as mem:
        proposals = mem.tidy(**opts)
    reply(proposals, as_json, print_proposals)


def print_proposals(proposals: list[Proposal]) -> None:
    if not proposals:
        click.echo("nothing to tidy")
        return
    for proposal in proposals:
        click.echo(f"{proposal.id} [{proposal.kind}] {proposal.summary}")
        merged = proposal.detail.get("merged_text")
        if isinstance(merged, str):
            for line in merged.splitlines():
                click.echo(f"    | {line}")
    click.echo("decide with: cairn tidy accept ID  /  cairn tidy decline ID")


def _decision_command(verb: str) -> click.Command:
    @click.argument("proposal_id")
    @located
    @json_option
    @click.pass_context
    @reports_errors
    def command(ctx: click.Context, /, proposal_id: str, as_json: bool, **opts: Any) -> None:
        with opened(ctx) as mem:
            result = getattr(mem, f"tidy_{verb}")(proposal_id, **opts)
        if as_json:
            emit_json(result)
            return
        changed = f": {', '.join(result.changed)}" if result.changed else ""
        written = f" (wrote {result.path})" if result.path else ""
        click.echo(f"{result.id} {result.status}{changed}{written}")

    command.__doc__ = f"{verb.capitalize()} tidy proposal PROPOSAL_ID (tidy_N)."
    return tidy.command(verb)(command)


_decision_command("accept")
_decision_command("decline")


# consolidate ---------------------------------------------------------------------------------
@click.command()
@click.option("--if-due", is_flag=True, help="Only when CAIRN_CONSOLIDATE_INTERVAL has passed.")
@click.option("--quiet", is_flag=True, help="Print nothing (the background run).")
@json_option
@click.pass_context
@reports_errors
def consolidate(ctx: click.Context, /, if_due: bool, quiet: bool, as_json: bool) -> None:
    """Run the store's upkeep now: refresh tidy proposals, rest idle memories, keep the
    indexes healthy. Writes start it in the background once a day by default."""
    with opened(ctx) as mem:
        result = mem.consolidate(if_due=if_due)
    if quiet:
        return
    if as_json:
        emit_json(result)
    elif result.ran:
        click.echo(f"consolidated {result.scopes} scope(s): {result.proposals} open tidy "
                   f"proposal(s), {result.rested} memory(ies) rested")  # fmt: skip
    else:
        click.echo(f"not consolidated: {result.reason}")


COMMANDS: tuple[click.Command, ...] = (branch, hook, observe, undo_act, tidy, consolidate)
