"""The Claude Code hooks, driven as Claude Code drives them: `cairn lessons --hook claude-code`
as a subprocess, the documented JSON on stdin (PreToolUse with Edit, Write, Bash and Read;
SessionStart; Stop), its JSON answer on stdout, exit status 0 whatever happens. And the
settings file the installer writes, merged with what is there."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lessonkit import Repo

from cairn import Cairn
from hookservers import end_servers

CAIRN = str(Path(sys.executable).with_name("cairn"))
OLD_CHARGE = '    key = customer.id + ":" + str(amount)'


@pytest.fixture
def store_location(tmp_path: Path) -> str:
    # The hook adapter never touches SQL; the lessons behind it run on both backends elsewhere.
    return str(tmp_path / "memory.db")


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    return {**base, "CAIRN_HOME": str(tmp_path / "home"), **extra}


def hook(
    store: str, payload: dict[str, Any] | str, tmp_path: Path, **extra: str
) -> subprocess.CompletedProcess[str]:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [CAIRN, "--store", store, "lessons", "--hook", "claude-code"],
        input=text, capture_output=True, text=True, env=env(tmp_path, **extra), timeout=120,
        check=False,
    )  # fmt: skip


def event(repo: Repo, name: str, session: str = "5f0c1e2a-7b4d-4e8f-9a61-2c3d4e5f6a7b",
          **fields: Any) -> dict[str, Any]:  # fmt: skip
    return {
        "session_id": session,
        "transcript_path": f"/home/dev/.claude/projects/shop/{session}.jsonl",
        "cwd": str(repo.path),
        "permission_mode": "default",
        "hook_event_name": name,
        **fields,
    }


def pre_tool(repo: Repo, tool: str, tool_input: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return event(repo, "PreToolUse", tool_name=tool, tool_input=tool_input,
                 tool_use_id="toolu_01ABC123", **kw)  # fmt: skip


def context(proc: subprocess.CompletedProcess[str], name: str = "PreToolUse") -> str:
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert set(answer) == {"hookSpecificOutput"}
    specific = answer["hookSpecificOutput"]
    assert specific["hookEventName"] == name
    assert "permissionDecision" not in specific  # lessons inform; they never allow or deny
    text: str = specific["additionalContext"]
    return text


@pytest.fixture
def memories(repo: Repo, writer: Cairn) -> dict[str, str]:
    return {
        "charge": writer.remember("charge() must stay idempotent: the provider retries",
                                  type="warning", source_ref="src/billing.py:8-11",
                                  cwd=repo.path).memory_id,
        "publish": writer.remember("Never run `npm publish` from a branch", type="warning",
                                   cwd=repo.path).memory_id,
        "migrations": writer.remember("Never edit migrations/ by hand; add a new revision",
                                      type="constraint", cwd=repo.path).memory_id,
    }  # fmt: skip


def test_pre_tool_use_edit_write_bash_read(
    repo: Repo, store_location: str, memories: dict[str, str], tmp_path: Path
) -> None:
    edit = pre_tool(repo, "Edit", {"file_path": repo.file("src/billing.py"),
                                   "old_string": OLD_CHARGE, "new_string": "    key = None",
                                   "replace_all": False})  # fmt: skip
    text = context(hook(store_location, edit, tmp_path))
    ref = memories["charge"]
    assert ref in text and "cites src/billing.py:8-11, which this edit changes" in text
    assert f"Does {ref} still hold" in text and f"confirm('{ref}')" in text
    write = pre_tool(
        repo,
        "Write",
        {
            "file_path": repo.file("migrations/0002_add.sql"),
            "content": "ALTER TABLE invoices ADD total int;",
        },
    )
    assert memories["migrations"] in context(hook(store_location, write, tmp_path))
    bash = pre_tool(
        repo,
        "Bash",
        {
            "command": "npm publish --tag next",
            "description": "Publish the package",
            "timeout": 120000,
        },
    )
    assert "warning about `npm publish`" in context(hook(store_location, bash, tmp_path))
    read = pre_tool(repo, "Read", {"file_path": repo.file("src/billing.py")}, session="other")
    assert "which this call reads" in context(hook(store_location, read, tmp_path))


def test_ordinary_calls_and_repeats_print_nothing(
    repo: Repo, store_location: str, memories: dict[str, str], tmp_path: Path
) -> None:
    ordinary = pre_tool(repo, "Bash", {"command": "ls -la", "description": "List files"})
    proc = hook(store_location, ordinary, tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""
    bash = pre_tool(repo, "Bash", {"command": "npm publish", "description": "Publish"})
    assert context(hook(store_location, bash, tmp_path))
    again = hook(store_location, bash, tmp_path)
    assert again.returncode == 0 and again.stdout == ""


def test_session_start_gives_the_standing_brief(
    repo: Repo, store_location: str, memories: dict[str, str], agent: Cairn, tmp_path: Path
) -> None:
    agent.mute_lessons(path="docs/**", cwd=repo.path)
    start = event(repo, "SessionStart", source="startup", model="claude-sonnet-4-5")
    text = context(hook(store_location, start, tmp_path), "SessionStart")
    assert all(ref in text for ref in memories.values())
    assert "Warnings:" in text and "Constraints:" in text
    assert "Branch: main" in text and "docs/**" in text


def test_stop_reminds_once_after_changes(
    repo: Repo, store_location: str, memories: dict[str, str], tmp_path: Path
) -> None:
    reader = "reader-session"
    hook(store_location, pre_tool(repo, "Read", {"file_path": repo.file("README.md")},
                                  session=reader), tmp_path)  # fmt: skip
    quiet = hook(store_location, event(repo, "Stop", reader, stop_hook_active=False), tmp_path)
    assert quiet.returncode == 0 and quiet.stdout == ""
    changer = "changer-session"
    edit = {"file_path": repo.file("README.md"), "old_string": "# shop", "new_string": "# Shop"}
    hook(store_location, pre_tool(repo, "Edit", edit, session=changer), tmp_path)
    active = hook(store_location, event(repo, "Stop", changer, stop_hook_active=True), tmp_path)
    assert active.stdout == ""  # Claude is already continuing because of a Stop hook
    stop = hook(store_location, event(repo, "Stop", changer, stop_hook_active=False,
                                      last_assistant_message="Done."), tmp_path)  # fmt: skip
    answer = json.loads(stop.stdout)
    assert answer["decision"] == "block" and "remember" in answer["reason"]
    again = hook(store_location, event(repo, "Stop", changer, stop_hook_active=False), tmp_path)
    assert again.stdout == ""
    # Once per session: another editing turn is not reminded again.
    hook(store_location, pre_tool(repo, "Edit", edit, session=changer), tmp_path)
    later = hook(store_location, event(repo, "Stop", changer, stop_hook_active=False), tmp_path)
    assert later.stdout == ""


def test_stop_does_not_remind_a_session_that_remembered(
    repo: Repo, store_location: str, memories: dict[str, str], tmp_path: Path
) -> None:
    session = "remembering-session"
    edit = {"file_path": repo.file("README.md"), "old_string": "# shop", "new_string": "# Shop"}
    hook(store_location, pre_tool(repo, "Edit", edit, session=session), tmp_path)
    remember = {"content": "The shop title is capitalised.", "type": "decision"}
    said = hook(store_location, pre_tool(repo, "mcp__cairn__remember", remember,
                                         session=session), tmp_path)  # fmt: skip
    assert said.returncode == 0 and said.stdout == ""
    stop = hook(store_location, event(repo, "Stop", session, stop_hook_active=False), tmp_path)
    assert stop.stdout == ""


def test_failures_of_cairn_never_block_the_agent(
    repo: Repo, store_location: str, tmp_path: Path
) -> None:
    bash = pre_tool(repo, "Bash", {"command": "npm publish"})
    for payload in ("not json", "[1, 2]", ""):
        proc = hook(store_location, payload, tmp_path)
        assert proc.returncode == 0 and proc.stdout == "", payload
    broken = tmp_path / "broken.db"
    broken.write_text("this is not a database", encoding="utf-8")
    proc = hook(str(broken), bash, tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""
    assert proc.stderr.startswith("cairn: lessons hook skipped")
    (tmp_path / "a-directory.db").mkdir()
    assert hook(str(tmp_path / "a-directory.db"), bash, tmp_path).returncode == 0


def test_generic_stdin(repo: Repo, store_location: str, memories: dict[str, str],
                       tmp_path: Path) -> None:  # fmt: skip
    def ask(payload: str) -> dict[str, Any]:
        proc = subprocess.run([CAIRN, "--store", store_location, "lessons", "--stdin"],
                              input=payload, capture_output=True, text=True,
                              env=env(tmp_path), timeout=120, check=False)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        answer: dict[str, Any] = json.loads(proc.stdout)
        return answer

    answer = ask(json.dumps({"tool": "shell", "args": {"command": "npm publish"},
                             "cwd": str(repo.path), "client": "aider"}))  # fmt: skip
    assert [x["ref"] for x in answer["lessons"]] == [memories["publish"]]
    assert answer["lessons"][0]["why"] == "warning about `npm publish`"
    assert answer["text"].startswith("cairn memory: 1 lesson")
    same_shape = ask(json.dumps(pre_tool(repo, "Bash", {"command": "npm publish"})))
    assert [x["ref"] for x in same_shape["lessons"]] == [memories["publish"]]
    failed = ask(json.dumps({"args": {}}))
    assert failed["lessons"] == [] and failed["error"]["code"] == "invalid_input"


# settings.json ---------------------------------------------------------------------------------
def cli(*args: str, cwd: Path, tmp_path: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CAIRN, *args], cwd=cwd, capture_output=True, text=True,
                          env=env(tmp_path, **extra), timeout=120, check=False)  # fmt: skip


EXISTING = {
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]}
        ],
        "PostToolUse": [
            {"matcher": "Edit", "hooks": [{"type": "command", "command": "ruff format"}]}
        ],
    },
}


def test_install_merges_is_idempotent_and_uninstalls(repo: Repo, tmp_path: Path) -> None:
    settings = repo.write(".claude/settings.json", json.dumps(EXISTING, indent=4))
    first = cli("hook", "claude-code", "install", "--json", cwd=repo.path, tmp_path=tmp_path)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["changed"] == ["PreToolUse", "SessionStart", "Stop",
                                                   "SessionEnd"]  # fmt: skip
    data = json.loads(settings.read_text(encoding="utf-8"))
    assert data["permissions"] == EXISTING["permissions"]
    assert data["hooks"]["PostToolUse"] == EXISTING["hooks"]["PostToolUse"]
    pre = data["hooks"]["PreToolUse"]
    assert pre[0] == EXISTING["hooks"]["PreToolUse"][0]
    assert "Edit" in pre[1]["matcher"] and "Bash" in pre[1]["matcher"]
    command = pre[1]["hooks"][0]["command"]
    assert command.startswith(shlex.quote(CAIRN + "-hook") + " claude-code")
    assert command.endswith("|| true")
    for name in ("SessionStart", "Stop", "SessionEnd"):
        assert data["hooks"][name] == [{"hooks": [pre[1]["hooks"][0]]}]
    before = settings.read_bytes()
    second = cli("hook", "claude-code", "install", cwd=repo.path, tmp_path=tmp_path)
    assert "unchanged: PreToolUse, SessionStart, Stop, SessionEnd" in second.stdout
    assert settings.read_bytes() == before
    gone = cli("hook", "claude-code", "uninstall", cwd=repo.path, tmp_path=tmp_path)
    assert gone.returncode == 0 and "removed" in gone.stdout
    assert json.loads(settings.read_text(encoding="utf-8")) == EXISTING


def test_install_upgrades_the_slow_command_of_older_versions(repo: Repo, tmp_path: Path) -> None:
    old = f"{CAIRN} lessons --hook claude-code || true"
    groups = {"PreToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": old}]}],
              "Stop": [{"hooks": [{"type": "command", "command": old}]}]}  # fmt: skip
    settings = repo.write(".claude/settings.json", json.dumps({"hooks": groups}))
    done = cli("hook", "claude-code", "install", cwd=repo.path, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    hooks = json.loads(settings.read_text(encoding="utf-8"))["hooks"]
    commands = [h["command"] for e in hooks.values() for g in e for h in g["hooks"]]
    assert len(commands) == 4 and all("cairn-hook claude-code" in c for c in commands)
    cli("hook", "claude-code", "uninstall", cwd=repo.path, tmp_path=tmp_path)
    assert json.loads(settings.read_text(encoding="utf-8")) == {}


def test_user_level_install_and_a_broken_settings_file(repo: Repo, tmp_path: Path) -> None:
    home = tmp_path / "userhome"
    home.mkdir()
    done = cli("hook", "claude-code", "install", "--user", cwd=repo.path, tmp_path=tmp_path,
               HOME=str(home))  # fmt: skip
    assert done.returncode == 0, done.stderr
    user_file = home / ".claude" / "settings.json"
    assert set(json.loads(user_file.read_text(encoding="utf-8"))["hooks"]) == {
        "PreToolUse", "SessionStart", "Stop", "SessionEnd",
    }  # fmt: skip
    cli("hook", "claude-code", "uninstall", "--user", cwd=repo.path, tmp_path=tmp_path,
        HOME=str(home))  # fmt: skip
    assert json.loads(user_file.read_text(encoding="utf-8")) == {}
    broken = repo.write(".claude/settings.json", "{ not json")
    refused = cli("hook", "claude-code", "install", cwd=repo.path, tmp_path=tmp_path)
    assert refused.returncode == 2 and "not valid JSON" in refused.stderr
    assert broken.read_text(encoding="utf-8") == "{ not json"


def test_project_install_never_writes_through_a_link_out_of_it(repo: Repo, tmp_path: Path) -> None:
    """A hostile repository's `.claude` may point at the user's own settings (or anywhere)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "settings.json").write_text("{}", encoding="utf-8")
    (repo.path / ".claude").symlink_to(elsewhere, target_is_directory=True)
    refused = cli("hook", "claude-code", "install", cwd=repo.path, tmp_path=tmp_path)
    assert refused.returncode == 2 and "out of the project" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    assert sorted(p.name for p in elsewhere.iterdir()) == ["settings.json"]
    assert (elsewhere / "settings.json").read_text(encoding="utf-8") == "{}"


