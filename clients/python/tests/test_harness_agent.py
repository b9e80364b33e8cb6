"""HarnessAgent end to end with a fake CLI (a Python script standing in for a harness: it calls the gateway URL
with urllib and writes a file) and a fake ``launch_for``, served by the real Runner against a scripted server."""
from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from edge_rollout.harness import HarnessAgent, TaskError, gateway_base, task_id_of
from edge_rollout.harness.cli_spec import Launch
from edge_rollout.harness.netns import namespaces_available
from edge_rollout.runner import LLM, Runner
from edge_rollout.runner.agents import RolloutInfo
from fake_server import FakeServer
from test_runner import claim_of, run_until, serve_claims

TASKS = Path(__file__).resolve().parents[3] / "examples" / "harness-tasks"

#: The fake harness: one Messages call to the gateway, the reply's text into answer.txt, one line in its call log.
FAKE_CLI = """
import json, os, sys, urllib.request
base_url, mode = sys.argv[1], sys.argv[2]
assert os.path.isfile(os.path.join(os.environ["HOME"], ".fake", "settings.json")), "launch files are written first"
if mode == "hang":
    import time; time.sleep(100)
if mode == "crash":
    sys.exit(2)
request = urllib.request.Request(base_url + "/v1/messages", method="POST", data=json.dumps({"messages": []}).encode(),
                                 headers={"x-api-key": os.environ["FAKE_API_KEY"], "content-type": "application/json"})
text = json.loads(urllib.request.urlopen(request, timeout=10).read())["content"][0]["text"]
open("answer.txt", "w").write(text if mode == "solve" else "24")
with open(os.path.join(os.environ["HOME"], ".fake", "calls.log"), "a") as log:
    log.write(os.getcwd() + "\\n")
print("done")
"""


@pytest.fixture
def fake_agent(tmp_path):
    script = tmp_path / "fake_cli.py"
    script.write_text(FAKE_CLI)
    launches: list[dict] = []

    def launch_for(harness, *, instruction, base_url, api_key, headers, workspace, home, model="policy"):
        launches.append({"harness": harness, "instruction": instruction, "base_url": base_url, "workspace": workspace})
        mode = {"fake-a": "solve", "fake-b": "wrong"}.get(harness, harness)
        return Launch([sys.executable, str(script), base_url, mode], {"FAKE_API_KEY": api_key}, {".fake/settings.json": "{}"})

    def logged_calls(harness, *, home, workspace, stdout):
        log = Path(home) / ".fake" / "calls.log"
        return len(log.read_text().splitlines()) if log.exists() else 0

    def make(harnesses, **kwargs):
        agent = HarnessAgent(harnesses, TASKS, launch_for=launch_for, logged_calls=logged_calls, **kwargs)
        agent.launches = launches  # type: ignore[attr-defined]
        return agent
    return make


def harness_claim(server: FakeServer, rollout_id: str, agent: str) -> dict:
    claim = claim_of(rollout_id, url=server.url)
    claim.update(agent=agent, task={"problem": "Create answer.txt", "extra_args": {"task_dir": "create-answer-file"},
                                    "agent_name": f"external:{agent}"})
    server.route("POST", f"/v1/rollouts/{rollout_id}/attempts/1/llm/v1/messages",
                 lambda body: (200, {"type": "message", "content": [{"type": "text", "text": "42"}]}, {}))
    return claim


def test_the_runner_serves_two_harnesses_each_rollout_solved_or_not_by_its_own(server, fake_agent):
    agent = fake_agent(["fake-a", "fake-b"])
    serve_claims(server, [harness_claim(server, "h:0:0", "fake-a"), harness_claim(server, "h:1:0", "fake-b")])
    runner = Runner(agent, server.url, ["fake-a", "fake-b"], n_runners=2, poll_interval_s=0.05)
    finished = lambda rid: server.bodies("POST", f"/v1/rollouts/{rid}/attempts/1/finish")  # noqa: E731
    run_until(runner, lambda: finished("h:0:0") and finished("h:1:0"), timeout=30)
    assert finished("h:0:0") == [{"runner_id": runner.runner_id, "reward": 1.0}]
    assert finished("h:1:0") == [{"runner_id": runner.runner_id, "reward": 0.0}]
    calls = [r for r in server.requests if r["path"].endswith("/llm/v1/messages")]
    assert sorted(r["path"] for r in calls) == ["/v1/rollouts/h:0:0/attempts/1/llm/v1/messages", "/v1/rollouts/h:1:0/attempts/1/llm/v1/messages"]
    assert all(r["headers"]["x-api-key"] == "k" for r in calls)
    spans = [s for b in server.bodies("POST", "/v1/rollouts/h:0:0/events") for s in b["events"] if s["name"] == "harness_run"]
    assert [(s["kind"], s["value"]["harness"], s["value"]["logged_calls"], s["value"]["exit_code"]) for s in spans] == [("object", "fake-a", 1, 0)]
    assert spans[0]["value"]["isolation"] == namespaces_available().mode  # namespace here: the call went through the forwarder
    assert {launch["base_url"] for launch in agent.launches} == {f"{server.url}/v1/rollouts/h:{i}:0/attempts/1/llm" for i in (0, 1)}
    assert not any(Path(launch["workspace"]).exists() for launch in agent.launches)  # no workspace outlives its rollout


