"""`cairn ui` and `cairn serve` as real processes: the app answers beside MCP under the same
token, `cairn ui` prints its address, and a bind it must refuse is one line, exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx2 as httpx

sys.path.insert(0, str(Path(__file__).parent))

from mcpkit import CAIRN, HEADERS, cairn_env, initialize_request, serving

TOKEN = "app-0123456789abcdefghijklmnopqrstuvwxyz"


def test_serve_serves_the_app_beside_mcp(tmp_path: Path) -> None:
    env = cairn_env(tmp_path)
    with serving(env, tmp_path, "--token", TOKEN) as served:
        root = served.url.removesuffix("/mcp")
        assert httpx.get(root + "/memories").status_code == 401
        assert httpx.post(served.url, json=initialize_request(), headers=HEADERS).status_code == 401
        with httpx.Client(base_url=root) as browser:
            opened = browser.get("/memories", params={"token": TOKEN}, follow_redirects=True)
            assert opened.status_code == 200 and "<h1>Memories</h1>" in opened.text
            assert browser.get("/stats").status_code == 200  # the cookie carries on
        bearer = {**HEADERS, "Authorization": f"Bearer {TOKEN}"}
        answer = httpx.post(served.url, json=initialize_request(), headers=bearer)
        assert answer.status_code == 200


def test_ui_prints_its_address_and_refuses_an_open_bind(tmp_path: Path) -> None:
    env = cairn_env(tmp_path)
    help_text = subprocess.run(
        [CAIRN, "ui", "--help"], env=env, capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert "Serve the app" in help_text and "--token" in help_text and "--port" in help_text
    refused = subprocess.run(
        [CAIRN, "ui", "--host", "0.0.0.0", "--port", "0"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert refused.returncode == 2
    assert refused.stderr.startswith("error: refusing to serve on 0.0.0.0 without a token")
    assert "Traceback" not in refused.stderr
    weak = subprocess.run(
        [CAIRN, "ui", "--token", "short", "--port", "0"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert weak.returncode == 2 and "too weak" in weak.stderr
    process = subprocess.Popen(
        [CAIRN, "ui", "--port", "0"], env=env, cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("cairn: the app is at http://127.0.0.1:")
        address = line.split(" at ", 1)[1].strip()
        assert httpx.get(address + "memories").status_code == 200
        assert httpx.get(address + "memories", headers={"Host": "evil.example"}).status_code == 403
    finally:
        process.terminate()
        process.wait(timeout=30)
