"""Build cairn's wheel, install it into a fresh virtual environment, and measure a light install.

    python scripts/bench_install.py            # build, install, measure, print a table
    python scripts/bench_install.py --check    # also fail (exit 1) unless it works without torch
    python scripts/bench_install.py --venv /path/to/.venv   # measure an existing environment
    python scripts/bench_install.py --source /path/to/other/checkout   # e.g. an older release

What is measured, each in a brand-new CAIRN_HOME and an empty model cache (CAIRN_CACHE_DIR), with
the default embedder:

- the installed size of the environment (every file under the venv directory);
- the wall time of the first `cairn remember` (what a new user waits for);
- the wall time from starting `cairn mcp` to its answer to `initialize`;
- the peak resident memory (ru_maxrss) of the first `cairn recall` in another new CAIRN_HOME.

`--check` is what `make wheel-check` runs: the wheel must install without torch, transformers or
sentence-transformers, and a remember followed by a recall must find the memory. The targets are
printed, never enforced: timings on a shared machine are noisy. Only the standard library is
used, so any Python 3.11 runs it; pip fetches the runtime dependencies from the configured index.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "transformers", "sentence-transformers")
TARGETS = {
    "env_mb": 350.0,
    "first_remember_s": 1.5,
    "mcp_initialize_s": 1.0,
    "recall_rss_mb": 250.0,
}
# Run a command as a child and report its own peak memory: RUSAGE_CHILDREN of this small
# wrapper holds only that child.
_RSS_WRAPPER = (
    "import json, resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "wall = time.perf_counter() - t\n"
    "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(json.dumps({'rc': done.returncode, 'wall': wall, 'rss_kb': rss,\n"
    "                  'out': done.stdout, 'err': done.stderr}))\n"
)


def say(message: str) -> None:
    print(f"bench-install: {message}", file=sys.stderr, flush=True)


def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise SystemExit(f"error: {' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}")
    return done


def clean_env(**extra: str) -> dict[str, str]:
    """The caller's environment without anything that would import another cairn or model."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env = {k: v for k, v in env.items() if not k.startswith("CAIRN_")}
    env.update(extra)
    return env


def build_and_install(work: Path, source: Path) -> tuple[Path, dict[str, Any]]:
    """Build the wheel, make a fresh venv, install the wheel; return the venv and timings."""
    dist = work / "dist"
    say("building the wheel")
    start = time.perf_counter()
    pip = [sys.executable, "-m", "pip"]
    built = run([*pip, "wheel", "--no-deps", "-v", "-w", str(dist), str(source)])
    build_s = time.perf_counter() - start
    (wheel,) = dist.glob("cairn_memory-*.whl")
    venv = work / "venv"
    say(f"creating a fresh virtual environment in {venv}")
    run([sys.executable, "-m", "venv", str(venv)])
    say(f"installing {wheel.name} and its runtime dependencies")
    start = time.perf_counter()
    done = run([str(venv / "bin" / "python"), "-m", "pip", "install", str(wheel)], env=clean_env())
    install_s = time.perf_counter() - start
    warnings = [
        line.strip()
        for line in (built.stdout + built.stderr + done.stdout + done.stderr).splitlines()
        # A warning says so; a file whose name holds the word (mcp_deprecated_tools.py) does not.
        if "deprecat" in line.lower() and "warning" in line.lower()
    ]
    info = {
        "wheel": wheel.name,
        "wheel_mb": round(wheel.stat().st_size / 1e6, 1),
        "build_s": round(build_s, 1),
        "install_s": round(install_s, 1),
        "install_warnings": warnings,
    }
    return venv, info


