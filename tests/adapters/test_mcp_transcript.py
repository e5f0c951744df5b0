"""The session transcript of docs/agents.md: a whole session, and costs that add up."""

from __future__ import annotations

import re
from pathlib import Path

from cairn.adapters.mcp_readme import list_size, listed_tools
from cairn.adapters.mcp_transcript import markdown, run_session

AGENTS = Path(__file__).resolve().parents[2] / "docs" / "agents.md"


def test_a_whole_session_runs_and_its_costs_add_up() -> None:
    out = run_session()
    tools = [line.split()[1] for line in out.lines if line.startswith("→ ")]
    assert tools[:2] == ["activate", "recall"] and tools[-2:] == ["remember", "commit"]
    assert "feedback" in tools and out.calls == len(tools)
    assert "committed" in out.lines[-1]
    assert out.tool_list_chars == list_size(listed_tools("core"))
    assert out.total_chars == out.tool_list_chars + out.call_chars
    assert f"| the whole session | {out.total_chars:,} |" in markdown(out)


def test_docs_agents_shows_the_current_tool_list_cost() -> None:
    text = AGENTS.read_text(encoding="utf-8")
    shown = re.search(r"\| the tool list \(once per session\) \| ([\d,]+) \|", text)
    assert shown, "run: python -m cairn.adapters.mcp_transcript > docs/agents.md"
    assert int(shown.group(1).replace(",", "")) == list_size(listed_tools("core"))
