"""Integration: the client's 429 + Retry-After and expired-lease paths against the real local stack.

The same paths are unit-tested against a fake server (test_client.py, test_stream.py); here the
Worker, its policy object and its trainer feed give the answers (the `stack` fixture is
conftest.py's session-wide stack; each test uses its own batch and ends its weight sync).
"""
from __future__ import annotations

import time
import uuid

import pytest

from edge_rollout import Client, ConflictError, SyncingError
from live_stack import ROWS, wait_done

CHAT = {"model": "policy", "messages": [{"role": "user", "content": "What is 6 * 7?"}]}


def ready_groups(client: Client, batch_id: str, count: int, lease_ms: int) -> dict:
    """Pulls until `count` groups of `batch_id` are leased together (results reach the feed through a queue).

    Only this batch's groups are pulled: the session's stack is shared, and acking another file's
    groups to get them out of the way made those files pass only when they ran first.
    """
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pulled = client.pull(max_groups=count, lease_ms=lease_ms, batch_id=batch_id)
        if len(pulled["groups"]) == count:
            return pulled
        # Some of them only: let that lease lapse (they come back), then try again.
        time.sleep(lease_ms / 1000 + 0.25 if pulled["lease_id"] else 0.25)
    raise AssertionError(f"{count} groups of {batch_id} never became ready")


def test_a_weight_sync_makes_the_gateway_answer_429_with_retry_after_as_a_syncing_error(stack):
    client = Client(stack)
    created = client.request("POST", "/v1/rollouts", {"agent": "external", "task": {"problem": "What is 6 * 7?"}})
    llm = Client(created["llm"]["base_url"], token=created["llm"]["api_key"])
    version = client.policy()["policy_version"]
    assert client.begin_sync()["syncing"] is True
    try:
        with pytest.raises(SyncingError) as refused:
            llm.request("POST", "/chat/completions", CHAT)
        assert refused.value.status == 429
        assert refused.value.retry_after is not None and refused.value.retry_after > 0
        assert refused.value.code == "policy_syncing"
    finally:
        client.end_sync(version + 1)
    reply = llm.request("POST", "/chat/completions", CHAT)
    assert reply["choices"][0]["message"]["content"]
    assert client.policy()["policy_version"] == version + 1


def test_acking_an_expired_lease_raises_conflict_and_its_groups_come_back(stack):
    client, batch_id = Client(stack), f"py-lease-{uuid.uuid4().hex[:8]}"
    client.submit_batch(ROWS[:2], agent="calculator", n=2, batch_id=batch_id)
    assert wait_done(client, batch_id)["counts"]["succeeded"] == 4
    first = ready_groups(client, batch_id, 2, lease_ms=1000)
    time.sleep(1.2)  # past the lease: waiting, not asserting a duration
    second = client.pull(max_groups=2, lease_ms=60_000, batch_id=batch_id)
    # Each group once more than in the lapsed lease.
    assert sorted((g["uid"], g["deliveries"]) for g in second["groups"]) == sorted((g["uid"], g["deliveries"] + 1) for g in first["groups"])
    assert sorted(g["uid"] for g in second["groups"]) == [f"{batch_id}:0", f"{batch_id}:1"]
    with pytest.raises(ConflictError, match="expired"):
        client.ack(first["lease_id"])
    assert client.ack(second["lease_id"])["acked_groups"] == 2


def test_stream_groups_raises_conflict_from_next_when_its_lease_expired_while_consuming(stack):
    client, batch_id = Client(stack), f"py-stream-{uuid.uuid4().hex[:8]}"
    client.submit_batch(ROWS[:2], agent="calculator", n=2, batch_id=batch_id)
    wait_done(client, batch_id)
    ready_groups(client, batch_id, 2, lease_ms=1000)  # wait until both are ready, then let that lease lapse
    time.sleep(1.2)
    stream = client.stream_groups(max_groups=2, lease_ms=1000, batch_id=batch_id)
    assert next(stream)["uid"].startswith(batch_id)
    assert next(stream)["uid"].startswith(batch_id)
    time.sleep(1.2)  # the consumer is slower than its lease
    with pytest.raises(ConflictError, match="expired"):
        next(stream)
    # Nothing was lost: the groups are delivered again.
    again = client.pull(max_groups=2, lease_ms=60_000, batch_id=batch_id)
    assert sorted(g["uid"] for g in again["groups"]) == [f"{batch_id}:0", f"{batch_id}:1"]
    client.ack(again["lease_id"])
