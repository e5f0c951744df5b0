"""How a tool is declared: one plain function of `(mem, resolved, arguments...)` that makes
one `Cairn` call (`resolved` is the call's working directory once the client's roots filled it
in), registered with how its answer reads as text:

    @tools.tool(render.records)
    def get_memory(mem: Cairn, resolved: str | None, refs: Refs, scope: Scope = None,
                   cwd: Cwd = None) -> GetResult:
        return mem.get_memory(refs, scope=scope, cwd=resolved)

The function's name is the tool's name, its docstring the description, its parameters after
the first two (typed in `mcp_fields.py`) the input schema. `Toolset.bind` wraps each function
in the coroutine the SDK serves: `Binding.call` with the client's context, which resolves
`cwd` against the client's roots (a tool with `scope` or `cwd` arguments; see `Where`) and
turns errors into tool errors. Every tool used to repeat that wrapper by hand.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp.server.mcpserver.tools import Tool

from cairn.adapters.mcp_binding import Binding, Ctx, ToolResult, Where
from cairn.adapters.mcp_surface import tool_annotations

F = TypeVar("F", bound=Callable[..., Any])
Arguments = Mapping[str, Any]
Render = Callable[[Any, Arguments], str]
Locate = Callable[[Arguments], Where | None]


def located(arguments: Arguments) -> Where:
    """The call's own location arguments; what it lacks, the client's roots fill in."""
    return Where(arguments.get("scope"), arguments.get("cwd"), arguments.get("session_id"))


def nowhere(arguments: Arguments) -> None:
    """A tool that names its session: the session has the scope, so roots are never asked."""
    return None


@dataclass(frozen=True, slots=True)
class ToolSpec:
    action: Callable[..., Any]
    render: Render
    locate: Locate


class Toolset:
    """The tools of one module, in declaration order (the order clients list them in)."""

    def __init__(self) -> None:
        self.specs: list[ToolSpec] = []

    def tool(
        self,
        render: Callable[[Any], str] | None = None,
        *,
        text: Render | None = None,
        where: Locate | None = None,
    ) -> Callable[[F], F]:
        """Register a tool: `render(result)` or, when the text needs the arguments,
        `text(result, arguments)`; `where` overrides how the location is read."""
        if render is not None and text is None:
            shown = _result_only(render)
        elif text is not None and render is None:
            shown = text
        else:
            raise TypeError("give a tool exactly one of render and text")

        def register(action: F) -> F:
            names = set(inspect.signature(action).parameters)
            locate = where or (located if names & {"scope", "cwd"} else nowhere)
            self.specs.append(ToolSpec(action, shown, locate))
            return action

        return register

    def bind(self, binding: Binding) -> list[Tool]:
        return [make_tool(handler(spec, binding)) for spec in self.specs]


def _result_only(render: Callable[[Any], str]) -> Render:
    return lambda result, _arguments: render(result)


def handler(spec: ToolSpec, binding: Binding) -> Callable[..., Any]:
    """The coroutine the SDK calls: `ctx` first, then the tool's arguments by name."""

    async def call(ctx: Ctx, **arguments: Any) -> ToolResult:
        return await binding.call(
            ctx,
            lambda mem, resolved: spec.action(mem, resolved, **arguments),
            lambda result: spec.render(result, arguments),
            spec.locate(arguments),
        )

    # The SDK builds the input schema from the signature and finds the context parameter by
    # its annotation: both are the action's own, after its first two (mem, resolved cwd).
    own = inspect.signature(spec.action, eval_str=True)
    context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Ctx)
    params = [context, *list(own.parameters.values())[2:]]
    returns = ToolResult
    call.__signature__ = own.replace(parameters=params, return_annotation=returns)  # type: ignore[attr-defined]
    call.__annotations__ = {p.name: p.annotation for p in params} | {"return": returns}
    call.__name__ = call.__qualname__ = spec.action.__name__
    call.__doc__ = spec.action.__doc__
    return call


def unwrap(doc: str) -> str:
    """A docstring as the tool description: paragraphs kept, source line breaks dropped."""
    return "\n\n".join(" ".join(part.split()) for part in inspect.cleandoc(doc).split("\n\n"))


def make_tool(fn: Callable[..., Any]) -> Tool:
    name = fn.__name__
    return Tool.from_function(
        fn,
        name=name,
        description=unwrap(fn.__doc__ or ""),
        annotations=tool_annotations(name),
    )
