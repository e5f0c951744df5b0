"""Helpers shared by the lessons tests: a git checkout driven through the real git binary, and
the files the tests cite."""

from __future__ import annotations

import subprocess
from pathlib import Path

BILLING = """\
import decimal


def total(items):
    return sum(item.price for item in items)


def charge(customer, amount):
    # The provider retries on timeouts: this must stay idempotent.
    key = customer.id + ":" + str(amount)
    return provider.charge(customer, amount, idempotency_key=key)


def refund(customer, amount):
    return provider.refund(customer, amount)
"""

INVOICE = """\
class Invoice:
    def __init__(self, lines):
        self.lines = lines

    def total(self):
        return sum(line.amount for line in self.lines)
"""


class Repo:
    """A git checkout on disk, driven through the real git binary."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def git(self, *args: str) -> str:
        proc = subprocess.run(
            ["git", *args], cwd=self.path, capture_output=True, text=True, timeout=60, check=False
        )
        assert proc.returncode == 0, f"git {' '.join(args)} failed: {proc.stderr}"
        return proc.stdout.strip()

    def write(self, relative: str, text: str) -> Path:
        target = self.path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return target

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)

    def file(self, relative: str) -> str:
        return str(self.path / relative)
