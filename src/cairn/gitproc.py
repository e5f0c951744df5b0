"""Running git: one place that decides git's environment and how long it may take.

Three parts of cairn ask git things (scope detection, citations and acts, the branch brief), and
all need the same care. The variables that point git at another repository are removed, so git
answers about the directory asked even when cairn runs inside a git hook (which sets `GIT_DIR`
for its own repository); prompts and optional locks are off, so git never waits for a user or
takes a lock a concurrent git command needs; and a slow git is cut off.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

# Variables that point git at a repository other than the one around the directory asked.
LOCATION_VARS = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_NAMESPACE",
        "GIT_PREFIX",
    }
)


def git_process(
    directory: Path,
    args: tuple[str, ...],
    timeout: float,
    errors: str = "surrogateescape",
    stdin_text: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `git -C directory args...`; raises OSError when git cannot run, TimeoutExpired.

    `errors` decodes git's bytes: `surrogateescape` (the default) round-trips paths exactly;
    `replace` suits text shown to people, such as commit subjects. `stdin_text` is fed to
    git's standard input (for `--stdin` commands); without it git reads nothing.
    """
    env = {k: v for k, v in os.environ.items() if k not in LOCATION_VARS}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_OPTIONAL_LOCKS"] = "0"
    return subprocess.run(
        ["git", "--no-pager", "-C", str(directory), *args],
        capture_output=True,
        encoding="utf-8",
        errors=errors,
        env=env,
        # The text given, else an empty input: git never waits on cairn's own standard input.
        input=stdin_text if stdin_text is not None else "",
        timeout=timeout,
        check=False,
    )


def git_output(
    directory: Path, *args: str, timeout: float, errors: str = "surrogateescape"
) -> str | None:
    """git's trimmed standard output, or None when git is missing, slow or fails."""
    try:
        proc = git_process(directory, args, timeout, errors)
    except (OSError, subprocess.TimeoutExpired):
        return None
    except ValueError:  # an argument holding NUL, which no git name can: git cannot answer
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None