@pytest.fixture
def servers_ended(tmp_path: Path) -> Iterator[None]:
    """The installed command starts a hook server under the test's home: end it, by pid."""
    yield
    end_servers(tmp_path)


@pytest.mark.usefixtures("servers_ended")
def test_the_installed_command_runs_and_never_fails(
    repo: Repo, store_location: str, memories: dict[str, str], tmp_path: Path
) -> None:
    done = cli("--store", store_location, "hook", "claude-code", "install", cwd=repo.path,
               tmp_path=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads((repo.path / ".claude" / "settings.json").read_text(encoding="utf-8"))
    command = data["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    payload = json.dumps(pre_tool(repo, "Bash", {"command": "npm publish"}))

    def run(**extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["sh", "-c", command], input=payload, capture_output=True,
                              text=True, env=env(tmp_path, **extra), cwd=repo.path, timeout=120,
                              check=False)  # fmt: skip

    assert memories["publish"] in context(run())
    # Even a configuration cairn refuses before its own hook code runs exits 0.
    refused = run(CAIRN_BUSY_TIMEOUT_MS="soon")
    assert refused.returncode == 0 and refused.stdout == ""


def test_git_hooks_still_install_under_the_same_group(repo: Repo, tmp_path: Path) -> None:
    done = cli("hook", "install", cwd=repo.path, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (repo.path / ".git" / "hooks" / "post-merge").is_file()


def test_install_carries_the_store_of_a_cairn_home_set_where_it_runs(
    repo: Repo, tmp_path: Path
) -> None:
    settings = repo.write(".claude/settings.json", "{}")
    cli("hook", "claude-code", "install", cwd=repo.path, tmp_path=tmp_path)
    command = json.loads(settings.read_text(encoding="utf-8"))["hooks"]["Stop"][0]["hooks"][0]
    store = str(tmp_path / "home" / "memory.db")
    assert shlex.split(command["command"].removesuffix(" || true"))[-2:] == ["--store", store]
    cli("hook", "claude-code", "install", cwd=repo.path, tmp_path=tmp_path, CAIRN_HOME="")
    plain = json.loads(settings.read_text(encoding="utf-8"))["hooks"]["Stop"][0]["hooks"][0]
    assert "--store" not in plain["command"]  # no CAIRN_HOME: the hook finds the default
