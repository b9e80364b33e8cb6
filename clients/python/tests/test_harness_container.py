"""Unit tests of the harness sandbox entry (edge_rollout.harness.container_entry): the spec from HARNESS_* variables,
task archives, one rollout run end to end with a fake CLI against a fake gateway off loopback (reached through the
loopback relay, in the namespaces where this machine has them), and the control server the Durable Object polls."""
from __future__ import annotations

import io
import json
import socket
import time
import sys
import tarfile
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from edge_rollout.harness.cli_spec import Launch
from edge_rollout.harness.container_entry import _Run, control_server, dry_run, run_rollout, serve
from edge_rollout.harness.container_spec import PLACEHOLDER_KEY, ContainerSpec, parse_spec
from edge_rollout.harness.container_task import unpack
from edge_rollout.harness.netns import namespaces_available
from edge_rollout.harness.tasks import TaskError
from loopback_server import serve_fixed

TASKS = Path(__file__).resolve().parents[3] / "examples" / "harness-tasks"
ENV = {"HARNESS_ROLLOUT_ID": "r-1", "HARNESS_ATTEMPT": "1", "HARNESS_NAME": "claude-code", "HARNESS_TASK": "create-answer-file",
       "HARNESS_LLM_BASE_URL": "http://gateway.internal/v1/rollouts/r-1/attempts/1/llm/v1"}

#: The fake harness: one Messages call to its base URL, the reply's text into answer.txt.
FAKE_CLI = """
import json, sys, urllib.request
base_url, mode = sys.argv[1], sys.argv[2]
if mode == "hang":
    import time; time.sleep(100)
request = urllib.request.Request(base_url + "/v1/messages", method="POST", data=b"{}", headers={"x-api-key": "k"})
open("answer.txt", "w").write(json.loads(urllib.request.urlopen(request, timeout=10).read())["content"][0]["text"])
"""


@pytest.fixture
def fake(tmp_path):
    script = tmp_path / "fake_cli.py"
    script.write_text(FAKE_CLI)
    seen: list[str] = []

    def launch_for(harness, *, instruction, base_url, api_key, headers, workspace, home, model="policy"):
        seen.append(base_url)
        return Launch([sys.executable, str(script), base_url, harness], {}, {})
    return {"launch_for": launch_for, "logged_calls": lambda *a, **k: 1, "seen": seen}


@pytest.fixture
def gateway():
    """A fake gateway on 127.0.0.2 (loopback, but not a host the namespace path treats as loopback): paths it was asked."""
    paths: list[str] = []
    server = serve_fixed(json.dumps({"content": [{"type": "text", "text": "42\n"}]}).encode(), "127.0.0.2", paths)
    yield f"http://127.0.0.2:{server.server_address[1]}", paths
    server.shutdown()
    server.server_close()


def spec(**overrides) -> ContainerSpec:
    return parse_spec([], {**ENV, "HARNESS_TASKS_ROOT": str(TASKS), **{k: str(v) for k, v in overrides.items()}})


def test_the_spec_comes_from_harness_variables_and_a_missing_one_is_named():
    parsed = spec()
    assert (parsed.rollout_id, parsed.attempt, parsed.harness, parsed.api_key, parsed.isolate) == ("r-1", 1, "claude-code", PLACEHOLDER_KEY, None)
    assert parse_spec(["--attempt", "3"], ENV).attempt == 3  # a flag wins over its variable
    with pytest.raises(ValueError, match="HARNESS_TASK"):
        parse_spec([], {k: v for k, v in ENV.items() if k != "HARNESS_TASK"})
    with pytest.raises(ValueError, match="HARNESS_ATTEMPT must be a int"):
        spec(HARNESS_ATTEMPT="one")
    for bad in ({"HARNESS_TASK": "../etc"}, {"HARNESS_ISOLATION": "maybe"}, {"HARNESS_ATTEMPT": "0"}):
        with pytest.raises(ValueError):
            spec(**bad)


def test_the_key_never_appears_in_a_dry_run(tmp_path):
    plan = dry_run(spec(HARNESS_LLM_API_KEY="secret-key"))
    assert "secret-key" not in json.dumps(plan)
    assert plan["command"]["argv"][1:3] == ["-p", (TASKS / "create-answer-file" / "instruction.md").read_text().strip()]
    assert plan["loopback_relay"] is True and plan["task"]["dir"].endswith("create-answer-file")


def make_archive(tmp_path, members: dict[str, bytes], link: bool = False) -> Path:
    path = tmp_path / "task.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        if link:
            info = tarfile.TarInfo("escape")
            info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tar.addfile(info)
    return path


def test_an_archive_unpacks_without_its_solution(tmp_path):
    archive = make_archive(tmp_path, {"instruction.md": b"do it", "tests/test.sh": b"true", "solution/solve.sh": b"echo 42"})
    unpack(archive, tmp_path / "t")
    assert sorted(p.relative_to(tmp_path / "t").as_posix() for p in (tmp_path / "t").rglob("*")) == ["instruction.md", "tests", "tests/test.sh"]


