"""Importing the agents' own memory files into a live store, and re-importing them without echo:
an unchanged item is recognised (no new evidence, nothing counted), an edited one corrected with
history, a removed one retired with the file named. Both backends."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cairn import Cairn
from cairn.importers.markdown import MARK_BEGIN, MARK_END
from cairn.models import Memory
from clocks import FakeClock

CLAUDE = """# Project rules

- Use uv for dependencies.
- Never commit to main directly.
- Prefer small functions over classes.

## Testing

Run the tests with pytest -q before every commit.
"""
MDC = "---\ndescription: style\nglobs: '*.py'\nalwaysApply: true\n---\n- Do not use print.\n"
GITHUB_TOKEN = "ghp_R8aK2mX9vQ4tL7wN3pZ6yB1cE5hJ0sD8fG2k"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".cursor" / "rules").mkdir(parents=True)
    (root / "CLAUDE.md").write_text(CLAUDE, encoding="utf-8")
    (root / ".cursor" / "rules" / "style.mdc").write_text(MDC, encoding="utf-8")
    return root


def current(mem: Cairn, scope: str) -> dict[str, Memory]:
    memories = [m for m in mem.store.iter_memories() if m.scope == scope]
    return {m.content: m for m in memories if m.status == "active"}


def counts(mem: Cairn, repo: Path, **kw: object) -> dict[str, int]:
    [report] = mem.import_memory("agent-files", repo, **kw)  # type: ignore[arg-type]
    return {k: v for k, v in report.counts.items() if v}


def test_each_bullet_and_paragraph_is_a_typed_memory_citing_its_lines(
    mem: Cairn, repo: Path
) -> None:
    assert counts(mem, repo) == {"create": 5}
    held = current(mem, mem.scope_for(cwd=repo))
    never = held["Never commit to main directly."]
    assert never.type == "constraint"
    assert never.source_ref == "CLAUDE.md:4-4"
    assert never.integration == "agent-files"
    assert set(never.tags) >= {"claude", "project rules"}
    assert held["Prefer small functions over classes."].type == "preference"
    assert held["Use uv for dependencies."].type == "instruction"
    testing = held["Run the tests with pytest -q before every commit."]
    assert "testing" in testing.tags and testing.source_ref == "CLAUDE.md:9-9"
    rule = held["Do not use print."]
    assert rule.source_ref == ".cursor/rules/style.mdc:6-6" and "cursor" in rule.tags


def test_reimport_is_idempotent_and_counts_nothing(mem: Cairn, repo: Path) -> None:
    counts(mem, repo)
    scope = mem.scope_for(cwd=repo)
    before = {m.id: m for m in mem.store.iter_memories()}
    events = len(list(mem.store.iter_events()))
    assert counts(mem, repo) == {"unchanged": 5}
    after = {m.id: m for m in mem.store.iter_memories()}
    assert after == before  # no boost, no access, no confirmation
    assert len(list(mem.store.iter_events())) == events
    assert all(m.confirmed == 0 and m.access_count == 0 for m in current(mem, scope).values())


def test_edit_corrects_removal_retires_and_citations_see_the_change(
    mem: Cairn, repo: Path, clock: FakeClock
) -> None:
    counts(mem, repo)
    scope = mem.scope_for(cwd=repo)
    old = current(mem, scope)["Use uv for dependencies."]
    clock.advance(minutes=5)
    text = CLAUDE.replace("- Use uv for dependencies.", "- Use uv for all dependencies.")
    (repo / "CLAUDE.md").write_text(text.replace("- Prefer small functions over classes.\n", ""))
    assert mem.get_memory(old.ref, cwd=repo).records[0].citation == "changed"
    assert counts(mem, repo, dry_run=True) == {"unchanged": 3, "correct": 1, "retire": 1}
    assert current(mem, scope)["Use uv for dependencies."].id == old.id  # dry: nothing written
    assert counts(mem, repo) == {"unchanged": 3, "correct": 1, "retire": 1}
    held = current(mem, scope)
    new = held["Use uv for all dependencies."]
    assert new.replaces == old.id and new.reason == "edited in CLAUDE.md"
    [record] = mem.get_memory(new.ref, cwd=repo).records
    assert [h.ref for h in record.replaced] == [old.ref]
    assert record.citation == "same"
    gone = [m for m in mem.store.iter_memories() if m.content.startswith("Prefer small")]
    [retired] = mem.get_memory(gone[0].ref, cwd=repo).records
    assert retired.memory.status == "retired"
    assert retired.retire_reason == "removed from CLAUDE.md"
    assert counts(mem, repo) == {"unchanged": 4}
    (repo / "CLAUDE.md").write_text(text.replace("- Use uv for all", "- Never use pip for any"))
    assert counts(mem, repo)["correct"] == 1
    assert current(mem, scope)["Never use pip for any dependencies."].type == "constraint"


def test_deleting_a_file_retires_its_items(mem: Cairn, repo: Path) -> None:
    counts(mem, repo)
    (repo / ".cursor" / "rules" / "style.mdc").unlink()
    assert counts(mem, repo) == {"unchanged": 4, "retire": 1}


def test_merges_into_a_live_store_without_losing_or_taking_over(mem: Cairn, repo: Path) -> None:
    scope = mem.scope_for(cwd=repo)
    mine = mem.remember("Never commit to main directly.", type="constraint", scope=scope)
    other = mem.remember("The API listens on port 8080.", type="fact", scope=scope)
    assert counts(mem, repo) == {"create": 4, "matched": 1}
    held = current(mem, scope)
    assert held["Never commit to main directly."].ref == mine.memory_id
    assert other.memory_id in {m.ref for m in held.values()}
    # Removed from the file, the memory the user had before stays: only the mapping goes.
    (repo / "CLAUDE.md").write_text(CLAUDE.replace("- Never commit to main directly.\n", ""))
    assert counts(mem, repo) == {"unchanged": 4, "release": 1}
    assert "Never commit to main directly." in current(mem, scope)


def test_secrets_are_refused_per_item_and_the_rest_imported(mem: Cairn, repo: Path) -> None:
    (repo / "AGENTS.md").write_text(f"- Deploy with token {GITHUB_TOKEN}\n- Keep PRs small.\n")
    [report] = mem.import_memory("agent-files", repo)
    assert report.counts["refused"] == 1 and report.counts["create"] == 6
    assert not any(GITHUB_TOKEN in m.content for m in mem.store.iter_memories())
    assert any("AGENTS.md:1-1" in line and "refused" in line for line in report.lines)


def test_cairns_own_section_is_not_imported_back(mem: Cairn, repo: Path) -> None:
    own = f"- Keep PRs small.\n{MARK_BEGIN}\n- Exported by cairn.\n{MARK_END}\n"
    (repo / "AGENTS.md").write_text(own)
    counts(mem, repo)
    assert "Exported by cairn." not in current(mem, mem.scope_for(cwd=repo))


def test_hostile_files_are_skipped_and_reported(mem: Cairn, repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("- from outside the checkout\n")
    os.symlink(outside, repo / "AGENTS.md")
    (repo / "GEMINI.md").write_bytes(b"- \xff\xfe not text\n")
    (repo / ".github").mkdir()
    (repo / ".github" / "copilot-instructions.md").write_text("x" * (1 << 20) + "y")
    [report] = mem.import_memory("agent-files", repo)
    problems = " ".join(report.problems)
    assert "AGENTS.md: leads outside" in problems
    assert "GEMINI.md: not UTF-8" in problems
    assert "over the 1 MiB limit" in problems
    assert report.counts["create"] == 5


def test_user_level_files_only_with_user(
    mem: Cairn, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home-dir"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "CLAUDE.md").write_text("- Answer in British English.\n")
    monkeypatch.setenv("HOME", str(home))
    assert len(mem.import_memory("agent-files", repo)) == 1
    checkout, user = mem.import_memory("agent-files", repo, user=True)
    assert checkout.counts["unchanged"] == 5
    assert user.scope == "global" and user.counts["create"] == 1
    [memory] = current(mem, "global").values()
    assert memory.source_ref is None and memory.reason == "from ~/.claude/CLAUDE.md:1-1"


def test_a_rule_in_two_files_is_one_memory_until_both_drop_it(mem: Cairn, tmp_path: Path) -> None:
    root = tmp_path / "two"
    root.mkdir()
    rule = "- Never push on Fridays.\n"
    (root / "CLAUDE.md").write_text(rule + rule)  # repeated in one file: one item
    (root / "AGENTS.md").write_text(rule + "- Keep PRs small.\n")
    assert counts(mem, root) == {"create": 2, "matched": 1}
    events = len(list(mem.store.iter_events()))
    assert counts(mem, root) == {"unchanged": 3}
    assert len(list(mem.store.iter_events())) == events
    (root / "CLAUDE.md").write_text("")
    assert counts(mem, root) == {"unchanged": 2, "release": 1}
    assert "Never push on Fridays." in current(mem, mem.scope_for(cwd=root))
    (root / "AGENTS.md").write_text("- Keep PRs small.\n")
    assert counts(mem, root) == {"unchanged": 1, "retire": 1}
    assert "Never push on Fridays." not in current(mem, mem.scope_for(cwd=root))


def test_an_edit_of_a_shared_rule_is_stored_beside_it(mem: Cairn, tmp_path: Path) -> None:
    root = tmp_path / "shared"
    root.mkdir()
    (root / "CLAUDE.md").write_text("- Use black for formatting code.\n")
    (root / "AGENTS.md").write_text("- Use black for formatting code.\n")
    counts(mem, root)
    (root / "CLAUDE.md").write_text("- Use ruff format for formatting code.\n")
    assert counts(mem, root) == {"unchanged": 1, "create": 1}
    held = current(mem, mem.scope_for(cwd=root))
    assert {"Use black for formatting code.", "Use ruff format for formatting code."} <= set(held)
    assert counts(mem, root) == {"unchanged": 2}


def test_the_dry_run_predicts_what_the_run_does(mem: Cairn, repo: Path) -> None:
    scope = mem.scope_for(cwd=repo)
    mem.remember("Never commit to main directly.", type="constraint", scope=scope)
    mem.remember("Use uv for dependencies!", type="instruction", scope=scope)
    mem.remember("Prefer small functions over classes in v2.", type="fact", scope=scope)
    before = {m.id: (m.weight, m.access_count) for m in mem.store.iter_memories()}
    [report] = mem.import_memory("agent-files", repo, dry_run=True)
    dry = {k: v for k, v in report.counts.items() if v}
    assert dry["matched"] == 1 and dry["boosted"] == 1
    assert any("may update" in line for line in report.lines), report.lines
    assert {m.id: (m.weight, m.access_count) for m in mem.store.iter_memories()} == before
    assert counts(mem, repo) == dry
