"""Precision: 100 ordinary calls against 500 memories about other things get at most a handful
of lessons, and every one of them is about its call.

The 500 memories are built to tempt a loose matcher: they share the calls' vocabulary (tests,
build, git, python, src, docs, billing), cite real files of the checkout that the calls do not
touch, and name other commands (`terraform apply`, `git rebase`, `npm install`). Two of them
are really about two of the calls, and must be the lessons those calls get.
"""

from __future__ import annotations

import itertools
from typing import Any

from lessonkit import Repo

from cairn import Cairn

SUBJECTS = ["the billing export", "the auth tokens", "the nightly report", "the search index",
            "the payments webhook", "the staging database", "the docs site", "the test fixtures",
            "the build cache", "the python client", "the release notes", "the admin panel",
            "the git history", "the src layout", "the CI pipeline", "the mobile app",
            "the invoice PDFs", "the metrics dashboard", "the feature flags",
            "the cron jobs", "the email templates", "the rate limiter"]  # fmt: skip
CLAIMS = ["{s} is rebuilt every night", "we decided to keep {s} in one module",
          "{s} broke once when the clock changed", "ask the platform team before touching {s}",
          "{s} must not log customer emails", "{s} is slow on laptops, use the remote runner",
          "tests for {s} are flaky under load", "{s} moved to the new cluster in March",
          "prefer small pull requests when changing {s}", "{s} depends on python 3.11 features",
          "never change {s} during a release freeze", "{s} uses UTC everywhere",
          "the owner of {s} is on the data team", "document every change to {s}",
          "{s} has a known bug with unicode names", "rollbacks of {s} need a ticket",
          "{s} is read by the finance spreadsheet", "{s} needs a cache warmup after deploys",
          "benchmarks for {s} live in the wiki", "keep {s} compatible with the old API",
          "run the linters before changing {s}", "{s} cannot be tested offline",
          "{s} retries three times"]  # fmt: skip
TYPES = ["fact", "decision", "lesson", "warning", "constraint", "instruction", "preference",
         "open_question", "task", "artifact"]  # fmt: skip
OTHER_COMMANDS = ["`terraform apply` needs a second reviewer", "`git rebase -i` loses signatures",
                  "`npm install` rewrites the lockfile; use `npm ci`",
                  "`kubectl delete` is forbidden in production", "`cargo publish` is manual",
                  "`docker system prune` wipes the shared cache",
                  "`pip install` outside the venv breaks the system python",
                  "`make release` tags and pushes", "`alembic downgrade` drops data",
                  "`git push --force` to main is blocked"]  # fmt: skip
CITED_FILES = [f"src/{area}/{name}.py" for area in ("auth", "reports", "search", "admin")
               for name in ("tokens", "views", "models_extra", "jobs", "export")]  # fmt: skip


def unrelated(repo: Repo) -> list[dict[str, Any]]:
    for path in CITED_FILES:
        repo.write(path, "".join(f"line_{n} = {n}\n" for n in range(1, 31)))
    items: list[dict[str, Any]] = []
    pairs = itertools.product(CLAIMS, SUBJECTS)
    for n, (claim, subject) in enumerate(pairs):
        item: dict[str, Any] = {
            "content": claim.format(s=subject).capitalize() + f" (#{n}).",
            "type": TYPES[n % len(TYPES)],
            "cwd": str(repo.path),
        }
        if n % 4 == 0:
            path = CITED_FILES[n % len(CITED_FILES)]
            item["source_ref"] = f"{path}:{1 + n % 20}-{3 + n % 20}" if n % 8 else path
        if n % 5 == 0:
            item["tags"] = ["testing", "build"] if n % 2 else ["git", "docs"]
        items.append(item)
        if len(items) == 490:
            break
    for text in OTHER_COMMANDS:
        items.append({"content": text, "type": "warning", "cwd": str(repo.path)})
    return items


def ordinary_calls(repo: Repo) -> list[tuple[str, dict[str, Any]]]:
    files = ["src/billing.py", "src/invoice.py", "README.md", "package.json", "docs/guide.md"]
    commands = ["ls -la", "git status", "git diff", "git log --oneline -5", "pytest -q",
                "python -m pytest tests/test_billing.py -x", "npm test", "npm run lint",
                "make build", "grep -rn TODO src", "cat package.json", "rg charge src",
                "git add -A && git commit -m 'fix rounding'", "python manage.py check",
                "git checkout -b fix-rounding", "pip list", "node --version", "echo done",
                "mkdir -p build && cp README.md build/",
                "git push origin fix-rounding"]  # fmt: skip
    calls: list[tuple[str, dict[str, Any]]] = []
    shell = itertools.cycle(commands)
    for n in range(100):
        kind = n % 5
        if kind == 0:
            calls.append(("Read", {"file_path": repo.file(files[n % len(files)])}))
        elif kind in (1, 4):
            calls.append(("Bash", {"command": next(shell), "description": "ordinary work"}))
        elif kind == 2:
            calls.append(
                (
                    "Edit",
                    {
                        "file_path": repo.file("src/billing.py"),
                        "old_string": "import decimal",
                        "new_string": "import decimal",
                    },
                )
            )
        else:
            calls.append(("Grep", {"pattern": "charge", "path": repo.file("src")}))
    return calls


def justified(tool: str, args: dict[str, Any], why: str, targets: tuple[str, ...]) -> bool:
    """The why names something the call really does: a phrase of its command, or its file."""
    command = args.get("command", "")
    if "`" in why:
        phrase = why.split("`")[1]
        return phrase in command
    return any(target in why for target in targets)


def test_ordinary_calls_get_at_most_a_handful_of_justified_lessons(
    repo: Repo, writer: Cairn, agent: Cairn
) -> None:
    results = writer.remember_many(unrelated(repo), dedup=False)
    assert len(results) == 500 and [r.error for r in results if not r.ok] == []
    planted = {
        writer.remember("`npm test` needs the database container running", type="instruction",
                        cwd=repo.path).memory_id,
        writer.remember("git commit hooks run the slow linters; commit with care",
                        type="lesson", cwd=repo.path).memory_id,
    }  # fmt: skip
    given: list[tuple[str, str, str]] = []
    for tool, args in ordinary_calls(repo):
        result = agent.lessons(tool, args, cwd=repo.path)
        for lesson in result.lessons:
            assert justified(tool, args, lesson.why, result.targets), (tool, args, lesson)
            given.append((tool, lesson.ref, lesson.why))
    assert len({(ref, why) for _, ref, why in given}) <= 5, given
    assert {ref for _, ref, _ in given} <= planted
    whys = {why for _, _, why in given}
    assert "instruction about `npm test`" in whys
    assert "lesson about `git commit`" in whys
