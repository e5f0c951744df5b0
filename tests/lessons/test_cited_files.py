"""Lessons from citations: edits on cited lines ask a question, other calls on cited files get a
note, and calls elsewhere get nothing. A real checkout, real citations, real files."""

from __future__ import annotations

from pathlib import Path

from lessonkit import Repo

from cairn import Cairn

OLD_CHARGE = '    key = customer.id + ":" + str(amount)'


def edit(repo: Repo, old: str, new: str = "changed") -> dict[str, str]:
    return {"file_path": repo.file("src/billing.py"), "old_string": old, "new_string": new}


def test_edit_on_cited_lines_asks_whether_the_memory_still_holds(
    repo: Repo, writer: Cairn, agent: Cairn
) -> None:
    ref = writer.remember(
        "charge() must stay idempotent: the provider retries on timeouts",
        type="warning", source_ref="src/billing.py:8-11", cwd=repo.path,
    ).memory_id  # fmt: skip
    result = agent.lessons("Edit", edit(repo, OLD_CHARGE), cwd=repo.path)
    assert [lesson.ref for lesson in result.lessons] == [ref]
    lesson = result.lessons[0]
    assert lesson.why == "cites src/billing.py:8-11, which this edit changes"
    assert lesson.question is not None
    assert "line 10 of src/billing.py" in lesson.question
    assert f"confirm('{ref}')" in lesson.question and f"correct('{ref}'" in lesson.question
    assert ref in result.text and "Does" in result.text


def test_edit_elsewhere_in_the_file_is_not_about_the_cited_lines(
    repo: Repo, writer: Cairn, agent: Cairn
) -> None:
    writer.remember("charge() must stay idempotent", type="warning",
                    source_ref="src/billing.py:8-11", cwd=repo.path)  # fmt: skip
    result = agent.lessons("Edit", edit(repo, "    return provider.refund(customer, amount)"),
                           cwd=repo.path)  # fmt: skip
    assert result.lessons == ()
    assert result.text == ""


def test_cited_lines_are_found_after_edits_above_them(
    repo: Repo, writer: Cairn, agent: Cairn
) -> None:
    ref = writer.remember("charge() must stay idempotent", type="warning",
                          source_ref="src/billing.py:8-11", cwd=repo.path).memory_id  # fmt: skip
    repo.write("src/billing.py", "# header\n# more header\n\n" + repo.path.joinpath(
        "src/billing.py").read_text(encoding="utf-8"))  # fmt: skip
    result = agent.lessons("Edit", edit(repo, OLD_CHARGE), cwd=repo.path)
    assert [lesson.ref for lesson in result.lessons] == [ref]
    assert result.lessons[0].why == "cites src/billing.py:11-14, which this edit changes"
    assert "line 13 of src/billing.py" in (result.lessons[0].question or "")


def test_symbol_citation_and_multiedit(repo: Repo, writer: Cairn, agent: Cairn) -> None:
    ref = writer.remember(
        "Invoice.total must include tax lines",
        type="constraint",
        source_ref="src/invoice.py::Invoice.total",
        cwd=repo.path,
    ).memory_id
    call = {
        "file_path": repo.file("src/invoice.py"),
        "edits": [{"old_string": "self.lines = lines", "new_string": "self.lines = list(lines)"},
                  {"old_string": "return sum(line.amount for line in self.lines)",
                   "new_string": "return sum(l.amount for l in self.lines)"}],
    }  # fmt: skip
    result = agent.lessons("MultiEdit", call, cwd=repo.path)
    assert result.lessons[0].ref == ref
    assert result.lessons[0].why == "cites src/invoice.py::Invoice.total, which this edit changes"
    assert result.lessons[0].question


def test_write_rewrites_cited_lines_and_read_gets_a_note(
    repo: Repo, writer: Cairn, agent: Cairn
) -> None:
    ref = writer.remember("charge() must stay idempotent", type="warning",
                          source_ref="src/billing.py:8-11", cwd=repo.path).memory_id  # fmt: skip
    rewrite = agent.lessons("Write", {"file_path": repo.file("src/billing.py"), "content": "x"},
                            cwd=repo.path)  # fmt: skip
    assert rewrite.lessons[0].ref == ref and rewrite.lessons[0].question
    assert "rewrites src/billing.py" in rewrite.lessons[0].question
    read = agent.lessons("Read", {"file_path": repo.file("src/billing.py")}, cwd=repo.path)
    assert read.lessons[0].why == "cites src/billing.py:8-11, which this call reads"
    assert read.lessons[0].question is None
    other_lines = agent.lessons(
        "Read", {"file_path": repo.file("src/billing.py"), "offset": 13, "limit": 3}, cwd=repo.path
    )
    assert other_lines.lessons == ()


def test_whole_file_citations_of_any_type_and_relative_paths(
    repo: Repo, writer: Cairn, agent: Cairn
) -> None:
    ref = writer.remember("The billing module belongs to the payments team", type="fact",
                          source_ref="src/billing.py", cwd=repo.path).memory_id  # fmt: skip
    result = agent.lessons("Edit", {"file_path": "billing.py", "old_string": "import decimal",
                                    "new_string": "import decimal as d"},
                           cwd=repo.path / "src")  # fmt: skip
    assert [lesson.ref for lesson in result.lessons] == [ref]
    assert result.lessons[0].why == "cites src/billing.py, which this edit changes"
    assert result.lessons[0].question is None
    assert result.targets == ("src/billing.py",)


