"""End to end: Python runner processes run a batch of external rollouts against the local stack.

Three ``python -m edge_rollout.runner`` processes (4 workers each) run the sandbox example on a
16-row × 4-sample batch. The doomed one starts alone (so the batch cannot drain before it holds a
rollout that has called the model: racing the others for claims made this flaky on a loaded CI
machine) and is killed (SIGKILL) while it holds rollouts; two steady runners then claim side by
side, including the killed runner's rollouts once their leases lapse. Every rollout must end,
the killed runner's rollouts must come back as new attempts (its calls recorded, excluded from
training), the feed must deliver each of the 16 groups once, and the survivors must stop cleanly
on SIGTERM.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid

from edge_rollout import Client
from live_stack import ROOT, ROWS  # the `stack` fixture is conftest.py's session-wide local stack

AGENT = "sandbox-calculator"
EXAMPLE = "examples/python-sandbox/agent.py:SandboxCalculator"


def start_runner(url: str, runner_id: str, log, sandbox_delay_s: float = 0.3) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "clients/python"), "EDGE_ROLLOUT_SANDBOX_DELAY_S": str(sandbox_delay_s)}
    command = [sys.executable, "-m", "edge_rollout.runner", EXAMPLE, "--url", url, "--agent", AGENT, "--runners", "4",
               "--lease-ms", "3000", "--runner-id", runner_id, "--grace", "30", "-v"]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def wait_for(what: str, probe, timeout: float, context=lambda: None):
    """Polls probe until it answers; on timeout the error carries what context() shows then."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}; at that time: {context()}")


def holds_with_calls(client: Client, rollout_id: str, runner_id: str) -> bool:
    record = client.request("GET", f"/v1/rollouts/{rollout_id}")
    lease = record["runner_lease"]
    return bool(lease and lease["runner_id"] == runner_id and any(call["attempt"] == lease["attempt"] for call in record["llm_calls"]))


def runner_view(client: Client, batch_id: str) -> dict[str, dict]:
    return {runner["runner_id"]: runner for runner in client.batch_status(batch_id)["runners"]["runners"]}


def test_three_runner_processes_run_a_batch_through_a_killed_runner(stack):
    if os.environ.get("EDGE_ROLLOUT_REQUIRE_LIVE") == "1":
        import openai  # noqa: F401 - CI installs it: the example must talk to the gateway through the real client
    client, batch_id = Client(stack), f"run-{uuid.uuid4().hex[:8]}"
    assert len(ROWS) >= 16
    client.submit_batch(ROWS[:16], agent=f"external:{AGENT}", n=4, batch_id=batch_id, config={"max_attempts": 3, "rollout_timeout_ms": 600_000})
    logs = {name: tempfile.TemporaryFile(mode="w+") for name in ("doomed", "steady-1", "steady-2")}
    # A slower sandbox keeps each of the doomed runner's rollouts held for seconds, far longer than
    # the gap between seeing one held and the kill.
    runners = {"doomed": start_runner(stack, "doomed", logs["doomed"], sandbox_delay_s=1.0)}
    status = lambda: {"batch": client.batch_status(batch_id)["counts"], "runners": runner_view(client, batch_id)}
    try:
        # Kill the doomed runner mid-rollout: after some rollouts, while it holds one that has called the model.
        wait_for("the doomed runner to finish two rollouts",
                 lambda: (lambda r: r and r["finished"] >= 2)(runner_view(client, batch_id).get("doomed")), 120, status)
        wait_for("the doomed runner to hold a rollout that has called the model",
                 lambda: any(holds_with_calls(client, entry["rollout_id"], "doomed")
                             for entry in client.request("GET", f"/v1/batches/{batch_id}/rollouts?limit=1000")["rollouts"] if entry["status"] == "running"), 120, status)
        runners["doomed"].send_signal(signal.SIGKILL)
        runners["doomed"].wait(timeout=10)
        runners.update({name: start_runner(stack, name, logs[name]) for name in ("steady-1", "steady-2")})

        progress = wait_for("every rollout to end", lambda: (lambda p: p if p["done"] else None)(client.batch_status(batch_id)), 300, status)
        counts = progress["counts"]
        # No faults are injected: the doomed runner's rollouts are offered again, so every one succeeds.
        assert counts["succeeded"] == 64 and counts["failed"] == 0 and counts["cancelled"] == 0, counts

        view = runner_view(client, batch_id)
        assert view["doomed"]["status"] == "lost" and view["doomed"]["lost"] >= 1, view["doomed"]
        assert view["steady-1"]["claimed"] > 0 and view["steady-2"]["claimed"] > 0

        rollouts = client.request("GET", f"/v1/batches/{batch_id}/rollouts?limit=1000")["rollouts"]
        records = [client.request("GET", f"/v1/rollouts/{entry['rollout_id']}") for entry in rollouts]
        assert len(records) == 64 and all(r["status"] in ("succeeded", "failed", "cancelled") for r in records)
        lost = [r for r in records if any(s["name"] == "attempt_lost" and s["attributes"]["runner_id"] == "doomed" for s in r["spans"])]
        assert len(lost) == view["doomed"]["lost"]
        for record in lost:
            lost_attempt = next(s["attributes"]["attempt"] for s in record["spans"] if s["name"] == "attempt_lost")
            assert record["final_attempt"] > lost_attempt and record["status"] == "succeeded"
            assert all(call["excluded_from_training"] for call in record["llm_calls"] if call["attempt"] == lost_attempt)
            assert any(not call["excluded_from_training"] for call in record["llm_calls"])
        assert any(call["attempt"] != r["final_attempt"] for r in lost for call in r["llm_calls"]), "no lost attempt had called the model"

        excluded = sum(call["excluded_from_training"] for r in lost for call in r["llm_calls"])
        print(f"runners: {view}; rollouts lost with the killed runner: {len(lost)}, their excluded calls: {excluded}; counts: {counts}")
        groups = list(client.stream_groups(max_groups=16, limit=16, timeout=120, batch_id=batch_id))
        uids = [group["uid"] for group in groups]
        assert sorted(uids) == sorted(f"{batch_id}:{row}" for row in range(16))
        assert all(len(group["members"]) == 4 for group in groups)
        assert client.pull(max_groups=16, batch_id=batch_id)["lease_id"] is None  # delivered once, all acked

        for name in ("steady-1", "steady-2"):
            runners[name].send_signal(signal.SIGTERM)
        for name in ("steady-1", "steady-2"):
            assert runners[name].wait(timeout=60) == 0
    finally:
        for process in runners.values():
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
        for name, log in logs.items():
            log.seek(0)
            output = log.read()
            if "Traceback" in output:
                print(f"--- runner {name} ---\n{output[-3000:]}")
            log.close()
