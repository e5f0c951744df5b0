"""Reading tool calls as agents make them: Claude Code's tools, generic arguments, shell lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from cairn.lessons.calls import parse_call, parse_command
from cairn.lessons.locate import edited_lines, locate
from cairn.lessons.paths import glob_match, mentions


def programs(command: str) -> list[tuple[str, tuple[str, ...]]]:
    return [(inv.program, inv.words) for inv in parse_command(command)[0]]


def test_claude_code_file_tools() -> None:
    edit = parse_call("Edit", {"file_path": "/r/a.py", "old_string": "x = 1", "new_string": "y"})
    assert edit.action == "edit" and edit.paths[0].old_strings == ("x = 1",)
    multi = parse_call(
        "MultiEdit",
        {"file_path": "/r/a.py", "edits": [{"old_string": "a", "new_string": "def go(): pass"},
                                           {"old_string": "b", "new_string": "c"}]},
    )  # fmt: skip
    assert multi.paths[0].old_strings == ("a", "b") and multi.symbols == ("go",)
    write = parse_call("Write", {"file_path": "/r/a.py", "content": "x"})
    assert write.action == "write" and write.paths[0].whole
    read = parse_call("Read", {"file_path": "/r/a.py", "offset": 10, "limit": 5})
    assert read.action == "read" and read.paths[0].read_range == (10, 14)
    glob = parse_call("Glob", {"pattern": "**/*.sql", "path": "migrations"})
    assert glob.action == "search" and glob.paths[0].path == "migrations/**/*.sql"
    fetch = parse_call("WebFetch", {"url": "https://api.example.com/v1", "prompt": "read"})
    assert fetch.urls == ("https://api.example.com/v1",)


def test_generic_tools_by_their_arguments() -> None:
    assert parse_call("run_shell", {"cmd": "npm publish"}).invocations[0].program == "npm"
    read = parse_call("mcp__fs__read_file", {"path": "src/a.py"})
    assert read.action == "read" and read.paths[0].path == "src/a.py"
    edit = parse_call("apply", {"file": "a.py", "old_string": "x"})
    assert edit.action == "edit"
    many = parse_call("open_files", {"files": ["a.py", "b.py", 3]})
    assert [p.path for p in many.paths] == ["a.py", "b.py"]
    assert parse_call("TodoWrite", {"todos": []}).paths == ()


def test_shell_programs_behind_wrappers_and_operators() -> None:
    assert programs("cd app && FOO=1 npm publish --tag next") == [("npm", ("publish",))]
    assert programs("sudo -E python -m alembic -c alembic.ini upgrade head") == [
        ("alembic", ("upgrade", "head"))
    ]
    assert programs("uv run pytest -q; npx -y prisma migrate dev | tee log") == [
        ("pytest", ()),
        ("prisma", ("migrate", "dev")),
        ("tee", ("log",)),
    ]
    assert programs("docker compose up -d") == [("docker", ("compose", "up"))]
    assert programs("git push --force origin main")[0] == ("git", ("push",))
    assert programs('echo "unbalanced') == [("echo", ())]


def test_shell_paths_redirects_and_cd() -> None:
    _, paths, urls = parse_command("cd web && rm -rf build/ dist > out.log; curl https://x.io/a")
    found = {(p.base, p.path) for p in paths}
    assert found >= {("web", "build/"), ("web", "dist"), ("web", "out.log")}
    assert urls == ("https://x.io/a",)


def test_locate_resolves_paths_and_edited_lines(tmp_path: Path) -> None:
    root = tmp_path / "r"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("one\ntwo\nthree\nfour\n", encoding="utf-8")
    call = parse_call("Edit", {"file_path": str(root / "src" / "a.py"), "old_string": "two\nthree"})
    located = locate(call, root, root)
    assert located.targets[0].path == "src/a.py" and located.targets[0].lines == ((2, 3),)
    relative = locate(parse_call("Read", {"file_path": "a.py"}), root / "src", root)
    assert relative.targets[0].path == "src/a.py"
    outside = locate(parse_call("Read", {"file_path": "/etc/hosts"}), root, root)
    assert outside.targets == ()
    assert edited_lines(root / "src" / "a.py", ("missing",), replace_all=False) == ()
    assert edited_lines(root / "src" / "a.py", ("o",), replace_all=True)[:2] == ((1, 1), (2, 2))


def test_paths_globs_and_mentions() -> None:
    assert glob_match("docs/**", "docs/a/b.md") and glob_match("docs", "docs/a.md")
    assert glob_match("migrations/*.py", "migrations/x.py")
    assert not glob_match("migrations/*.py", "migrations/old/x.py")
    assert glob_match("**/*.sql", "a/b/c.sql") and glob_match("**/*.sql", "c.sql")
    text = "Never edit `migrations/` by hand; see src/billing.py:10, invoice.py, https://x.io/a/b."
    assert mentions(text) == ["migrations/", "src/billing.py", "invoice.py"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    tool=st.sampled_from(["Edit", "MultiEdit", "Write", "Read", "Bash", "Grep", "Glob", "x", ""]),
    args=st.dictionaries(
        st.sampled_from(
            [
                "file_path",
                "path",
                "command",
                "edits",
                "old_string",
                "offset",
                "limit",
                "files",
                "url",
                "pattern",
            ]
        ),
        json_values,
        max_size=5,
    ),
)
def test_parsing_never_fails_on_any_arguments(tool: str, args: dict[str, Any]) -> None:
    call = parse_call(tool, args)
    assert call.action in {"edit", "write", "read", "run", "search", "fetch", "other"}


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
@example("/\r0")  # a program that is only a slash once parsed to an empty name
def test_any_shell_text_parses(command: str) -> None:
    invocations, paths, _ = parse_command(command)
    assert all(inv.program for inv in invocations)
    assert all(p.path for p in paths)


def test_which_calls_change_the_project() -> None:
    def changes(tool: str, args: dict[str, Any]) -> bool:
        return locate(parse_call(tool, args), None, None).changes

    assert changes("Edit", {"file_path": "a.py", "old_string": "x"})
    assert changes("Write", {"file_path": "a.py", "content": ""})
    assert not changes("Read", {"file_path": "a.py"})
    for looking in ("ls -la", "git status && git diff", "cat a 2>/dev/null", "grep -rn x ."):
        assert not changes("Bash", {"command": looking}), looking
    for acting in ("npm test", "git commit -m x", "echo x > notes.txt", "mkdir build"):
        assert changes("Bash", {"command": acting}), acting
