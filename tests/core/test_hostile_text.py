"""Lone surrogates (what Python makes of bytes that are not UTF-8) in any text argument of any
public `Cairn` method: an `InvalidInput` naming the argument, never a TypeError or a
UnicodeEncodeError from deep inside a backend, and nothing stored."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from cairn import Cairn, CairnError, InvalidInput
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from clocks import FakeClock

BAD = "caf\udcff"


def _text_parameters() -> list[tuple[str, str, str]]:
    """(method, parameter, annotation) for every parameter of a public method that takes text."""
    found = []
    for name in dir(Cairn):
        member = inspect.getattr_static(Cairn, name)
        func = member.__func__ if isinstance(member, classmethod) else member
        if name.startswith("_") or not inspect.isfunction(func):
            continue
        for param_name, annotation in _annotated_parameters(func):
            if annotation.startswith("IO["):
                continue  # a file to write to, not text
            if "str" in annotation or "Mapping" in annotation:
                found.append((name, param_name, annotation))
    return found


def _annotated_parameters(func: Any) -> Iterator[tuple[str, str]]:
    """(name, annotation) of each parameter after self; `**options: Unpack[SomeOptions]` is
    spread into the keywords it stands for (`Cairn.open` passes `Cairn`'s on that way)."""
    for param in list(inspect.signature(func).parameters.values())[1:]:
        annotation = str(param.annotation)
        if param.kind is param.VAR_KEYWORD and annotation.startswith("Unpack["):
            typed = annotation.removeprefix("Unpack[").removesuffix("]")
            options = inspect.unwrap(func).__globals__[typed]
            for key, hint in options.__annotations__.items():  # ForwardRefs: the source text
                yield key, str(getattr(hint, "__forward_arg__", hint))
        else:
            yield param.name, annotation


# remember_many checks its items one by one: see test_batch_refuses_only_the_bad_item.
TEXT_PARAMETERS = [t for t in _text_parameters() if t[:2] != ("remember_many", "items")]


@pytest.fixture
def sqlite_mem(
    tmp_path: Path, settings: Settings, embedder: HashingEmbedder, clock: FakeClock
) -> Iterator[Cairn]:
    """The check runs before any backend call, so one backend covers it (both are covered by
    the tests below that use `mem`)."""
    with Cairn.open(
        str(tmp_path / "m.db"), settings=settings, embedder=embedder, clock=clock, cwd=tmp_path
    ) as opened:
        yield opened


def _hostile(annotation: str, text: str) -> Any:
    if annotation.startswith(("Sequence", "Iterable")):
        return [text]
    if annotation.startswith("Mapping") or annotation.startswith("dict"):
        return {"key": text}
    return text


def _call(mem: Cairn, method: str, target: str, value: Any) -> Any:
    member = inspect.getattr_static(Cairn, method)
    func = member.__func__ if isinstance(member, classmethod) else member
    kwargs: dict[str, Any] = {target: value}  # by name, also when `**options` takes it
    for param in list(inspect.signature(func).parameters.values())[1:]:
        if param.name == target:
            continue
        if param.default is inspect.Parameter.empty and param.kind is not param.VAR_KEYWORD:
            kwargs[param.name] = "x"
    return getattr(mem, method)(**kwargs)


def test_the_public_api_has_text_parameters_to_check() -> None:
    names = {(method, param) for method, param, _ in TEXT_PARAMETERS}
    assert {("remember", "content"), ("recall", "query"), ("open", "path_or_url")} <= names
    assert len(TEXT_PARAMETERS) > 60


@pytest.mark.parametrize(("method", "param", "annotation"), TEXT_PARAMETERS)
def test_lone_surrogate_is_invalid_input(
    sqlite_mem: Cairn, method: str, param: str, annotation: str
) -> None:
    mem = sqlite_mem
    before = mem.stats(all_scopes=True)["memories"]
    with pytest.raises(InvalidInput) as caught:
        _call(mem, method, param, _hostile(annotation, BAD))
    assert "lone surrogate" in caught.value.message and param in caught.value.message
    assert mem.stats(all_scopes=True)["memories"] == before


def test_batch_refuses_only_the_bad_item(mem: Cairn) -> None:
    items = [
        {"content": "The build uses Bazel.", "type": "fact", "scope": "global"},
        {"content": "ok", "type": "fact", "scope": "global", "tags": [BAD]},
    ]
    done = mem.remember_many(items)
    assert [item.ok for item in done] == [True, False]
    assert done[1].error is not None and "lone surrogate" in done[1].error.message


@hypothesis_settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    prefix=st.text(max_size=20),
    surrogate=st.integers(min_value=0xD800, max_value=0xDFFF).map(chr),
)
def test_surrogates_anywhere_in_recall_and_remember(
    mem: Cairn, prefix: str, surrogate: str
) -> None:
    text = prefix + surrogate
    with pytest.raises(InvalidInput):
        mem.recall(text, scope="global")
    with pytest.raises(InvalidInput):
        mem.remember("A claim", type="fact", scope="global", tags=["ok", text])


PATH_PARAMETERS = [(m, p) for m, p, _ in TEXT_PARAMETERS if p in {"cwd", "path_or_url"}]


@pytest.mark.parametrize(("method", "param"), PATH_PARAMETERS)
def test_nul_in_a_path_is_invalid_input(sqlite_mem: Cairn, method: str, param: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        _call(sqlite_mem, method, param, "src\x00/app")
    assert "NUL" in caught.value.message and param in caught.value.message


hostile_text = st.one_of(
    st.text(st.characters(exclude_categories=["Cs"]), max_size=30),
    st.sampled_from(["", " ", "\x00", "a\x00b", "x" * 70_000, "mem_99999999999999999999", "🜁" * 9]),
)


@pytest.mark.parametrize(("method", "param", "annotation"), TEXT_PARAMETERS)
def test_hostile_text_raises_only_cairn_errors(
    sqlite_mem: Cairn, method: str, param: str, annotation: str
) -> None:
    """Whatever the text, a call answers or raises a CairnError: never a bare Python error."""
    if method in {"open", "close", "install_hooks", "run_hook", "export_agent_file"}:
        # opening other stores, closing this one, writing git hooks or an agent file (a text
        # such as "." names the directory the suite runs in): not this test
        return

    @hypothesis_settings(max_examples=5, deadline=None, database=None)
    @given(value=hostile_text)
    def run(value: str) -> None:
        with contextlib.suppress(CairnError):
            _call(sqlite_mem, method, param, _hostile(annotation, value))

    run()
