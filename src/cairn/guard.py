"""The edge of the public API: every `Cairn` method checks its text arguments and turns a raw
driver error into cairn's error tree.

Text: a lone surrogate (U+D800..U+DFFF) is what Python makes of bytes that were not UTF-8; it
cannot be encoded, so it would surface deep inside as a `UnicodeEncodeError` (SQLite) or a
`TypeError`. It is refused up front, naming the argument, in strings nested in lists, tuples
and mappings too (tags, batch items, task context).

Driver errors: the SQLite backend reads outside transactions straight off its connection, so a
damaged page can raise `sqlite3.DatabaseError` from any read; it is translated here, once,
rather than at every query. (PostgreSQL translates at its connection layer.)
"""

from __future__ import annotations

import inspect
import sqlite3
from collections.abc import Callable, Iterator
from functools import wraps
from typing import Any, TypeVar

from cairn.errors import InvalidInput
from cairn.refusal import check_text
from cairn.store.sqlite.errors import translate

T = TypeVar("T")
# Arguments that name files or folders: the OS cannot take a NUL in a path.
PATH_ARGUMENTS = frozenset({"cwd", "path_or_url", "project", "path"})


def checks_inside(*names: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Mark arguments the method checks itself (a batch refuses one bad item, not the call)."""

    def mark(func: Callable[..., T]) -> Callable[..., T]:
        func.__dict__["_checks_inside"] = frozenset(names)
        return func

    return mark


def guarded(func: Callable[..., T]) -> Callable[..., T]:
    """`func` (a `Cairn` method) with its text arguments checked and SQLite errors translated."""
    signature = inspect.signature(func)
    inside: frozenset[str] = func.__dict__.get("_checks_inside", frozenset())

    @wraps(func)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> T:
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError:
            return func(self, *args, **kwargs)  # let Python report the wrong call as usual
        for name, value in _by_name(bound):
            if name not in inside:
                check_text(name, value)
            if name in PATH_ARGUMENTS and "\x00" in str(value or ""):
                raise InvalidInput(f"{name} holds a NUL character, which no path can; remove it.")
        try:
            return func(self, *args, **kwargs)
        except sqlite3.Error as exc:
            store = getattr(self, "store", None)
            raise translate(exc, str(getattr(store, "location", "the store"))) from exc

    return wrapper


def _by_name(bound: inspect.BoundArguments) -> Iterator[tuple[str, object]]:
    """The arguments after `self`, with `**options` spread out: each keyword by its own name."""
    for name, value in list(bound.arguments.items())[1:]:
        if bound.signature.parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
            yield from value.items()
        else:
            yield name, value


def guard_methods(cls: type[T]) -> type[T]:
    """Wrap every public method `cls` has (its own and its mixins') with `guarded`."""
    for name in dir(cls):
        if name.startswith("_"):
            continue
        static = inspect.getattr_static(cls, name)
        if isinstance(static, classmethod):
            setattr(cls, name, classmethod(guarded(static.__func__)))
        elif inspect.isfunction(static):
            setattr(cls, name, guarded(static))
    return cls
