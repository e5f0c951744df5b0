"""Pages: the repository's documentation, chunked at headings, refreshed, mixed into recall."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cairn import Cairn, InvalidInput, page_source, pages


def page_hits(mem: Cairn, query: str, **kw: object) -> list:  # type: ignore[type-arg]
    return [h for h in mem.recall(query, **kw).hits if h.kind == "page"]  # type: ignore[arg-type]


def test_pages_returns_matching_sections_with_refs_and_lines(mem_repo: Cairn, repo: Path) -> None:
    hits = mem_repo.recall("install pipx", kind="pages").hits
    assert [h.kind for h in hits] == ["page"]
    hit = hits[0]
    assert hit.ref.startswith("doc_")
    assert hit.source_ref == "README.md:7-7"
    assert hit.summary.startswith("README.md › Slate › Install: Install with pipx")
    assert "slate init" in (hit.content or "")
    assert hit.citation == "same" and not hit.weak


def test_a_page_must_hold_every_word_of_the_query(mem_repo: Cairn) -> None:
    assert page_hits(mem_repo, "rollback canary", kind="pages")
    assert page_hits(mem_repo, "rollback kubernetes", kind="pages") == []


def test_a_page_found_by_its_title_alone_is_not_returned(mem_repo: Cairn) -> None:
    # "Configuration" is only a heading; "Deploying" is a heading whose body says "Deploys".
    assert page_hits(mem_repo, "configuration", kind="pages") == []
    assert page_hits(mem_repo, "configuration store", kind="pages")


def test_vendored_hidden_and_non_doc_files_are_not_indexed(mem_repo: Cairn) -> None:
    paths = {h.source_ref.split(":")[0] for h in page_hits(mem_repo, "pipx", kind="pages")}
    assert paths == {"README.md"}
    assert page_hits(mem_repo, "claim type scope", kind="pages")[0].source_ref.startswith(
        "notes/design.md"
    )


def test_rst_docs_are_chunked_at_underlined_titles(mem_repo: Cairn) -> None:
    hit = page_hits(mem_repo, "roll back previous tag", kind="pages")[0]
    assert hit.summary.startswith("docs/guide.rst › Deploying › Rollback:")


def test_edits_are_seen_at_the_next_recall_and_unchanged_sections_keep_their_ref(
    mem_repo: Cairn, repo: Path
) -> None:
    install = page_hits(mem_repo, "pipx", kind="pages")[0].ref
    config = page_hits(mem_repo, "store embedder", kind="pages")[0].ref
    readme = repo / "README.md"
    text = readme.read_text().replace("SLATE_HOME", "SLATE_DIR")
    readme.write_text(text)
    os.utime(readme, ns=(1, 1))  # a different mtime whatever the clock's resolution
    assert page_hits(mem_repo, "pipx", kind="pages")[0].ref == install
    changed = page_hits(mem_repo, "store embedder", kind="pages")[0]
    assert changed.ref != config and "SLATE_DIR" in (changed.content or "")
    assert page_hits(mem_repo, "slate_home", kind="pages") == []


def test_new_and_deleted_files_are_picked_up(mem_repo: Cairn, repo: Path) -> None:
    assert page_hits(mem_repo, "changelog release", kind="pages") == []
    (repo / "CHANGELOG.md").write_text("# Changelog\n\n## 1.0\n\nFirst release with recall.\n")
    assert page_hits(mem_repo, "first release recall", kind="pages")
    (repo / "CHANGELOG.md").unlink()
    assert page_hits(mem_repo, "first release recall", kind="pages") == []


def test_all_gives_memories_at_most_half_when_pages_match(mem_repo: Cairn) -> None:
    for i in range(6):
        mem_repo.remember(
            f"Install step {i}: pipx install slate-memory on CI runner {i}.", type="fact"
        )
    answer = mem_repo.recall("install pipx", limit=4, cut=False)
    kinds = [h.kind for h in answer.hits if h.pathway == "direct"]
    assert kinds.count("memory") == 2 and kinds.count("page") == 1
    assert kinds == ["memory", "memory", "page"]
    no_page = mem_repo.recall("CI runner", limit=4, cut=False)
    assert [h.kind for h in no_page.hits] == ["memory"] * 4


def test_memories_kind_and_as_of_never_read_docs(mem_repo: Cairn) -> None:
    mem_repo.remember("We install with pipx on laptops.", type="fact")
    assert all(h.kind == "memory" for h in mem_repo.recall("install pipx", kind="memories").hits)
    past = mem_repo.recall("install pipx", as_of="2099-01-01")
    assert past.hits and all(h.kind == "memory" for h in past.hits)


def test_pages_alone_return_up_to_twenty(mem_repo: Cairn, repo: Path) -> None:
    body = "\n\n".join(f"## Part {i}\n\nThe widget manual part {i}." for i in range(30))
    (repo / "docs" / "manual.md").write_text(f"# Manual\n\n{body}\n")
    assert len(mem_repo.recall("widget manual", kind="pages", limit=25).hits) == 20
    assert len(mem_repo.recall("widget manual", kind="pages", limit=3).hits) == 3


def test_an_unknown_kind_is_refused(mem_repo: Cairn) -> None:
    with pytest.raises(InvalidInput, match="kind 'docs' is not one of all, memories, pages"):
        mem_repo.recall("install", kind="docs")


def test_a_folder_that_is_not_a_repository_has_no_pages(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "README.md").write_text("# Plain\n\nInstall with pipx.\n")
    assert page_source.list_docs(plain).files == ()


def test_chunking_markdown_respects_code_fences_and_setext_headings() -> None:
    text = "# A\n\nintro\n\n```\n# not a heading\n```\n\nB title\n-------\n\nbody b\n"
    chunks = pages.chunk_file("x.md", text)
    assert [c.heading for c in chunks] == ["A", "A › B title"]
    assert "# not a heading" in chunks[0].text
    assert (chunks[1].line_start, chunks[1].line_end, chunks[1].text) == (12, 12, "body b")


def test_long_sections_are_split_at_blank_lines() -> None:
    para = "word " * 150
    text = "# Long\n\n" + "\n\n".join(para for _ in range(6))
    chunks = pages.chunk_file("long.md", text)
    assert len(chunks) >= 3
    assert all(len(c.text) <= pages.CHUNK_CHARS + len(para) for c in chunks)
    assert all(c.heading == "Long" for c in chunks)
    assert chunks[0].line_end < chunks[1].line_start