def test_commands_touching_cited_files(repo: Repo, writer: Cairn, agent: Cairn) -> None:
    ref = writer.remember("0001_init.sql is applied in production; never change it",
                          type="constraint", source_ref="migrations/0001_init.sql",
                          cwd=repo.path).memory_id  # fmt: skip
    direct = agent.lessons("Bash", {"command": "sed -i s/id/uid/ migrations/0001_init.sql"},
                           cwd=repo.path)  # fmt: skip
    assert [lesson.ref for lesson in direct.lessons] == [ref]
    wiped = agent.lessons("Bash", {"command": "rm -rf migrations/"}, cwd=repo.path)
    assert [lesson.ref for lesson in wiped.lessons] == [ref]
    assert "under migrations" in wiped.lessons[0].why
    searched = agent.lessons("Grep", {"pattern": "CREATE", "path": "migrations"}, cwd=repo.path)
    assert searched.lessons == ()


def test_calls_outside_the_checkout_or_on_other_files_get_nothing(
    repo: Repo, writer: Cairn, agent: Cairn
) -> None:
    writer.remember("charge() must stay idempotent", type="warning",
                    source_ref="src/billing.py:8-11", cwd=repo.path)  # fmt: skip
    assert agent.lessons("Read", {"file_path": "/etc/hostname"}, cwd=repo.path).lessons == ()
    assert agent.lessons("Read", {"file_path": repo.file("src/invoice.py")},
                         cwd=repo.path).lessons == ()  # fmt: skip
    assert agent.lessons("Bash", "git status", cwd=repo.path).lessons == ()


def test_directory_and_glob_source_refs(
    repo: Repo, agent: Cairn, store_location: str, settings: object, embedder: object,
    clock: object, tmp_path: Path,
) -> None:  # fmt: skip
    # Written where no checkout of the project could check them, such citations keep their
    # form: a directory or a glob of the repository.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    scope = agent.scope_for(None, repo.path)
    with Cairn.open(store_location, settings=settings, embedder=embedder, clock=clock,  # type: ignore[arg-type]
                    cwd=elsewhere, integration="planner") as planner:  # fmt: skip
        globbed = planner.remember("Migrations are append-only", type="constraint", scope=scope,
                                   source_ref="migrations/*.sql").memory_id  # fmt: skip
        folder = planner.remember(
            "The billing package is frozen until the audit ends",
            type="decision",
            scope=scope,
            source_ref="src/billing",
        ).memory_id
    new = agent.lessons("Write", {"file_path": repo.file("migrations/0002_add.sql"),
                                  "content": "x"}, cwd=repo.path)  # fmt: skip
    assert [x.ref for x in new.lessons] == [globbed]
    assert new.lessons[0].why == "cites migrations/*.sql, which matches migrations/0002_add.sql"
    repo.write("src/billing/rates.py", "RATE = 1\n")
    inside = agent.lessons("Edit", {"file_path": repo.file("src/billing/rates.py"),
                                    "old_string": "RATE = 1", "new_string": "RATE = 2"},
                           cwd=repo.path)  # fmt: skip
    assert [x.ref for x in inside.lessons] == [folder]
    assert inside.lessons[0].why == "cites src/billing/, which holds src/billing/rates.py"


def test_directory_and_glob_citations_written_in_the_checkout(
    repo: Repo, writer: Cairn, agent: Cairn
) -> None:
    repo.write("src/billing/rates.py", "RATE = 1\n")
    folder = writer.remember("The billing package is frozen until the audit ends",
                             type="decision", source_ref="src/billing/",
                             cwd=repo.path).memory_id  # fmt: skip
    globbed = writer.remember("Migrations are append-only", type="constraint",
                              source_ref="migrations/*.sql", cwd=repo.path).memory_id  # fmt: skip
    assert [r.citation for r in writer.get_memory([folder, globbed], cwd=repo.path).records] == [
        "same",
        "unchecked",
    ]
    inside = agent.lessons("Edit", {"file_path": repo.file("src/billing/rates.py"),
                                    "old_string": "RATE = 1", "new_string": "RATE = 2"},
                           cwd=repo.path)  # fmt: skip
    assert [x.ref for x in inside.lessons] == [folder]
    assert inside.lessons[0].why == "cites src/billing/, which holds src/billing/rates.py"
    new = agent.lessons("Write", {"file_path": repo.file("migrations/0002_add.sql"),
                                  "content": "x"}, cwd=repo.path)  # fmt: skip
    assert [x.ref for x in new.lessons] == [globbed]
    wiped = agent.lessons("Bash", {"command": "rm -rf src/billing"}, cwd=repo.path)
    assert [x.ref for x in wiped.lessons] == [folder]
    assert wiped.lessons[0].why == "cites src/billing/, which this call touches"
