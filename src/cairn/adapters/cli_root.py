"""The top of the `cairn` command: every failure leaves as one `error: ...` line and exit 2.

Commands turn cairn's own errors into that line themselves (`reports_errors`). This group
catches what is left at the very top, once: click's usage errors (which click would print as
a usage block), arguments that are not valid UTF-8, and - as a last resort - any unexpected
exception, reported as an internal error instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import click

from cairn.errors import CairnError

EXIT_ERROR = 2


class CairnGroup(click.Group):
    """The root group: parsing and invoking both run under `one_line_errors`."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        with one_line_errors():
            if parent is None:
                check_utf8(args)
            return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        with one_line_errors():
            return super().invoke(ctx)


@contextmanager
def one_line_errors() -> Iterator[None]:
    try:
        yield
    except (click.exceptions.Exit, click.Abort):
        raise  # --help, ctx.exit() and a declined confirmation keep click's own handling
    except click.ClickException as exc:
        fail(_usage_message(exc))
    except CairnError as exc:
        fail(exc.message)
    except Exception as exc:  # noqa: BLE001 - the last resort: no traceback reaches the user
        fail(
            f"internal error ({type(exc).__name__}): {_first_line(exc)}; please report it, "
            "with the command you ran."
        )


def fail(message: str) -> None:
    """Print one error line and leave with exit status 2."""
    click.echo(f"error: {' '.join(message.split())}", err=True)
    raise click.exceptions.Exit(EXIT_ERROR)


def check_utf8(args: Sequence[str]) -> None:
    """Refuse arguments that were not valid UTF-8 (Python keeps such bytes as lone surrogates),
    and NUL characters, which a real command line cannot carry and no path may hold."""
    for position, arg in enumerate(args, start=1):
        if "\x00" in arg:
            raise CairnError(f"argument {position} holds a NUL character; remove it.")
        bad = next((ch for ch in arg if 0xD800 <= ord(ch) <= 0xDFFF), None)
        if bad is not None:
            shown = f"byte 0x{ord(bad) - 0xDC00:02x}" if ord(bad) >= 0xDC80 else "a lone surrogate"
            raise CairnError(
                f"argument {position} is not valid UTF-8 ({shown}); pass text encoded as UTF-8."
            )


def _usage_message(exc: click.ClickException) -> str:
    message = exc.format_message()
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        return f"{message} (see `{ctx.command_path} --help`)"
    return message


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "no message"
