"""Unit (fake HTTP server): when stream_groups acks, and what it does when the consumer stops."""
from __future__ import annotations

import pytest

from edge_rollout import ConflictError, StreamTimeout
from fake_server import pulled


def g(uid: str) -> dict:
    return {"uid": uid, "members": []}


def test_acks_a_pull_when_the_consumer_asks_for_the_group_after_its_last(client, feed):
    feed.pulls = [pulled("L1", g("a"), g("b")), pulled("L2", g("c"))]
    stream = client.stream_groups(max_groups=2, limit=3)
    assert next(stream)["uid"] == "a" and feed.acked == []
    assert next(stream)["uid"] == "b" and feed.acked == []
    assert next(stream)["uid"] == "c" and feed.acked == ["L1"]
    with pytest.raises(StopIteration):
        next(stream)
    assert feed.acked == ["L1", "L2"]


def test_a_for_loop_over_a_limited_stream_acks_every_pull(client, feed):
    feed.pulls = [pulled("L1", g("a"), g("b")), pulled("L2", g("c"))]
    assert [group["uid"] for group in client.stream_groups(limit=3)] == ["a", "b", "c"]
    assert feed.acked == ["L1", "L2"]


def test_a_consumer_that_raises_acks_nothing_so_the_groups_come_back(client, feed):
    feed.pulls = [pulled("L1", g("a"), g("b"))]
    stream = client.stream_groups(limit=2)
    with pytest.raises(RuntimeError):
        for group in stream:
            raise RuntimeError(f"trainer crashed on {group['uid']}")
    stream.close()
    assert feed.acked == []


def test_breaking_after_a_pulls_last_group_acks_nothing(client, feed):
    feed.pulls = [pulled("L1", g("a"), g("b")), pulled("L2", g("c"))]
    stream = client.stream_groups(max_groups=2)
    for group in stream:
        if group["uid"] == "b":
            break
    stream.close()
    assert feed.acked == []


def test_pulls_never_ask_for_more_groups_than_the_limit_leaves(server, client, feed):
    feed.pulls = [pulled("L1", g("a"), g("b")), pulled("L2", g("c"))]
    list(client.stream_groups(max_groups=64, limit=3))
    assert [body["max_groups"] for body in server.bodies("POST", "/v1/feed/pull")] == [3, 1]
    assert all(body["inline"] is True for body in server.bodies("POST", "/v1/feed/pull"))


def test_polls_while_nothing_is_ready_then_times_out(server, client, feed, monkeypatch):
    # A fake clock that only sleeps move: the count of pulls, not the machine's speed, is asserted.
    import edge_rollout.stream as stream
    now = [0.0]
    monkeypatch.setattr(stream.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(stream.time, "sleep", lambda seconds: now.__setitem__(0, now[0] + seconds))
    with pytest.raises(StreamTimeout, match="no group arrived within 0.3 s"):
        list(client.stream_groups(limit=1, timeout=0.3, poll_interval=0.1))
    assert len(server.bodies("POST", "/v1/feed/pull")) == 4  # at 0, 0.1, 0.2 and 0.3 s


def test_waits_through_empty_pulls_until_a_group_arrives(client, feed):
    empty = pulled(None)  # nothing ready
    feed.pulls = [empty, empty, pulled("L1", g("a"))]
    assert [group["uid"] for group in client.stream_groups(limit=1, poll_interval=0.01)] == ["a"]
    assert feed.acked == ["L1"]


def test_an_expired_lease_raises_conflict_from_next(client, feed):
    feed.pulls = [pulled("L1", g("a")), pulled("L2", g("b"))]
    feed.refuse.add("L1")
    stream = client.stream_groups(limit=2)
    assert next(stream)["uid"] == "a"
    with pytest.raises(ConflictError, match="lease L1 expired") as caught:
        next(stream)
    assert caught.value.path == "lease_id"


def test_options_are_checked_when_called(client):
    with pytest.raises(ValueError, match="limit must be >= 1"):
        client.stream_groups(limit=0)
    with pytest.raises(ValueError, match="max_groups or max_samples is required"):
        client.stream_groups(max_groups=None)


def dropped(uid: str) -> dict:
    return {"uid": uid, "batch_id": "b", "training_mode": "verl/hybrid", "reason": "stale", "group_size": 2, "arrived": 2,
            "max_staleness": 0, "policy_version_start": 1, "policy_version_end": 1, "policy_version": 2, "dropped_at": 0}


def test_groups_the_feed_dropped_are_reported_once_and_count_toward_the_limit(client, feed):
    # The feed repeats a batch's dropped groups on every pull naming it; the stream reports each once.
    feed.pulls = [{**pulled("L1", g("a")), "dropped_groups": [dropped("b")]},
                  {**pulled(None), "dropped_groups": [dropped("b"), dropped("c")]}]
    seen: list[str] = []
    groups = list(client.stream_groups(limit=3, batch_id="b", timeout=5, on_dropped=lambda group: seen.append(group["uid"])))
    assert [group["uid"] for group in groups] == ["a"] and seen == ["b", "c"]
    assert feed.acked == ["L1"] and feed.pulls == []


def test_without_a_callback_a_dropped_group_is_a_warning(client, feed):
    feed.pulls = [{**pulled(None), "dropped_groups": [dropped("b")]}]
    with pytest.warns(RuntimeWarning, match=r"dropped group b of batch b \(stale: sampled at policy version 1, verl/hybrid allows 0 behind version 2\)"):
        assert list(client.stream_groups(limit=1, batch_id="b", timeout=5)) == []
