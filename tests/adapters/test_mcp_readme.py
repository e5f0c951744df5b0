"""The README's tool table and sizes are the server's own: regenerate, or this fails."""

from __future__ import annotations

from pathlib import Path

from cairn.adapters.mcp_readme import END, START, list_size, listed_tools, rewrite, table
from cairn.adapters.mcp_surface import BUDGETS, TOOL_SETS

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_tool_table_is_generated_from_the_code() -> None:
    text = README.read_text(encoding="utf-8")
    assert rewrite(text) == text, "run: python -m cairn.adapters.mcp_readme README.md"


def test_the_table_names_every_tool_and_each_set_size() -> None:
    block = table()
    assert block.startswith(START) and block.endswith(END)
    for tool in listed_tools("all"):
        assert f"| `{tool.name}` |" in block
    for name in TOOL_SETS:
        size = list_size(listed_tools(name))
        assert size <= BUDGETS[name]
        assert f"`{name}` {size:,}" in block
