"""Unit tests of edge_rollout.runner against a scripted server: shapes, emitters, outcomes, leases, shutdown."""
from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from edge_rollout.runner import LitAgent, Runner, emit_message, emit_object, emit_reward, load_agent, rollout
from edge_rollout.runner.agents import RolloutInfo
from fake_server import FakeServer

ROOT = Path(__file__).resolve().parents[3]


def claim_of(rollout_id: str, attempt: int = 1, mode: str = "train", url: str = "http://x") -> dict[str, Any]:
    return {"rollout_id": rollout_id, "attempt": attempt, "attempt_id": f"{rollout_id}/attempt/{attempt}", "runner_id": "r", "agent": "a",
            "mode": mode, "task": {"problem": "What is 1 + 1?", "ground_truth": "2"}, "config": {"mode": mode}, "group": None,
            "lease_expires_at": 0, "llm": {"base_url": f"{url}/v1/rollouts/{rollout_id}/attempts/{attempt}/llm/v1", "api_key": "k", "model": "m"},
            "resources": {"greeting": "hello"}}


def serve_claims(server: FakeServer, claims: list[dict[str, Any]]) -> None:
    """Hands out ``claims`` one per claim request, then nothing; accepts events, finishes, releases, heartbeats."""
    pending = list(claims)
    lock = threading.Lock()

    def take(_body: Any):
        with lock:
            return 200, {"runner_id": "r", "claimed": [pending.pop(0)] if pending else []}, {}
    server.route("POST", "/v1/runners/claim", take)
    server.route("POST", "/v1/runners/heartbeat", lambda body: (200, {"leases": [{**held, "ok": True, "lease_expires_at": 1, "reason": None} for held in body["leases"]]}, {}))
    for claim in claims:
        path = f"/v1/rollouts/{claim['rollout_id']}"
        server.route("POST", f"{path}/events", lambda body: (201, {"sequence_ids": []}, {}))
        for end in ("finish", "release"):
            server.route("POST", f"{path}/attempts/{claim['attempt']}/{end}", lambda body: (200, {"status": "succeeded"}, {}))


def run_until(runner: Runner, done, timeout: float = 10.0) -> None:
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        time.sleep(0.02)
    runner.stop()
    thread.join(timeout)
    assert done(), "the runner did not get there in time"


def test_a_rollout_function_gets_the_resources_it_names_and_its_spans_carry_the_attempt(server):
    seen: dict[str, Any] = {}

    @rollout
    def solve(task, llm, greeting, rollout):
        seen.update(problem=task["problem"], base_url=llm.base_url, greeting=greeting, attempt=rollout.attempt)
        emit_message("thinking")
        emit_object({"tool": "calc"}, name="tool")
        emit_reward(0.25)

    serve_claims(server, [claim_of("b:0:0", attempt=2, url=server.url)])
    runner = Runner(solve, server.url, ["a"], poll_interval_s=0.05)
    run_until(runner, lambda: server.bodies("POST", "/v1/rollouts/b:0:0/attempts/2/finish"))
    assert seen == {"problem": "What is 1 + 1?", "base_url": f"{server.url}/v1/rollouts/b:0:0/attempts/2/llm/v1", "greeting": "hello", "attempt": 2}
    spans = [span for body in server.bodies("POST", "/v1/rollouts/b:0:0/events") for span in body["events"]]
    assert [(s["kind"], s["attributes"]["attempt"]) for s in spans] == [("message", 2), ("object", 2), ("reward", 2)]
    assert server.bodies("POST", "/v1/rollouts/b:0:0/attempts/2/finish") == [{"runner_id": runner.runner_id}]
    assert solve.resources == ("greeting",)


def test_a_lit_agent_runs_training_or_validation_by_mode_and_its_return_becomes_the_outcome(server):
    class Agent(LitAgent):
        def training_rollout(self, task, resources, rollout):
            return 1.0

        async def validation_rollout(self, task, resources, rollout):
            await asyncio.sleep(0)
            return {"reward": 0.5, "messages": [{"role": "assistant", "content": "2"}]}

    serve_claims(server, [claim_of("t:0:0", url=server.url), claim_of("v:0:0", mode="val", url=server.url)])
    runner = Runner(Agent(), server.url, ["a"], poll_interval_s=0.05)
    run_until(runner, lambda: runner.stats.finished == 2)
    assert server.bodies("POST", "/v1/rollouts/t:0:0/attempts/1/finish")[0]["reward"] == 1.0
    assert server.bodies("POST", "/v1/rollouts/v:0:0/attempts/1/finish")[0] == {"runner_id": runner.runner_id, "reward": 0.5, "messages": [{"role": "assistant", "content": "2"}]}


