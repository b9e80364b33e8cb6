"""The Arrow feed format in the client: decoding without copies, padding from the flat buffers
exactly as from JSON samples, the JSON fallback without pyarrow (warned once)."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow", reason="the Arrow format needs pyarrow (.ci/run installs it)")

from edge_rollout import Client, to_verl_batch  # noqa: E402
from edge_rollout import arrow_feed  # noqa: E402
from edge_rollout.arrow_feed import ARROW_MEDIA_TYPE, SampleRef, decode_arrow_pull  # noqa: E402
from fake_server import FakeFeed, group, pulled, sample as fake_sample  # noqa: E402


def two_pulls(server) -> FakeFeed:
    return FakeFeed(server, [pulled("lease-1", group("g-1", [fake_sample("g-1", 0, [1], [2])])),
                             pulled("lease-2", group("g-2", [fake_sample("g-2", 0, [1], [2])]))])


def sample(uid, k, seg, prompt, response, mask, logprobs, **extra):
    return {"schema_version": 1, "uid": uid, "sample_index": k, "rollout_id": f"{uid}:{k}", "segment_index": seg,
            "prompt_ids": prompt, "response_ids": response, "response_mask": mask, "response_logprobs": logprobs,
            "reward_score": 0.5 * k, "num_turns": 2, "termination_reason": extra.pop("reason", "ENV_DONE"),
            "policy_version": {"start": 1, "end": 2}, "extra_fields": {"trainable": True, **extra}}


#: A multi-turn sample, two drift segments, an untrainable sample, an empty response, long rows to cut.
SAMPLES = [
    sample("g", 0, 0, [1, 2, 3], [10, 11, 20, 21, 12], [1, 1, 0, 0, 1], [-0.5, -0.25, 0.0, 0.0, -1.0]),
    sample("g", 1, 0, [4], [5], [1], [-0.125]),
    sample("g", 1, 1, [9, 9, 9], [6, 7], [1, 1], [-0.1, -0.2]),
    sample("g", 2, 0, [1] * 12, [3] * 9, [1, 1, 0, 0, 0, 1, 0, 0, 0], [-1.0] * 9, trainable=False, reason="MAX_STEPS"),
    sample("g", 3, 0, [7, 8], [], [], [], failed=True, status="failed", reason=None),
    sample("g", 4, 0, list(range(20)), [2] * 12, [0] * 12, [0.0] * 12),
]


def arrow_pull(samples, members, batch_rows=None):
    """An Arrow pull body in the server's layout (sample table + ``edge_rollout.pull`` metadata);
    ``batch_rows`` splits it into record batches of those sizes (as groups read from packs come)."""
    def ragged(key, value_type):
        return pa.array([s[key] for s in samples], pa.list_(pa.field("item", value_type, nullable=False)))
    columns = {
        "uid": pa.array([s["uid"] for s in samples]), "sample_index": pa.array([s["sample_index"] for s in samples], pa.int64()),
        "rollout_id": pa.array([s["rollout_id"] for s in samples]), "segment_index": pa.array([s["segment_index"] for s in samples], pa.int64()),
        "prompt_ids": ragged("prompt_ids", pa.int32()), "response_ids": ragged("response_ids", pa.int32()),
        "response_mask": pa.array([[bool(m) for m in s["response_mask"]] for s in samples], pa.list_(pa.field("item", pa.bool_(), nullable=False))),
        "response_logprobs": ragged("response_logprobs", pa.float64()),
        "reward_score": pa.array([s["reward_score"] for s in samples], pa.float64()), "num_turns": pa.array([s["num_turns"] for s in samples], pa.int64()),
        "termination_reason": pa.array([s["termination_reason"] for s in samples], pa.string()),
        "policy_version_start": pa.array([s["policy_version"]["start"] for s in samples], pa.int64()),
        "policy_version_end": pa.array([s["policy_version"]["end"] for s in samples], pa.int64()),
        "extra_fields": pa.array([json.dumps(s["extra_fields"]) for s in samples]),
    }
    meta = {"lease_id": "lease-1", "lease_expires_at": 1, "policy_version": 2, "dropped_stale": 0, "returned_groups": 0, "samples": len(samples),
            "groups": [{"uid": "g", "batch_id": None, "training_mode": "verl/hybrid", "group_size": len(members), "policy_version_start": 1,
                        "policy_version_end": 2, "partial": False, "deliveries": 1, "members": members}]}
    table = pa.table(columns).replace_schema_metadata({"edge_rollout.pull": json.dumps(meta)})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        start = 0
        for rows in batch_rows or [len(samples)]:
            writer.write_batch(table.slice(start, rows).combine_chunks().to_batches()[0] if rows else table.slice(start, 0).to_batches()[0])
            start += rows
    return sink.getvalue().to_pybytes()


def members_of(samples):
    rows, members = 0, []
    for k in sorted({s["sample_index"] for s in samples}):
        count = sum(1 for s in samples if s["sample_index"] == k)
        members.append({"rollout_id": f"g:{k}", "sample_index": k, "status": "succeeded", "termination_reason": "ENV_DONE", "reward": 1.0,
                        "policy_version_start": 1, "policy_version_end": 2, "key": f"rollouts/g:{k}/record.json", "samples": count, "first_sample": rows})
        rows += count
    members.append({"rollout_id": "g:9", "sample_index": 9, "status": "failed", "termination_reason": "AGENT_ERROR", "reward": None,
                    "policy_version_start": 0, "policy_version_end": 0, "key": "rollouts/g:9/record.json", "samples": 0, "first_sample": rows})
    return members


def test_decodes_each_sample_equal_to_its_json_form_with_views_of_the_body():
    raw = arrow_pull(SAMPLES, members_of(SAMPLES))
    pulled = decode_arrow_pull(raw)
    got = [s.to_dict() for g in pulled["groups"] for m in g["members"] for s in m["samples"]]
    assert got == SAMPLES
    assert [len(m["samples"]) for m in pulled["groups"][0]["members"]] == [1, 2, 1, 1, 1, 0]
    columns = pulled["columns"]
    # Views, not copies: the token buffer belongs to the body pyarrow read.
    assert not columns.response_ids.flags.owndata and columns.response_ids.dtype == np.int32
    assert columns.response_offsets.tolist() == [0, 5, 6, 8, 17, 17, 29]


def test_decodes_a_pull_sent_as_several_record_batches_like_one():
    one = decode_arrow_pull(arrow_pull(SAMPLES, members_of(SAMPLES)))
    several = decode_arrow_pull(arrow_pull(SAMPLES, members_of(SAMPLES), batch_rows=[1, 3, 2]))
    flat = lambda pulled: [s.to_dict() for g in pulled["groups"] for m in g["members"] for s in m["samples"]]  # noqa: E731
    assert flat(several) == flat(one) == SAMPLES
    padded = [to_verl_batch(p["groups"], 16, 16, pad_token_id=0) for p in (one, several)]
    assert all(np.array_equal(padded[0].batch[k], padded[1].batch[k]) for k in padded[0].batch)


@pytest.mark.parametrize("truncation", ["left", "right", "middle"])
@pytest.mark.parametrize("mask_untrainable", [True, False])
def test_pads_from_the_flat_buffers_exactly_as_from_json_samples(truncation, mask_untrainable):
    pulled = decode_arrow_pull(arrow_pull(SAMPLES, members_of(SAMPLES)))
    refs = [s for g in pulled["groups"] for m in g["members"] for s in m["samples"]]
    assert all(isinstance(r, SampleRef) for r in refs)
    options = dict(truncation=truncation, mask_untrainable=mask_untrainable)
    fast = to_verl_batch(pulled["groups"], 8, 8, pad_token_id=0, **options)
    slow = to_verl_batch(SAMPLES, 8, 8, pad_token_id=0, **options)
    assert fast.batch.keys() == slow.batch.keys()
    for key in slow.batch:
        assert fast.batch[key].dtype == slow.batch[key].dtype, key
        np.testing.assert_array_equal(fast.batch[key], slow.batch[key], err_msg=key)
    assert fast.non_tensor_batch.keys() == slow.non_tensor_batch.keys()
    for key in slow.non_tensor_batch:
        assert fast.non_tensor_batch[key].tolist() == slow.non_tensor_batch[key].tolist(), key


def test_a_subset_of_an_arrow_pull_pads_only_those_rows():
    pulled = decode_arrow_pull(arrow_pull(SAMPLES, members_of(SAMPLES)))
    refs = [s for g in pulled["groups"] for m in g["members"] for s in m["samples"]]
    fast = to_verl_batch([refs[3], refs[0]], 16, 16, pad_token_id=0)
    slow = to_verl_batch([SAMPLES[3], SAMPLES[0]], 16, 16, pad_token_id=0)
    for key in slow.batch:
        np.testing.assert_array_equal(fast.batch[key], slow.batch[key], err_msg=key)


def test_pull_asks_for_arrow_and_reads_a_json_answer_from_a_server_without_it(client, server):
    two_pulls(server)
    answer = client.pull(max_groups=1)
    assert ARROW_MEDIA_TYPE in server.requests[-1]["headers"]["accept"]
    assert [g["uid"] for g in answer["groups"]] == ["g-1"]


def test_without_pyarrow_pulls_json_and_warns_once(client, server, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ImportError("no pyarrow here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    monkeypatch.setattr(arrow_feed, "_warned", False)
    two_pulls(server)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = client.pull(max_groups=1)
        second = client.pull(max_groups=1)
    assert [g["uid"] for g in first["groups"] + second["groups"]] == ["g-1", "g-2"]
    assert server.requests[-1]["headers"]["accept"] == "application/json"
    assert len([w for w in caught if "pyarrow is not installed" in str(w.message)]) == 1
    with pytest.raises(ImportError, match="pyarrow"):
        client.pull(max_groups=1, format="arrow")


def test_pull_rejects_an_unknown_format_before_any_request(client, server):
    with pytest.raises(ValueError, match="format must be one of"):
        Client(server.url).pull(max_groups=1, format="parquet")
    assert server.requests == []
