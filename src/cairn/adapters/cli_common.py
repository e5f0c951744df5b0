"""What every `cairn` command module shares: the error wrapper, opening the store for one
command, reading stdin, printing JSON, and the common options.

The command modules (`cli_*.py`) import this module; it imports none of them, and `cli.py` only
assembles the command group from them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import click

from cairn.config import Settings
from cairn.core import Cairn
from cairn.errors import CairnError, InvalidInput, StoreError
from cairn.models import to_jsonable

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

EXIT_USAGE = 2


def reports_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn cairn's own errors into one clear line and exit status 2."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except CairnError as exc:
            click.echo(f"error: {exc.message}", err=True)
            sys.exit(EXIT_USAGE)

    return wrapper


def store_location(ctx: click.Context) -> str:
    """Where the store is; a `--store` file in a missing directory is refused, not created
    (a mistyped path would otherwise grow a new, empty store somewhere unexpected)."""
    location: str = ctx.obj["store"]
    if ctx.obj.get("explicit") and not location.startswith(("postgresql://", "postgres://")):
        path = location[len("sqlite:///") - 1 :] if location.startswith("sqlite:///") else location
        parent = Path(path).expanduser().parent
        if path != ":memory:" and not parent.is_dir():
            raise StoreError(
                f"the directory {parent} of --store {location} does not exist; create it "
                f"(mkdir -p {parent}) or pass another --store."
            )
    return location


@contextmanager
def opened(ctx: click.Context) -> Iterator[Cairn]:
    """The store for one command. The command exits right after its write, so consolidation a
    write makes due runs as a detached process, not on a thread the exit would cut short."""
    settings: Settings = ctx.obj["settings"]
    mem = Cairn.open(
        store_location(ctx), settings=settings, integration="cli", background="process"
    )
    try:
        yield mem
    finally:
        mem.close()


def stdin_text() -> str:
    """Standard input as text. Bytes that are not UTF-8 become lone surrogates, which the call
    then refuses by name instead of failing here with a decoding traceback."""
    return sys.stdin.buffer.read().decode("utf-8", "surrogateescape")


def emit_json(value: Any) -> None:
    click.echo(json.dumps(to_jsonable(value), ensure_ascii=False, indent=2))


scope_option = click.option("--scope", help="Scope as kind:id (default: detected from --cwd).")
cwd_option = click.option(
    "--cwd", type=click.Path(file_okay=False), help="Directory whose repository gives the scope."
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
session_option = click.option("--session-id", help="The open session (from `cairn activate`).")


def option_group(*options: Callable[[F], F]) -> Callable[[F], F]:
    """Several options as one decorator, shown in `--help` in the order given."""

    def apply(func: F) -> F:
        for option in reversed(options):
            func = option(func)
        return func

    return apply


# The `--scope` and `--cwd` options: where a command acts.
located = option_group(scope_option, cwd_option)


def reply(result: T, as_json: bool, lines: Callable[[T], None]) -> None:
    """A command's answer: JSON with `--json`, else its own lines."""
    if as_json:
        emit_json(result)
    else:
        lines(result)


def json_object(text: str | None, option: str) -> dict[str, Any] | None:
    """Parse an option holding a JSON object; a clear error when it holds anything else."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{option} is not valid JSON ({exc.msg}); give an object.") from None
    except RecursionError:
        raise InvalidInput(f"{option} nests too deeply to read; give a flat object.") from None
    if not isinstance(value, dict):
        raise InvalidInput(f'{option} must be a JSON object such as {{"platform": "iOS"}}.')
    return value
