"""Integration: the client against the real local stack (the Worker on Miniflare's API + the vLLM simulator).

The ``stack`` fixture (conftest.py, live_stack.py) starts it once per session.
"""
from __future__ import annotations

import subprocess
import sys
import time
import uuid

import numpy as np
import pytest

from edge_rollout import Client, ConflictError, InvalidInputError, to_verl_batch
from live_stack import ROOT, ROWS, wait_done


def test_a_tiny_batch_round_trips_from_submit_to_padded_arrays(stack):
    client, batch_id = Client(stack), f"py-{uuid.uuid4().hex[:8]}"
    assert client.submit_batch(ROWS[:2], agent="calculator", n=2, batch_id=batch_id)["rollouts"] == 4
    assert wait_done(client, batch_id)["counts"]["succeeded"] == 4
    # Filtered by batch: the session's stack is shared, and other files' groups may be in the feed.
    groups = list(client.stream_groups(max_groups=2, limit=2, timeout=60, batch_id=batch_id))
    assert sorted(g["uid"] for g in groups) == [f"{batch_id}:0", f"{batch_id}:1"]
    out = to_verl_batch(groups, prompt_length=512, response_length=256, pad_token_id=0)
    assert out.batch["input_ids"].shape == (4, 768) and len(out) == 4
    rewards = [s["reward_score"] for g in groups for m in g["members"] for s in m["samples"]]
    np.testing.assert_allclose(out.batch["rm_scores"].sum(axis=1), rewards)
    assert np.all(out.batch["response_mask"] <= out.batch["attention_mask"][:, 512:])
    assert np.all(np.diff(out.batch["position_ids"], axis=1) >= 0)
    assert client.pull(max_groups=1, batch_id=batch_id)["lease_id"] is None  # every lease was acked


def test_pull_and_ack_answer_as_the_api_documents(stack):
    client, batch_id = Client(stack), f"py-{uuid.uuid4().hex[:8]}"
    client.submit_batch(ROWS[2:3], agent="calculator", n=1, batch_id=batch_id)
    wait_done(client, batch_id)
    pulled = client.pull(max_groups=4, lease_ms=60_000, batch_id=batch_id)
    assert [g["uid"] for g in pulled["groups"]] == [f"{batch_id}:0"]
    assert client.ack(pulled["lease_id"])["acked_groups"] == 1
    assert client.ack(pulled["lease_id"])["already"] is True


def test_a_bad_batch_raises_with_the_problem_detail_and_field_path(stack):
    with pytest.raises(InvalidInputError) as caught:
        Client(stack).submit_batch(ROWS[:1], agent="calculator", n=0)
    assert caught.value.status == 422 and caught.value.path == "n" and "n must be >= 1" in caught.value.detail


def test_the_weight_sync_handshake_moves_the_policy_version(stack):
    client = Client(stack)
    version = client.policy()["policy_version"]
    assert client.begin_sync(wait_ms=1_000)["syncing"] is True
    assert client.end_sync(version + 1)["policy_version"] == version + 1
    with pytest.raises(ConflictError) as caught:
        client.end_sync(version + 2)
    assert caught.value.path == "policy_version"


def test_a_batch_dropped_as_stale_ends_its_stream_at_once_with_each_group_reported(stack):
    # verl/hybrid allows no version behind: a weight sync between the rollouts and the pull makes
    # the feed drop both groups, and the stream waiting for the batch must learn so, not time out.
    client, batch_id = Client(stack), f"py-{uuid.uuid4().hex[:8]}"
    client.submit_batch(ROWS[:2], agent="calculator", n=2, batch_id=batch_id, training_mode="verl/hybrid")
    assert wait_done(client, batch_id)["counts"]["succeeded"] == 4
    version = client.policy()["policy_version"]
    client.begin_sync(wait_ms=5_000)
    client.end_sync(version + 1)
    dropped: list[dict] = []
    started = time.monotonic()
    timeout = 60
    assert list(client.stream_groups(max_groups=2, limit=2, timeout=timeout, batch_id=batch_id, on_dropped=dropped.append)) == []
    # Well before the stream's timeout (a loaded machine is slow, not 30 s slow): it learned, not waited.
    assert time.monotonic() - started < timeout / 2
    assert sorted(group["uid"] for group in dropped) == [f"{batch_id}:0", f"{batch_id}:1"]
    assert all((g["reason"], g["training_mode"], g["policy_version"], g["arrived"]) == ("stale", "verl/hybrid", version + 1, 2) for g in dropped)


def test_the_verl_example_runs_one_training_step_and_exits_0(stack):
    run = subprocess.run([sys.executable, "examples/verl/one_step.py", "--url", stack, "--rows", "4", "--n", "2", "--timeout", "120"],
                         cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    assert "responses          (8, 256)" in run.stdout and "mean reward" in run.stdout
