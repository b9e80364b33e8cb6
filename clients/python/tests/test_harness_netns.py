"""Unit tests of running a harness CLI: only the gateway is reachable (loopback servers only, never an outside
address), the wall clock kills the whole tree, output is capped, stdin is closed."""
from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from edge_rollout.harness.limits import Limits, run_limited
from edge_rollout.harness.netns import namespaces_available, run_harness
from loopback_server import serve_fixed

TASKS = Path(__file__).resolve().parents[3] / "examples" / "harness-tasks"
needs_namespaces = pytest.mark.skipif(namespaces_available().mode != "namespace",
                                      reason=f"no namespaces here: {namespaces_available().reason}")


@pytest.fixture
def servers() -> Iterator[tuple[str, str]]:
    """The gateway and another host-loopback server that is NOT forwarded: their base URLs."""
    gateway, other = serve_fixed(b"gateway"), serve_fixed(b"other")
    yield (f"http://127.0.0.1:{gateway.server_address[1]}", f"http://127.0.0.1:{other.server_address[1]}")
    for server in (gateway, other):
        server.shutdown()
        server.server_close()


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


FETCH = """
import sys, urllib.request
for url in sys.argv[1:]:
    try:
        print(url, urllib.request.urlopen(url, timeout=3).read().decode())
    except Exception as error:
        print(url, "unreachable", type(error).__name__)
"""


def run(argv, tmp_path, gateway_url="http://127.0.0.1:9/v1", **kwargs):
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    return run_harness(argv, env=env, cwd=str(tmp_path), limits=kwargs.pop("limits", Limits(20)), gateway_url=gateway_url,
                       run_dir=str(tmp_path), **kwargs)


@needs_namespaces
def test_the_cli_reaches_the_gateway_at_its_own_url_and_not_another_loopback_server(servers, tmp_path):
    gateway, other = servers
    done = run([*python(FETCH), f"{gateway}/v1/models", f"{other}/v1/models"], tmp_path, gateway_url=f"{gateway}/v1/rollouts/r/llm")
    assert done.isolation.mode == "namespace"
    assert done.result.text().splitlines() == [f"{gateway}/v1/models gateway", f"{other}/v1/models unreachable URLError"]


@needs_namespaces
def test_without_isolation_the_same_cli_reaches_both_which_is_what_the_namespace_prevents(servers, tmp_path):
    gateway, other = servers
    done = run([*python(FETCH), f"{other}/"], tmp_path, gateway_url=gateway, isolate=False)
    assert done.isolation.mode == "none"
    assert done.result.text().strip() == f"{other}/ other"


@needs_namespaces
def test_the_tasks_root_is_hidden_inside_the_namespace(tmp_path):
    code = f"import os; print(len(os.listdir({str(TASKS)!r})))"
    assert run(python(code), tmp_path, hide=[str(TASKS)]).result.text().strip() == "0"


def test_a_hanging_cli_is_killed_at_its_wall_clock_with_what_it_started(tmp_path):
    started = time.monotonic()
    done = run(["sleep", "100"], tmp_path, limits=Limits(wall_clock_s=1.0))
    assert done.result.timed_out and done.result.exit_code is None
    assert time.monotonic() - started < 1.0 + 2.0


@needs_namespaces
def test_a_cli_that_ignores_sigterm_and_leaves_a_detached_child_is_stopped_with_the_child(tmp_path):
    # The child moves to its own session (out of the process group); the PID namespace still ends it.
    code = ("import signal, subprocess, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
            "subprocess.Popen(['bash', '-c', 'while :; do echo x >> alive; sleep 0.05; done'], start_new_session=True);"
            "time.sleep(100)")
    started = time.monotonic()
    done = run(python(code), tmp_path, limits=Limits(wall_clock_s=1.0))
    assert done.result.timed_out and time.monotonic() - started < 1.0 + 2.0
    size = (tmp_path / "alive").stat().st_size
    time.sleep(0.4)
    assert size > 0 and (tmp_path / "alive").stat().st_size == size


def test_output_beyond_the_cap_is_dropped_and_counted(tmp_path):
    done = run(python("import sys; sys.stdout.write('x' * 100000); sys.stderr.write('y' * 10)"), tmp_path,
               limits=Limits(wall_clock_s=20, output_cap_bytes=1000))
    assert (len(done.result.stdout), done.result.stdout_dropped) == (1000, 99000)
    assert (done.result.stderr, done.result.stderr_dropped) == (b"y" * 10, 0)
    assert done.result.exit_code == 0


def test_stdin_is_closed(tmp_path):
    done = run(python("import sys; print(repr(sys.stdin.read()))"), tmp_path)
    assert done.result.text().strip() == "''"


def test_a_set_cancelled_event_stops_the_run(tmp_path):
    cancelled = threading.Event()
    threading.Timer(0.3, cancelled.set).start()
    done = run(["sleep", "100"], tmp_path, cancelled=cancelled)
    assert done.result.cancelled and not done.result.timed_out and done.result.wall_s < 3


def test_a_missing_cli_binary_is_a_runner_failure(tmp_path):
    with pytest.raises(FileNotFoundError, match="no-such-harness-cli"):
        run(["no-such-harness-cli", "-p", "hi"], tmp_path)


def test_run_limited_reports_a_non_zero_exit(tmp_path):
    done = run_limited(python("raise SystemExit(3)"), env={"PATH": os.environ["PATH"]}, cwd=str(tmp_path), limits=Limits(10))
    assert (done.exit_code, done.timed_out, done.cancelled) == (3, False, False)


def test_where_namespaces_are_unavailable_the_cli_runs_unisolated_warned_once_and_recorded(tmp_path, monkeypatch, caplog):
    from edge_rollout.harness import netns
    monkeypatch.setattr(netns, "_probed", netns.Isolation("none", "unshare failed: Operation not permitted"))
    monkeypatch.setattr(netns, "_warned", set())
    runs = [run(["true"], tmp_path) for _ in range(2)]
    assert [(r.isolation.mode, r.isolation.reason, r.result.exit_code) for r in runs] == [("none", "unshare failed: Operation not permitted", 0)] * 2
    assert [r.getMessage() for r in caplog.records if "WITHOUT network isolation" in r.getMessage()] == [
        "harness CLIs run WITHOUT network isolation: unshare failed: Operation not permitted"]
    with pytest.raises(RuntimeError, match="isolation was required"):
        run(["true"], tmp_path, isolate=True)


@needs_namespaces
def test_a_gateway_that_is_not_on_loopback_is_not_isolated_since_nothing_resolves_inside(monkeypatch):
    from edge_rollout.harness import netns
    monkeypatch.setattr(netns, "_warned", set())
    # Only the decision is tested: no process runs and nothing is sent anywhere.
    assert netns._choose("http://gateway.invalid:8787/v1", None).reason.startswith("the gateway host gateway.invalid is not loopback")
    assert netns._choose("http://localhost:8787/v1", None).mode == "namespace"
