"""The app in a real browser: headless Chromium (the Debian `chromium` package, driven by
Playwright through `executable_path`) against `cairn ui` serving a real store with a token.

A person opens the address `cairn ui` printed, searches, opens a card, confirms, corrects,
undoes a merge act and accepts a tidy proposal; after each step the test reads the store to
check what it recorded. Requests without the token are refused. The page never runs the
hostile memory's script, every control has a label and the keyboard reaches them.

Screenshots go to a temporary folder, or to `CAIRN_APP_SCREENSHOTS` (docs/app/ refreshes the
README's pictures). With CI=true a missing browser fails the test instead of skipping it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import playwright.sync_api as sync_api
import pytest

sys.path.insert(0, str(Path(__file__).parent))

import appkit
from mcpkit import CAIRN, cairn_env

from cairn import Cairn
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.refs import parse_ref
from gitkit import GIT_IDENTITY

CHROMIUM = os.environ.get("CAIRN_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def _browser_or_fail() -> str:
    if Path(CHROMIUM).is_file():
        return CHROMIUM
    message = (
        f"no Chromium at {CHROMIUM}: install the Debian package (apt-get install -y chromium; "
        "`make setup-browser` does it as root) or set CAIRN_CHROMIUM to its binary."
    )
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


FOCUSED = "document.activeElement.id || document.activeElement.textContent.trim()"
CONTROLS = "input:not([type=hidden]), select, textarea, button"


class Served:
    def __init__(self, root: Path) -> None:
        self.repo = appkit.make_repo(root / "repo")
        self.env = {**cairn_env(root), **GIT_IDENTITY}
        self.settings = Settings(home=Path(self.env["CAIRN_HOME"]), embedder="hashing")
        with self.open() as mem:
            self.scenario = appkit.build(mem, self.repo)
        self.process = subprocess.Popen(
            [CAIRN, "ui", "--port", "0", "--token", appkit.TOKEN],
            env=self.env, cwd=self.repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        found = re.search(r"the app is at (http://\S+)", line)
        assert found, line + (self.process.stderr.read() if self.process.stderr else "")
        self.address = found.group(1)
        self.base = self.address.split("?")[0].rstrip("/")

    def open(self) -> Cairn:
        return Cairn.open(settings=self.settings, embedder=HashingEmbedder(), cwd=self.repo)

    def memory(self, ref: str) -> Any:
        with self.open() as mem:
            return mem.get_memory([ref]).records[0].memory

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("githome")
    saved = {k: os.environ.get(k) for k in ("HOME", "XDG_CONFIG_HOME", *GIT_IDENTITY)}
    os.environ.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), **GIT_IDENTITY})
    server = Served(tmp_path_factory.mktemp("app"))
    try:
        yield server
    finally:
        server.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = _browser_or_fail()
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chosen = os.environ.get("CAIRN_APP_SCREENSHOTS")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_requests_without_the_token_are_refused(served: Served) -> None:
    for path in ["/", "/memories", "/memories.json", f"/memories/{served.scenario.cited}",
                 "/static/app.css", "/stats"]:  # fmt: skip
        answer = httpx.get(served.base + path, follow_redirects=False)
        assert answer.status_code == 401, path
        assert "token" in answer.json()["error"]["message"]
    wrong = httpx.get(served.base + "/memories?token=" + "x" * 40, follow_redirects=False)
    assert wrong.status_code == 401
    posted = httpx.post(served.base + f"/memories/{served.scenario.rule}/unpin", data={})
    assert posted.status_code == 401
    assert served.memory(served.scenario.rule).pinned  # nothing changed


def test_a_person_reviews_memory_in_a_real_browser(
    served: Served, browser: Any, shots: Path
) -> None:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    scenario = served.scenario

    # Open the printed address: the token becomes a cookie and leaves the address bar.
    page.goto(served.address)
    assert "token=" not in page.url and page.url.endswith("/memories")
    cookie = next(c for c in context.cookies() if c["name"] == "cairn_app")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert cookie["value"] != appkit.TOKEN
    assert page.locator("ol.memories li").count() >= 10
    assert page.get_by_text("<script>alert('owned')</script>", exact=False).count() == 1
    page.screenshot(path=str(shots / "list.png"), full_page=True)

    # Search: recall's ranking puts the cited memory first.
    page.get_by_label("Search").fill("how does charge use the rate")
    page.get_by_label("Search").press("Enter")
    page.wait_for_url(re.compile(r"q=how"))
    first = page.locator("ol.memories li a.row").first
    assert scenario.cited in first.inner_text()
    page.screenshot(path=str(shots / "search.png"), full_page=True)

    # Open the card: the cited lines as they read now.
    first.click()
    page.wait_for_url(re.compile(scenario.cited))
    assert "total = amount * self.rate" in page.locator("figure.cited").inner_text()
    assert page.locator(".badge.cite-same").count() >= 1
    page.screenshot(path=str(shots / "card.png"), full_page=True)

    # Confirm, as the person.
    page.get_by_role("button", name="Confirm it still holds").click()
    page.wait_for_url(re.compile("did=confirm"))
    assert "Confirmed" in page.locator(".notice").inner_text()
    confirmed = served.memory(scenario.cited)
    assert confirmed.confirmed == 1 and "person" in confirmed.evidence["people"]

    # Correct: a new version; the old one keeps its text and points at it.
    page.get_by_text("Correct it").click()
    page.get_by_label("New text").fill(
        "Billing.charge multiplies the amount by the rate, then rounds"
    )
    page.get_by_label("Why", exact=True).fill("rounding was added")
    page.get_by_role("button", name="Save the new version").click()
    page.wait_for_url(re.compile("did=correct"))
    old = served.memory(scenario.cited)
    assert old.status == "replaced" and old.replaced_by is not None
    new = served.memory(f"mem_{old.replaced_by}")
    assert new.content.endswith("then rounds") and f"mem_{new.id}" in page.url
    assert scenario.cited in page.locator("ol.history").inner_text()

    # Undo the merge act that confirmed a memory.
    assert served.memory(scenario.merged).confirmed == 1
    page.goto(f"{served.base}/memories/{scenario.merged}")
    page.screenshot(path=str(shots / "card-act.png"), full_page=True)
    page.get_by_role("button", name=f"Undo {scenario.act}").click()
    page.wait_for_url(re.compile("did=undo"))
    undone = served.memory(scenario.merged)
    assert undone.confirmed == 0 and undone.evidence.get("acts") == []
    with served.open() as mem:
        act = mem.store.get_act(parse_ref(scenario.act, kind="act"))
        assert act is not None and act.undone_at is not None

    # Accept a tidy proposal.
    with served.open() as mem:
        proposal = next(p for p in mem.tidy() if p.id == scenario.proposal)
    page.goto(f"{served.base}/tidy")
    page.screenshot(path=str(shots / "tidy.png"), full_page=True)
    page.get_by_role("button", name=f"Accept {scenario.proposal}").click()
    page.wait_for_url(re.compile("did=accept"))
    with served.open() as mem:
        row = mem.store.get_proposal(parse_ref(scenario.proposal, kind="tidy"))
        assert row is not None and row.status == "accepted"
    retired = served.memory(str(proposal.detail["retire"]))
    assert retired.status != "active" and retired.until is not None

    for name in ("stats", "scopes", "sessions", "procedures"):
        page.goto(f"{served.base}/{name}")
        assert page.locator("h1").count() == 1
        page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
    assert dialogs == []  # the hostile memory's script never ran
    context.close()


def test_controls_are_labelled_and_reached_by_keyboard(served: Served, browser: Any) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(served.address)
    for path in ["/memories", f"/memories/{served.scenario.rule}", "/tidy"]:
        page.goto(served.base + path)
        unlabelled = page.evaluate(
            "() => [...document.querySelectorAll(CONTROLS)].filter(el => !(el.labels &&"
            " el.labels.length) && !el.getAttribute('aria-label') && !el.textContent.trim())"
            ".map(el => el.outerHTML)".replace("CONTROLS", repr(CONTROLS))
        )
        assert unlabelled == [], path
    page.goto(served.base + "/memories")
    order = []
    for _ in range(12):
        page.keyboard.press("Tab")
        order.append(
            page.evaluate("document.activeElement.id || document.activeElement.textContent.trim()")
        )
    assert order[0] == "Skip to content"
    assert order.index("Memories") < order.index("Stats") < order.index("q") < order.index("type")
    page.locator("h1").click()
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "q"
    page.locator("h1").click()
    page.keyboard.press("j")
    assert page.evaluate("document.activeElement.className") == "row"
    context.close()