def rollout_info(agent: str = "") -> RolloutInfo:
    return RolloutInfo("r", 1, "r/attempt/1", "runner", "train", {}, None, threading.Event(), agent=agent)


def resources() -> dict:
    return {"llm": LLM(base_url="http://127.0.0.1:9/v1/rollouts/r/attempts/1/llm/v1", api_key="k", model="m")}


TASK = {"problem": "x", "extra_args": {"task_dir": "create-answer-file"}}


def test_a_harness_past_its_wall_clock_ends_with_timeout_and_the_checks_reward(fake_agent):
    agent = fake_agent(["hang"], wall_clock_s=1.0)
    started = time.monotonic()
    outcome = agent.run(TASK, resources(), rollout_info("hang"))
    assert time.monotonic() - started < 1.0 + 2.0 + 1.0  # limit + kill + the check
    assert outcome == {"reward": 0.0, "termination_reason": "TIMEOUT", "outcome": "policy", "error": "hang ran past its 1 s wall clock"}
    assert not Path(agent.launches[0]["workspace"]).exists()


def test_a_harness_that_exits_non_zero_having_written_nothing_is_a_policy_outcome(fake_agent):
    assert fake_agent(["crash"]).run(TASK, resources(), rollout_info("crash")) == {"reward": 0.0}


def test_a_missing_cli_binary_is_a_runner_failure_and_the_workspace_is_gone():
    seen: list[str] = []

    def launch_for(harness, **kwargs):
        seen.append(kwargs["workspace"])
        return Launch(["no-such-harness-cli"], {}, {})
    agent = HarnessAgent(["ghost"], TASKS, launch_for=launch_for, logged_calls=lambda *args, **kwargs: 0)
    with pytest.raises(FileNotFoundError, match="no-such-harness-cli"):
        agent.run(TASK, resources(), rollout_info("ghost"))
    assert seen and not Path(seen[0]).exists()


def test_the_harness_is_the_claims_agent_and_an_unserved_one_is_refused(fake_agent):
    agent = fake_agent(["fake-a", "fake-b"])
    assert agent.harness_for({}, rollout_info("fake-b")) == "fake-b"
    assert agent.harness_for({"agent_name": "external:fake-a"}, rollout_info()) == "fake-a"
    with pytest.raises(ValueError, match="not one of the harnesses served"):
        agent.harness_for({}, rollout_info("codex"))


def test_the_task_dir_comes_from_extra_args_else_the_problem_and_the_base_url_loses_its_v1():
    assert task_id_of({"problem": "p", "extra_args": {"task_dir": "count-lines"}}) == "count-lines"
    assert task_id_of({"problem": " sort-names ", "extra_args": {}}) == "sort-names"
    with pytest.raises(TaskError, match="names no task directory"):
        task_id_of({"problem": "", "extra_args": {}})
    assert gateway_base("http://127.0.0.1:8787/v1/rollouts/a/attempts/2/llm/v1") == "http://127.0.0.1:8787/v1/rollouts/a/attempts/2/llm"


def test_with_isolation_off_the_same_rollout_runs_and_records_why(server, fake_agent):
    harness_claim(server, "r", "fake-a")  # routes the fake gateway's /messages for rollout r
    llm = LLM(base_url=f"{server.url}/v1/rollouts/r/attempts/1/llm/v1", api_key="k", model="m")
    assert fake_agent(["fake-a"], isolate=False).run(TASK, {"llm": llm}, rollout_info("fake-a")) == {"reward": 1.0}


def test_the_command_line_takes_the_runner_flags_and_the_harness_ones():
    from edge_rollout.harness.__main__ import parse_args
    args = parse_args(["--tasks", str(TASKS), "--agent", "claude-code", "--agent", "codex", "--runners", "6", "--wall-clock", "120",
                       "--output-cap", "4096", "--no-isolation"])
    assert (args.agents, args.runners, args.wall_clock, args.output_cap, args.isolate) == (["claude-code", "codex"], 6, 120.0, 4096, False)
    assert parse_args(["--tasks", str(TASKS)]).isolate is None
