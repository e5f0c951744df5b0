"""tidy: merge near-duplicates, retire gone citations, resolve contradictions, lessons to a
skill file; accept or decline each, and a declined proposal is never made again."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn import Cairn, Conflict, InvalidInput, InvalidRef, NotFound
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.tidy import merged_text, opposed

SCOPE = "project:example/tidy"


def by_kind(proposals: list, kind: str) -> list:  # type: ignore[type-arg]
    return [p for p in proposals if p.kind == kind]


def test_near_duplicates_are_merged_with_the_merged_text(mem: Cairn) -> None:
    short = mem.remember("Run database migrations with the --lock flag.", type="instruction",
                         scope=SCOPE).memory_id  # fmt: skip
    rich = mem.remember(
        "Run database migrations with the --lock flag. Without it two deploys can race.",
        type="instruction", scope=SCOPE, dedup=False,
    ).memory_id  # fmt: skip
    proposals = by_kind(mem.tidy(scope=SCOPE), "merge")
    assert len(proposals) == 1
    proposal = proposals[0]
    assert set(proposal.refs) == {short, rich}
    assert proposal.detail["keep"] == rich and proposal.detail["retire"] == short
    decision = mem.tidy_accept(proposal.id, scope=SCOPE)
    assert decision.status == "accepted"
    new_ref, retired = decision.changed
    assert retired == short
    records = {r.ref: r.memory for r in mem.get_memory([new_ref, short, rich], scope=SCOPE).records}
    assert "two deploys can race" in records[new_ref].content
    assert records[short].status == "retired" and records[rich].replaced_by == int(new_ref[4:])
    assert mem.tidy(scope=SCOPE) == []


def test_a_declined_proposal_is_never_made_again(mem: Cairn) -> None:
    for _ in range(2):
        mem.remember("Use UTC in every log line.", type="constraint", scope=SCOPE, dedup=False)
    proposal = mem.tidy(scope=SCOPE)[0]
    assert mem.tidy_decline(proposal.id, scope=SCOPE).status == "declined"
    assert mem.tidy(scope=SCOPE) == []
    with pytest.raises(Conflict, match="declined"):
        mem.tidy_accept(proposal.id, scope=SCOPE)


def test_contradicting_pairs_keep_the_newer_claim(mem: Cairn) -> None:
    older = mem.remember("Always squash commits when merging feature branches.",
                         type="instruction", scope=SCOPE).memory_id  # fmt: skip
    newer = mem.remember("Never squash commits when merging feature branches.",
                         type="instruction", scope=SCOPE, dedup=False).memory_id  # fmt: skip
    unrelated = mem.remember("Never deploy on Fridays.", type="constraint", scope=SCOPE)
    proposals = mem.tidy(scope=SCOPE)
    found = by_kind(proposals, "contradiction")
    assert len(found) == 1 and by_kind(proposals, "merge") == []
    assert found[0].detail["keep"] == newer and found[0].detail["retire"] == older
    assert unrelated.memory_id not in found[0].refs
    mem.tidy_accept(found[0].id, scope=SCOPE)
    statuses = {r.ref: r.memory.status for r in mem.get_memory([older, newer], scope=SCOPE).records}
    assert statuses == {older: "retired", newer: "active"}


def test_memories_whose_citation_is_gone_are_proposed_for_retirement(
    mem: Cairn, checkout: Path
) -> None:
    gone = mem.remember("stop() is a no-op", type="fact", cwd=checkout,
                        source_ref="src/jobs.py::stop").memory_id  # fmt: skip
    kept = mem.remember("run() returns one", type="fact", cwd=checkout,
                        source_ref="src/jobs.py::run").memory_id  # fmt: skip
    assert mem.tidy(cwd=checkout) == []
    (checkout / "src" / "jobs.py").write_text("def run():\n    return 1\n")
    proposals = mem.tidy(cwd=checkout)
    assert [(p.kind, p.refs) for p in proposals] == [("retire", (gone,))]
    mem.tidy_accept(proposals[0].id, cwd=checkout)
    records = {r.ref: r.memory for r in mem.get_memory([gone, kept], cwd=checkout).records}
    assert records[gone].status == "retired" and records[kept].status == "active"


LESSONS = (
    "Billing tests must freeze the clock or invoices drift across midnight.",
    "Freeze the clock in billing tests; invoices drift across midnight otherwise.",
    "In billing tests the clock has to be frozen, else invoices drift at midnight.",
)


def test_recurring_lessons_become_a_skill_file(mem: Cairn, checkout: Path) -> None:
    refs = [mem.remember(text, type="lesson", cwd=checkout, dedup=False).memory_id
            for text in LESSONS]  # fmt: skip
    skills = by_kind(mem.tidy(cwd=checkout), "skill")
    assert len(skills) == 1 and set(skills[0].refs) == set(refs)
    path = skills[0].detail["path"]
    assert path.startswith(".claude/skills/") and path.endswith("/SKILL.md")
    decision = mem.tidy_accept(skills[0].id, cwd=checkout)
    written = Path(decision.path or "")
    assert written == checkout / path
    text = written.read_text()
    assert text.startswith("---\nname: ") and all(ref in text for ref in refs)
    assert "invoices drift" in text


def test_one_lesson_restated_again_and_again_recurs_too(mem: Cairn, checkout: Path) -> None:
    ref = mem.remember(LESSONS[0], type="lesson", cwd=checkout).memory_id
    for _ in range(2):
        assert mem.remember(LESSONS[0], type="lesson", cwd=checkout).memory_id == ref
    skills = by_kind(mem.tidy(cwd=checkout, skills_dir="docs/skills"), "skill")
    assert [s.refs for s in skills] == [(ref,)]
    assert skills[0].detail["path"].startswith("docs/skills/")


def test_a_skill_file_someone_else_wrote_is_not_overwritten(mem: Cairn, checkout: Path) -> None:
    for text in LESSONS:
        mem.remember(text, type="lesson", cwd=checkout, dedup=False)
    skill = by_kind(mem.tidy(cwd=checkout), "skill")[0]
    target = checkout / skill.detail["path"]
    target.parent.mkdir(parents=True)
    target.write_text("# my own notes\n")
    with pytest.raises(Conflict, match="not written by cairn"):
        mem.tidy_accept(skill.id, cwd=checkout)
    assert target.read_text() == "# my own notes\n"


def test_a_skill_is_never_written_through_a_link_out_of_the_checkout(
    mem: Cairn, checkout: Path, tmp_path: Path
) -> None:
    """A hostile repository's `.claude` may be a link to anywhere (here: a folder outside)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (checkout / ".claude").symlink_to(outside, target_is_directory=True)
    for text in LESSONS:
        mem.remember(text, type="lesson", cwd=checkout, dedup=False)
    skill = by_kind(mem.tidy(cwd=checkout), "skill")[0]
    with pytest.raises(InvalidInput, match="out of the repository"):
        mem.tidy_accept(skill.id, cwd=checkout)
    assert list(outside.iterdir()) == []


