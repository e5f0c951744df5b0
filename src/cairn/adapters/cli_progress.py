"""Progress on stderr for the command line's long steps, with click's own bar (no dependency).

On a terminal the bar redraws in place; elsewhere click prints the label once, so a log or a
captured stderr gets one line saying what ran, never a stream of redraws.
"""

from __future__ import annotations

import sys
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING

import click

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar


@contextmanager
def lines_with_progress(source: IO[str], total_chars: int, label: str) -> Iterator[Iterator[str]]:
    """The lines of `source`, advancing a bar on stderr by their length (`total_chars` in all).

    The bar appears with the first line read, so a command that refuses before reading (an
    import into a non-empty store) prints only its one error line. The length is counted in
    characters, the size on disk in bytes: for non-ASCII text the bar ends a little short.
    """
    lines = _advancing(source, max(total_chars, 1), label)
    try:
        yield lines
    finally:
        lines.close()  # closes the bar even when the reader stopped early


def _advancing(source: IO[str], total: int, label: str) -> Generator[str, None, None]:
    bar: ProgressBar[int] | None = None
    try:
        for line in source:
            if bar is None:
                bar = click.progressbar(length=total, label=label, file=sys.stderr)
                bar.__enter__()
            bar.update(len(line))
            yield line
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)


def say(message: str) -> None:
    """One progress line on stderr, so that it never mixes with a command's output."""
    click.echo(message, err=True)
