"""`mcp_toolkit`: a tool declared as a plain function becomes the SDK tool the server serves,
with the function's name, docstring and parameters (after `mem` and `resolved`) as its own."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import Field

from cairn.adapters.mcp_binding import Binding, Where
from cairn.adapters.mcp_fields import Cwd, Scope, SessionId
from cairn.adapters.mcp_toolkit import Toolset, located, nowhere
from cairn.config import Settings
from cairn.core import Cairn
from cairn.errors import StoreError
from cairn.store import Store


def _no_store() -> Store:
    raise StoreError("these tests open no store")


def _toolset() -> Toolset:
    tools = Toolset()

    @tools.tool(lambda result: f"echo {result}")
    def echo(
        mem: Cairn,
        resolved: str | None,
        words: Annotated[str, Field(description="What to say back.")],
        scope: Scope = None,
        cwd: Cwd = None,
        session_id: SessionId = None,
    ) -> str:
        """Say it back.

        Second paragraph."""
        return words

    @tools.tool(text=lambda result, args: f"{args['session_id']}: {result}")
    def close(mem: Cairn, resolved: str | None, session_id: str) -> str:
        """Close it."""
        return "closed"

    return tools


def test_a_declared_function_is_served_under_its_own_name_doc_and_parameters() -> None:
    echo, close = _toolset().bind(Binding(_no_store, Settings.from_env({})))
    assert (echo.name, close.name) == ("echo", "close")
    assert echo.description == "Say it back.\n\nSecond paragraph."
    assert echo.context_kwarg == "ctx"
    assert list(echo.parameters["properties"]) == ["words", "scope", "cwd", "session_id"]
    assert echo.parameters["required"] == ["words"]
    assert echo.parameters["title"] == "echoArguments"
    assert list(close.parameters["properties"]) == ["session_id"]


def test_the_location_comes_from_scope_and_cwd_only_when_the_tool_has_them() -> None:
    tools = _toolset()
    echo, close = tools.specs
    arguments: dict[str, Any] = {"scope": "global", "cwd": None, "session_id": "ses_1"}
    assert echo.locate is located and close.locate is nowhere
    assert echo.locate(arguments) == Where("global", None, "ses_1")
    assert echo.render("hi", arguments) == "echo hi"
    assert close.render("closed", arguments) == "ses_1: closed"


def test_a_tool_takes_exactly_one_way_to_say_its_result() -> None:
    tools = Toolset()
    with pytest.raises(TypeError, match="exactly one"):
        tools.tool()
    with pytest.raises(TypeError, match="exactly one"):
        tools.tool(str, text=lambda result, args: str(result))