def test_an_agent_that_raises_is_reported_as_a_crashed_attempt_with_an_exception_span(server):
    @rollout
    def broken(task):
        raise RuntimeError("tool exploded")

    serve_claims(server, [claim_of("c:0:0", url=server.url)])
    runner = Runner(broken, server.url, ["a"], poll_interval_s=0.05)
    run_until(runner, lambda: runner.stats.crashed == 1)
    release = server.bodies("POST", "/v1/rollouts/c:0:0/attempts/1/release")[0]
    assert release["reason"] == "crashed" and "tool exploded" in release["error"]
    span = server.bodies("POST", "/v1/rollouts/c:0:0/events")[0]["events"][0]
    assert span["kind"] == "exception" and span["value"]["type"] == "RuntimeError"


def test_a_lost_lease_cancels_the_attempt_and_its_outcome_is_never_reported(server):
    started = threading.Event()

    @rollout
    def slow(task, rollout):
        started.set()
        rollout.cancelled.wait(10)
        return 1.0

    serve_claims(server, [claim_of("l:0:0", url=server.url)])
    server.route("POST", "/v1/runners/heartbeat", lambda body: (200, {"leases": [{**held, "ok": False, "lease_expires_at": None, "reason": "lost"} for held in body["leases"]]}, {}))
    runner = Runner(slow, server.url, ["a"], lease_ms=300, poll_interval_s=0.05)
    run_until(runner, lambda: runner.stats.lost == 1 and not runner._active)
    assert started.is_set()
    assert server.bodies("POST", "/v1/rollouts/l:0:0/attempts/1/finish") == []


def test_stop_hands_running_attempts_back_after_the_grace_period(server):
    started = threading.Event()

    @rollout
    def stuck(task, rollout):
        started.set()
        rollout.cancelled.wait(10)

    serve_claims(server, [claim_of("s:0:0", url=server.url)])
    runner = Runner(stuck, server.url, ["a"], poll_interval_s=0.05, grace_s=0.2)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    assert started.wait(5)
    runner.stop()
    thread.join(5)
    assert not thread.is_alive()
    assert server.bodies("POST", "/v1/rollouts/s:0:0/attempts/1/release") == [{"runner_id": runner.runner_id, "reason": "shutdown"}]
    assert runner.stats.handed_back == 1 and server.bodies("POST", "/v1/rollouts/s:0:0/attempts/1/finish") == []


def test_workers_run_attempts_concurrently(server):
    inside, peak, lock = [0], [0], threading.Lock()

    @rollout
    def wait_a_bit(task):
        with lock:
            inside[0] += 1
            peak[0] = max(peak[0], inside[0])
        # Waits (up to 5 s) for a second attempt to be running too, instead of sleeping 0.3 s and
        # hoping a loaded machine starts another meanwhile: serial workers still fail, after 4 × 5 s.
        deadline = time.monotonic() + 5
        while peak[0] < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        with lock:
            inside[0] -= 1

    serve_claims(server, [claim_of(f"p:{i}:0", url=server.url) for i in range(4)])
    runner = Runner(wait_a_bit, server.url, ["a"], n_runners=4, poll_interval_s=0.05)
    run_until(runner, lambda: runner.stats.finished == 4)
    assert peak[0] >= 2


def test_emitters_refuse_bad_rewards_and_calls_outside_a_rollout():
    with pytest.raises(RuntimeError, match="outside a rollout"):
        emit_reward(1.0)
    with pytest.raises(ValueError, match="finite"):
        emit_reward(float("nan"))
    with pytest.raises(ValueError, match="primary_key"):
        emit_reward({"acc": 1.0})


def test_load_agent_takes_a_module_path_or_a_file_path():
    agent = load_agent(f"{ROOT}/examples/python-sandbox/agent.py:SandboxCalculator")
    assert isinstance(agent, LitAgent) and type(agent).__name__ == "SandboxCalculator"
    assert isinstance(load_agent("edge_rollout.runner.agents:LitAgent"), LitAgent)
    with pytest.raises(ValueError, match="module:attr"):
        load_agent("no_colon_here")


def test_the_sandbox_tool_runs_in_its_own_process_and_refuses_code():
    agent_module = __import__("sys").modules[type(load_agent(f"{ROOT}/examples/python-sandbox/agent.py:SandboxCalculator")).__module__]
    assert agent_module.run_in_sandbox("(3 + 4) * 5") == "35"
    assert agent_module.run_in_sandbox("__import__('os').getpid()").startswith("error:")


def test_rollout_info_says_whether_it_trains():
    info = RolloutInfo("r", 1, "r/attempt/1", "runner", "val", {}, None, threading.Event())
    assert info.is_training is False
