"""Unit (fake HTTP server): request shapes, the bearer token, and problem+json errors."""
from __future__ import annotations

import numpy as np
import pytest

from edge_rollout import Client, ConflictError, InvalidInputError, ProblemError, SyncingError, TransportError

ROW = {"prompt": [{"role": "user", "content": "2+2?"}], "reward_model": {"ground_truth": "4"}}


def problem(status: int, code: str, detail: str, path: str | None = None) -> dict:
    body = {"type": f"urn:edge-rollout:problem:{code}", "title": "X", "status": status, "detail": detail, "instance": "/v1/x"}
    if path:
        body["errors"] = [{"path": path, "message": detail}]
    return body


def test_submit_batch_sends_the_given_fields_and_the_bearer_token(server):
    server.route("POST", "/v1/batches", lambda body: (202, {"batch_id": "b1", "rollouts": 2}, {}))
    tree = {"branch_at": [1], "width": 2}
    answer = Client(server.url, token="s3cret").submit_batch([ROW], agent="calculator", n=2, batch_id="b1", max_concurrent=8, tree=tree)
    assert answer == {"batch_id": "b1", "rollouts": 2}
    assert server.bodies("POST", "/v1/batches") == [{"agent": "calculator", "n": 2, "mode": "train", "batch_id": "b1",
                                                     "max_concurrent": 8, "tree": tree, "rows": [ROW]}]
    assert server.requests[0]["headers"]["authorization"] == "Bearer s3cret"


def test_numpy_values_in_rows_are_sent_as_json(server, client):
    server.route("POST", "/v1/batches", lambda body: (202, {}, {}))
    row = {"prompt": np.array([{"role": "user", "content": "hi"}], dtype=object),
           "reward_model": {"ground_truth": np.int64(4)}, "extra_info": {"index": np.int32(3)}}
    client.submit_batch([row], agent="calculator", n=1)
    sent = server.bodies("POST", "/v1/batches")[0]["rows"][0]
    assert sent == {"prompt": [{"role": "user", "content": "hi"}], "reward_model": {"ground_truth": 4}, "extra_info": {"index": 3}}


def test_a_422_raises_invalid_input_with_the_detail_and_field_path(server, client):
    server.route("POST", "/v1/batches", lambda body: (422, problem(422, "invalid_input", "n must be >= 1", "n"), {}))
    with pytest.raises(InvalidInputError) as caught:
        client.submit_batch([ROW], agent="calculator", n=0)
    assert (caught.value.status, caught.value.code, caught.value.path) == (422, "invalid_input", "n")
    assert caught.value.detail == "n must be >= 1" and caught.value.paths == ["n"]
    assert "n must be >= 1" in str(caught.value)


def test_a_409_raises_conflict_and_a_429_carries_retry_after(server, client):
    server.route("POST", "/v1/feed/ack", lambda body: (409, problem(409, "conflict", "no lease x", "lease_id"), {}))
    server.route("GET", "/v1/policy", lambda body: (429, problem(429, "policy_syncing", "syncing"), {"retry-after": "2"}))
    with pytest.raises(ConflictError, match="no lease x") as conflict:
        client.ack("x")
    assert conflict.value.path == "lease_id"
    with pytest.raises(SyncingError) as syncing:
        client.policy()
    assert syncing.value.retry_after == 2.0 and syncing.value.path is None


def test_a_non_json_error_still_raises_a_problem_with_the_text(server, client):
    server.route("GET", "/v1/feed/stats", lambda body: (502, b"upstream exploded", {"content-type": "text/plain"}))
    with pytest.raises(ProblemError, match="upstream exploded") as caught:
        client.feed_stats()
    assert caught.value.status == 502


def test_an_unreachable_server_raises_transport_error(server):
    url = server.url
    server.close()
    with pytest.raises(TransportError, match="failed"):
        Client(url, timeout=2).policy()


def test_options_are_checked_before_any_request(server, client):
    with pytest.raises(ValueError, match="max_groups or max_samples is required"):
        client.pull()
    with pytest.raises(ValueError, match="exactly one of rows and dataset_key"):
        client.submit_batch(None, agent="calculator", n=1)
    with pytest.raises(ValueError, match="url must start with"):
        Client("127.0.0.1:8787")
    assert server.requests == []


def test_pull_asks_for_inline_samples_and_the_lease(server, client, feed):
    client.pull(max_groups=4, min_policy_version=3)
    assert server.bodies("POST", "/v1/feed/pull") == [{"max_groups": 4, "lease_ms": 300000, "inline": True, "min_policy_version": 3}]


def test_pull_passes_a_byte_cap_only_when_asked(server, client, feed):
    client.pull(max_groups=4, max_bytes=8 << 20, format="json")
    assert server.bodies("POST", "/v1/feed/pull") == [{"max_groups": 4, "lease_ms": 300000, "inline": True, "max_bytes": 8 << 20}]


def test_the_weight_sync_handshake_hits_begin_and_end(server, client):
    server.route("POST", "/v1/policy/sync/begin", lambda body: (200, {"policy_version": 3, "syncing": True, "in_flight": 0}, {}))
    server.route("POST", "/v1/policy/sync/end", lambda body: (200, {"policy_version": 4, "previous_version": 3, "syncing": False}, {}))
    assert client.begin_sync(wait_ms=5000)["syncing"] is True
    assert client.end_sync(4)["policy_version"] == 4
    assert server.bodies("POST", "/v1/policy/sync/begin") == [{"wait_ms": 5000}]
    assert server.bodies("POST", "/v1/policy/sync/end") == [{"policy_version": 4}]


def test_report_trainer_puts_the_report_under_the_batch_with_its_id_escaped(server, client):
    server.route("PUT", "/v1/batches/run%3As1/trainer-report", lambda body: (200, {"batch_id": "run:s1"}, {}))
    client.report_trainer("run:s1", 1.5e-6, 2e-8, 512, spanned_responses=3, version_mismatches=0, loss=-0.01)
    assert server.bodies("PUT", "/v1/batches/run%3As1/trainer-report") == [{
        "logprob_agreement": {"max_abs": 1.5e-6, "mean_abs": 2e-8, "tokens": 512},
        "spanned_responses": 3, "version_mismatches": 0, "loss": -0.01}]


def test_abort_sync_posts_to_the_abort_route(server, client):
    server.route("POST", "/v1/policy/sync/abort", lambda body: (200, {"policy_version": 3, "syncing": False}, {}))
    assert client.abort_sync() == {"policy_version": 3, "syncing": False}
    assert server.bodies("POST", "/v1/policy/sync/abort") == [{}]
