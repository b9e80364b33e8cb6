"""The real local stack (the Worker on Miniflare's API + the vLLM simulator) for the live tests, and their helpers.

Skipped, with the reason, only when node or the npm dependencies are missing; with
EDGE_ROLLOUT_REQUIRE_LIVE=1 (as .ci/run sets it) a missing dependency fails instead. conftest.py
starts one stack per test session for every file that asks for the ``stack`` fixture.
"""
from __future__ import annotations

import json
import os
import queue
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from edge_rollout import Client

ROOT = Path(__file__).resolve().parents[3]
#: The simulator's URL of each running stack, by the stack's URL.
MODEL_SERVERS: dict[str, str] = {}
ROWS = [json.loads(line) for line in (ROOT / "test/fixtures/datasets/calculator.jsonl").read_text().splitlines() if line.strip()]


def missing_dependency() -> str | None:
    """Why the stack cannot start here, or None."""
    if shutil.which("node") is None:
        return "node is not on PATH"
    for dep in ("tsx/dist/cli.mjs", "wrangler/bin/wrangler.js"):
        if not (ROOT / "node_modules" / dep).exists():
            return f"node_modules/{dep} is missing (run npm ci)"
    return None


def free_port() -> int:
    """A port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_stack() -> Iterator[str]:
    """Starts the local stack for the tests that need it and yields its URL; stops it afterwards."""
    missing = missing_dependency()
    if missing and os.environ.get("EDGE_ROLLOUT_REQUIRE_LIVE") == "1":
        pytest.fail(f"the live stack is required (EDGE_ROLLOUT_REQUIRE_LIVE=1) but {missing}")
    if missing:
        pytest.skip(f"live round trip needs the local stack, but {missing}")
    log = tempfile.TemporaryFile(mode="w+")
    launcher = [shutil.which("node"), "node_modules/tsx/dist/cli.mjs", "clients/python/tests/serve-stack.ts", "--port", str(free_port())]
    # The launcher stops the stack when its stdin closes, so the stack dies with this process.
    process = subprocess.Popen(launcher, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
    try:
        first = lines.get(timeout=120)
    except queue.Empty:
        first = ""
    if not first.startswith("{"):
        process.kill()
        log.seek(0)
        pytest.fail(f"the local stack did not start:\n{first}{log.read()[-4000:]}")
    try:
        started = json.loads(first)
        MODEL_SERVERS[started["url"]] = started["model_server"]
        yield started["url"]
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.terminate()
            process.wait(timeout=10)
        log.close()


def edge_rollout_cli(*args: str) -> list[str]:
    """The command line that runs ``edge-rollout <args>`` from this checkout."""
    return [shutil.which("node") or "node", str(ROOT / "bin/edge-rollout.mjs"), *args]


def wait_done(client: Client, batch_id: str, timeout: float = 90.0) -> dict:
    """The batch's progress once it is done (AssertionError after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        progress = client.batch_status(batch_id)
        if progress["done"]:
            return progress
        time.sleep(0.25)
    raise AssertionError(f"batch {batch_id} not done after {timeout} s: {progress['counts']}")
