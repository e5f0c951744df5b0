"""Progress on stderr for the command line's long steps, with click's own bar (no dependency).

On a terminal the bar redraws in place; elsewhere click prints the label once, so a log or a
captured stderr gets one line saying what ran, never a stream of redraws.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Generator, Iterator
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


def progress_bar(label: str, total: int) -> Callable[[int], None]:
    """A bar on stderr for `total` steps; the callable it returns advances it and closes it at
    the end. Off a terminal, click prints the label once."""
    bar: ProgressBar[int] = click.progressbar(length=max(total, 1), label=label, file=sys.stderr)
    bar.__enter__()
    done = 0

    def advance(steps: int) -> None:
        nonlocal done
        done += steps
        bar.update(steps)
        if done >= total:
            bar.__exit__(None, None, None)

    return advance


def say(message: str) -> None:
    """One progress line on stderr, so that it never mixes with a command's output."""
    click.echo(message, err=True)


class _CountingWriter(io.TextIOBase):
    """Writes through to `out`, advancing a bar by the lines written. The bar is drawn only on
    a terminal, from the first write on: an export's stderr elsewhere (a log, an agent's
    captured output) stays exactly its summary or its one error line."""

    def __init__(self, out: IO[str], total_lines: int, label: str) -> None:
        super().__init__()
        self._out, self._total, self._label = out, max(total_lines, 1), label
        self.bar: ProgressBar[int] | None = None

    def write(self, text: str) -> int:
        written = self._out.write(text)
        if self.bar is None and sys.stderr.isatty():
            self.bar = click.progressbar(length=self._total, label=self._label, file=sys.stderr)
            self.bar.__enter__()
        if self.bar is not None:
            self.bar.update(text.count("\n"))
        return written

    def flush(self) -> None:
        self._out.flush()


@contextmanager
def writing_with_progress(out: IO[str], total_lines: int, label: str) -> Iterator[IO[str]]:
    """`out`, with a bar on stderr that counts the lines written against `total_lines`."""
    writer = _CountingWriter(out, total_lines, label)
    try:
        yield writer  # type: ignore[misc]
    finally:
        if writer.bar is not None:
            writer.bar.__exit__(None, None, None)