def tree_bytes(root: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = Path(dirpath) / name
            if not path.is_symlink():
                total += path.stat().st_size
    return total


def biggest_packages(venv: Path, top: int = 8) -> list[tuple[str, float]]:
    (site,) = venv.glob("lib/python3*/site-packages")
    sizes = [(p.name, tree_bytes(p) if p.is_dir() else p.stat().st_size) for p in site.iterdir()]
    sizes.sort(key=lambda item: -item[1])
    return [(name, round(size / 1e6, 1)) for name, size in sizes[:top]]


def installed(venv: Path) -> set[str]:
    done = run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format=json"])
    return {row["name"].lower() for row in json.loads(done.stdout)}


def measured(venv: Path, args: list[str], env: dict[str, str]) -> dict[str, Any]:
    cmd = [sys.executable, "-c", _RSS_WRAPPER, str(venv / "bin" / "cairn"), *args]
    result: dict[str, Any] = json.loads(run(cmd, env=env).stdout)
    if result["rc"] != 0:
        raise SystemExit(f"error: cairn {' '.join(args)} failed:\n{result['err']}")
    return result


def mcp_initialize_seconds(venv: Path, env: dict[str, str]) -> float:
    """Seconds from starting `cairn mcp` to its answer to an `initialize` request."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench-install", "version": "1"},
        },
    }
    start = time.perf_counter()
    proc = subprocess.Popen(
        [str(venv / "bin" / "cairn"), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(request) + "\n")
    proc.stdin.flush()
    try:
        for line in proc.stdout:
            if '"id":1' in line.replace(" ", ""):
                return time.perf_counter() - start
        raise SystemExit(f"error: cairn mcp gave no answer to initialize: {proc.stderr.read()}")
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def app_serves(venv: Path, env: dict[str, str]) -> bool:
    """`cairn ui` from the wheel serves a page and its stylesheet (the templates and static
    files are package data: a wheel without them would answer 500)."""
    proc = subprocess.Popen(
        [str(venv / "bin" / "cairn"), "ui", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if " at http://" not in line:
            return False
        address = line.split(" at ", 1)[1].strip()
        pages = []
        for path in ("memories", "static/app.css"):
            with urllib.request.urlopen(address + path, timeout=60) as answer:
                pages.append((answer.status, answer.read().decode("utf-8")))
        return all(status == 200 for status, _ in pages) and "<h1>Memories</h1>" in pages[0][1]
    except OSError:
        return False
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def measure(venv: Path, work: Path) -> dict[str, Any]:
    home, cache = work / "home", work / "cache"
    env = clean_env(CAIRN_HOME=str(home), CAIRN_CACHE_DIR=str(cache))
    report: dict[str, Any] = {"venv": str(venv)}
    report["env_mb"] = round(tree_bytes(venv) / 1e6, 1)
    report["biggest_mb"] = biggest_packages(venv)
    report["heavy_installed"] = sorted(set(HEAVY) & installed(venv))
    say("first remember in a brand-new CAIRN_HOME")
    text = "The deploy script needs the staging database to be migrated first."
    first = measured(venv, ["remember", text, "--type", "fact"], env)
    report["first_remember_s"] = round(first["wall"], 2)
    report["first_remember_rss_mb"] = round(first["rss_kb"] / 1024, 1)
    say("recall of what was just remembered")
    recall = measured(venv, ["recall", "how do we deploy to staging?", "--json"], env)
    report["recall_s"] = round(recall["wall"], 2)
    report["recall_found_it"] = "staging database" in recall["out"]
    say("first recall in another brand-new CAIRN_HOME")
    fresh = {**env, "CAIRN_HOME": str(work / "home2")}
    first_recall = measured(venv, ["recall", "how do we deploy to staging?"], fresh)
    report["first_recall_s"] = round(first_recall["wall"], 2)
    report["recall_rss_mb"] = round(first_recall["rss_kb"] / 1024, 1)
    say("cairn mcp: start to initialize answered")
    report["mcp_initialize_s"] = round(mcp_initialize_seconds(venv, env), 2)
    say("cairn ui: a page and its stylesheet")
    report["app_serves_pages"] = app_serves(venv, env)
    homes = (home, work / "home2")
    report["models_under_home"] = sorted(p.name for h in homes for p in h.rglob("*.onnx"))
    report["models_in_cache"] = sorted(p.name for p in cache.rglob("*.onnx"))
    return report


def print_table(report: dict[str, Any]) -> None:
    for key, target in TARGETS.items():
        value = report[key]
        verdict = "ok" if value <= target else "OVER"
        print(f"{key:<22}{value:>10}   target <= {target:<6} {verdict}")
    extra = ("first_recall_s", "recall_s", "first_remember_rss_mb", "heavy_installed")
    for key in (*extra, "recall_found_it", "app_serves_pages"):
        print(f"{key:<22}{report[key]!s:>10}")
    print("biggest packages (MB): " + ", ".join(f"{n} {s}" for n, s in report["biggest_mb"]))
    for key in ("wheel_mb", "build_s", "install_s", "install_warnings"):
        if key in report:
            print(f"{key:<22}{report[key]!s:>10}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=Path, help="measure this environment instead of building")
    parser.add_argument(
        "--source", type=Path, default=REPO, help="the checkout to build (default: this one)"
    )
    parser.add_argument("--check", action="store_true", help="fail unless the light install works")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cairn-bench-install-"))
    try:
        info: dict[str, Any] = {}
        venv = args.venv.resolve() if args.venv else None
        if venv is None:
            venv, info = build_and_install(work, args.source.resolve())
        report = {**measure(venv, work), **info}
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report)
    problems = []
    if report["heavy_installed"]:
        problems.append(f"the install pulled {', '.join(report['heavy_installed'])}")
    if not report["app_serves_pages"]:
        problems.append("cairn ui did not serve its pages (templates or static files missing?)")
    if not report["recall_found_it"]:
        problems.append("recall did not find the memory just remembered")
    if report["models_under_home"]:
        problems.append(f"a model was written under CAIRN_HOME: {report['models_under_home']}")
    if args.check and problems:
        print("error: " + "; ".join(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