def test_a_proposal_overtaken_by_events_is_stale(mem: Cairn) -> None:
    first = mem.remember("Pin the node version in CI.", type="instruction", scope=SCOPE)
    mem.remember("Pin the node version in CI.", type="instruction", scope=SCOPE, dedup=False)
    proposal = mem.tidy(scope=SCOPE)[0]
    mem.forget(first.memory_id, reason="no longer true", scope=SCOPE)
    with pytest.raises(Conflict, match="stale"):
        mem.tidy_accept(proposal.id, scope=SCOPE)
    assert mem.tidy(scope=SCOPE) == []


def test_bad_proposal_refs_and_paths(mem: Cairn) -> None:
    with pytest.raises(NotFound):
        mem.tidy_accept("tidy_42", scope=SCOPE)
    with pytest.raises(InvalidRef):
        mem.tidy_decline("mem_1", scope=SCOPE)
    with pytest.raises(InvalidInput, match="absolute"):
        mem.tidy(scope=SCOPE, skills_dir="/etc/skills")
    for _ in range(2):
        mem.remember("Keep functions short.", type="instruction", scope=SCOPE, dedup=False)
    proposal = mem.tidy(scope=SCOPE)[0]
    with pytest.raises(NotFound):
        mem.tidy_accept(proposal.id, scope="project:someone/else")


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("Always use the cache", "Never use the cache", True),
        ("The cache is enabled", "The cache is not enabled", True),
        ("Enable the cache in prod", "Disable the cache in prod", True),
        ("Use the cache", "Use the cache in prod", False),
        ("Do not use the cache", "Never use the cache", False),
    ],
)
def test_opposed(a: str, b: str, expected: bool) -> None:
    assert opposed(a, b) is expected


def test_merged_text_adds_only_what_is_new() -> None:
    keep = "Deploy with make release. Then push the image."
    assert merged_text(keep, "Deploy with make release.") == keep
    merged = merged_text(keep, "Deploy with make release. Tag the commit first.")
    assert merged == keep + "\n\nTag the commit first."


def test_the_skills_folder_comes_from_settings_too(
    store_location: str, settings: Settings, embedder: HashingEmbedder, checkout: Path
) -> None:
    configured = settings.with_overrides(skills_dir="notes/skills")
    with Cairn.open(store_location, settings=configured, embedder=embedder) as mem:
        for text in LESSONS:
            mem.remember(text, type="lesson", cwd=checkout, dedup=False)
        skill = by_kind(mem.tidy(cwd=checkout), "skill")[0]
    assert skill.detail["path"].startswith("notes/skills/")


def test_a_store_of_near_identical_memories_gets_a_bounded_set_of_proposals(mem: Cairn) -> None:
    # Every pair of these is alike; unbounded, 60 memories would make 1,770 pair proposals.
    for i in range(60):
        mem.remember(
            f"The nightly export job for region {i} writes its report to the shared reports "
            "bucket and mails the on-call engineer.",
            type="fact", scope=SCOPE, dedup=False,
        )  # fmt: skip
    proposals = [p for p in mem.tidy(scope=SCOPE) if p.kind in {"merge", "update", "contradiction"}]
    assert proposals, "near-identical memories are still proposed"
    per_memory: dict[str, int] = {}
    for proposal in proposals:
        for ref in proposal.refs:
            per_memory[ref] = per_memory.get(ref, 0) + 1
    assert max(per_memory.values()) <= 3  # MAX_PAIRS_PER_MEMORY
    assert len(proposals) <= 90