@pytest.mark.parametrize("members,link", [({"../x": b""}, False), ({"/abs": b""}, False), ({"instruction.md": b"x"}, True),
                                          ({"README": b"no instruction"}, False)])
def test_an_unsafe_or_incomplete_archive_is_refused(tmp_path, members, link):
    with pytest.raises(TaskError):
        unpack(make_archive(tmp_path, members, link), tmp_path / "t")


def test_a_rollout_reaches_an_off_loopback_gateway_through_the_relay_and_finishes_with_the_checks_reward(fake, gateway):
    url, paths = gateway
    base = f"{url}/v1/rollouts/r-1/attempts/1/llm/v1"
    outcome = run_rollout(spec(HARNESS_LLM_BASE_URL=base, HARNESS_NAME="solve"), threading.Event(),
                          launch_for=fake["launch_for"], logged_calls=fake["logged_calls"])
    assert outcome["finish"] == {"reward": 1.0} and outcome["release"] is None
    assert fake["seen"][0].startswith("http://127.0.0.1:")  # the CLI got the loopback relay, not the gateway's host
    assert paths == ["/v1/rollouts/r-1/attempts/1/llm/v1/messages"]
    run_span = next(s for s in outcome["spans"] if s["name"] == "harness_run")
    assert run_span["value"]["check"]["reward"] == 1.0 and run_span["attributes"]["attempt"] == 1
    assert run_span["value"]["isolation"] == namespaces_available().mode  # namespaced wherever this machine allows it


def test_a_harness_past_its_wall_clock_finishes_with_a_timeout(fake, gateway):
    outcome = run_rollout(spec(HARNESS_LLM_BASE_URL=f"{gateway[0]}/v1", HARNESS_NAME="hang", HARNESS_WALL_CLOCK_S=1, HARNESS_ISOLATION="off"),
                          threading.Event(), launch_for=fake["launch_for"], logged_calls=fake["logged_calls"])
    assert outcome["finish"]["termination_reason"] == "TIMEOUT" and outcome["finish"]["reward"] == 0.0


def test_a_task_that_is_not_there_is_a_runner_failure_released_as_crashed(fake):
    outcome = run_rollout(spec(HARNESS_TASK="no-such-task"), threading.Event(), launch_for=fake["launch_for"],
                          logged_calls=fake["logged_calls"])
    assert outcome["finish"] is None and outcome["release"]["reason"] == "crashed"
    assert any(s["name"] == "attempt_crashed" for s in outcome["spans"])


def test_a_cancelled_run_reports_neither_finish_nor_release(fake, gateway):
    cancelled = threading.Event()
    threading.Timer(0.5, cancelled.set).start()
    outcome = run_rollout(spec(HARNESS_LLM_BASE_URL=f"{gateway[0]}/v1", HARNESS_NAME="hang", HARNESS_ISOLATION="off"), cancelled,
                          launch_for=fake["launch_for"], logged_calls=fake["logged_calls"])
    assert (outcome["finish"], outcome["release"], outcome["cancelled"]) == (None, None, True)


def call(port: int, method: str, path: str) -> tuple[int, dict]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method, data=b"" if method == "POST" else None)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_the_control_server_answers_202_until_the_outcome_is_ready_and_cancel_sets_the_event():
    run = _Run()
    server = control_server(run, 0, host="127.0.0.1")
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    port = server.server_address[1]
    try:
        assert call(port, "GET", "/outcome") == (202, {"state": "running"})
        assert call(port, "POST", "/cancel") == (202, {"state": "cancelling"}) and run.cancelled.is_set()
        run.outcome = {"finish": {"reward": 1.0}}
        run.done.set()
        assert call(port, "GET", "/outcome") == (200, {"finish": {"reward": 1.0}})
        assert run.collected.wait(2)  # set once the reply was written
        assert call(port, "GET", "/nope")[0] == 404
    finally:
        server.shutdown()
        server.server_close()


def test_serve_runs_the_rollout_and_exits_once_the_outcome_was_collected(fake, gateway):
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    base = f"{gateway[0]}/v1/rollouts/r-1/attempts/1/llm/v1"
    done: list[int] = []
    thread = threading.Thread(target=lambda: done.append(serve(spec(HARNESS_LLM_BASE_URL=base, HARNESS_NAME="solve", HARNESS_CONTROL_PORT=port),
                                                                linger_s=30, launch_for=fake["launch_for"], logged_calls=fake["logged_calls"])))
    thread.start()
    deadline = time.monotonic() + 30
    status, body = 0, {}
    while time.monotonic() < deadline:
        try:
            status, body = call(port, "GET", "/outcome")
        except OSError:
            status = 0  # not listening yet
        if status == 200:
            break
        time.sleep(0.1)
    assert status == 200 and body["finish"] == {"reward": 1.0}
    thread.join(timeout=5)
    assert done == [0]
