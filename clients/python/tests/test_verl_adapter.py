"""Unit (fake HTTP server): EdgeRolloutManager turns a verl generation batch into aligned padded rows."""
from __future__ import annotations

import importlib.machinery
import sys
import types

import numpy as np
import pytest

from edge_rollout import StreamTimeout
from edge_rollout.verl import EdgeRolloutManager, rows_of
from fake_server import group, pulled, sample

ROWS = [{"prompt": [{"role": "user", "content": f"q{r}"}], "data_source": "calc", "ability": "math",
         "reward_model": {"ground_truth": str(r)}, "extra_info": {"index": r}} for r in range(2)]


def verl_batch(rows: list[dict], n: int, **meta) -> dict:
    """verl's generation batch: object columns, each row repeated n times (interleaved), a uid per prompt."""
    columns = {"raw_prompt": [np.array(row["prompt"], dtype=object) for row in rows], "uid": [f"u{r}" for r in range(len(rows))],
               "agent_name": ["tool_agent"] * len(rows), "index": list(range(len(rows))),
               **{key: [row[key] for row in rows] for key in ("data_source", "ability", "reward_model", "extra_info")}}
    non_tensor = {}
    for key, values in columns.items():
        column = np.empty(len(values) * n, dtype=object)
        column[:] = [value for value in values for _ in range(n)]
        non_tensor[key] = column
    return {"non_tensor_batch": non_tensor, "meta_info": {"global_steps": 7, **meta}}


def serve_batch(server, feed, answer):
    """Answers POST /v1/batches and, on the next pull, ``answer(batch_id)`` (a list of pull bodies)."""
    server.route("POST", "/v1/batches", lambda body: (202, {"batch_id": body["batch_id"]}, {}))
    feed.pulls = [lambda body: answer(server.bodies("POST", "/v1/batches")[-1]["batch_id"])]


def manager(client, n=2, **options) -> EdgeRolloutManager:
    options = {"run_id": "run", "timeout": 5, "poll_interval": 0.01, "return_tensors": "np", **options}
    return EdgeRolloutManager(client, "calculator", n, 4, 3, pad_token_id=0, **options)


def full_groups(batch_id: str, rows: int = 2, n: int = 2) -> dict:
    groups = []
    for r in range(rows):
        uid = f"{batch_id}:{r}"
        members = [sample(uid, k, [1, 2], [10 + r, 20 + k], reward=float(k)) for k in reversed(range(n))]  # out of order
        groups.append(group(uid, members))
    return pulled("L1", *groups)


def test_dedupes_verls_repeated_rows_and_returns_one_aligned_row_per_input_row(server, client, feed):
    serve_batch(server, feed, full_groups)
    out = manager(client).generate_sequences(verl_batch(ROWS, 2))
    submitted = server.bodies("POST", "/v1/batches")[0]
    assert (submitted["batch_id"], submitted["n"], submitted["data_manager"]) == ("run-s7-train1", 2, "train")
    assert submitted["rows"] == ROWS  # verl's agent_name / index / uid stay behind
    assert out.non_tensor_batch["rollout_id"].tolist() == ["run-s7-train1:0:0", "run-s7-train1:0:1", "run-s7-train1:1:0", "run-s7-train1:1:1"]
    np.testing.assert_array_equal(out.batch["responses"], [[10, 20, 0], [10, 21, 0], [11, 20, 0], [11, 21, 0]])
    assert out.non_tensor_batch["uid"].tolist() == ["u0", "u0", "u1", "u1"]  # the input's, so batch.union(output) holds
    assert feed.acked == ["L1"]


def test_a_rollout_without_samples_becomes_a_masked_placeholder_row(server, client, feed):
    def answer(batch_id):
        body = full_groups(batch_id)
        body["groups"][1]["members"][0]["samples"] = []
        body["groups"][1]["members"][0]["record_error"] = "no R2 object"
        return body
    serve_batch(server, feed, answer)
    out = manager(client).rollout(ROWS)
    hole = out.non_tensor_batch["rollout_id"].tolist().index(f"{out.meta_info['edge_rollout']['batch_id']}:1:1")
    assert out.batch["attention_mask"][hole].tolist() == [0, 0, 0, 1, 0, 0, 0]
    assert out.batch["response_mask"][hole].tolist() == [0, 0, 0]
    assert out.non_tensor_batch["placeholder"][hole] is True and out.non_tensor_batch["record_error"][hole] == "no R2 object"
    assert out.meta_info["edge_rollout"]["placeholders"] == 1


def test_pulls_name_the_batch_and_its_training_mode_so_no_other_group_is_taken(server, client, feed):
    serve_batch(server, feed, full_groups)
    out = manager(client).generate_sequences(verl_batch(ROWS, 2))
    pulls = server.bodies("POST", "/v1/feed/pull")
    assert pulls and all(body["batch_id"] == [out.meta_info["edge_rollout"]["batch_id"]] and body["training_mode"] == "verl/hybrid" for body in pulls)
    assert "foreign_groups" not in out.meta_info["edge_rollout"]


def test_validation_batches_use_val_n_and_mode_val(server, client, feed):
    serve_batch(server, feed, lambda batch_id: full_groups(batch_id, n=1))
    out = manager(client, n=4, val_n=1).generate_sequences(verl_batch(ROWS, 1, validate=True))
    submitted = server.bodies("POST", "/v1/batches")[0]
    assert (submitted["batch_id"], submitted["n"], submitted["mode"]) == ("run-s7-val1", 1, "val")
    assert len(out) == 2


def test_refuses_a_batch_that_is_neither_groups_of_n_nor_padded_groups(client):
    with pytest.raises(ValueError, match="not a multiple of n=2 plus padding rows"):
        manager(client).generate_sequences(ROWS + [dict(ROWS[0], data_source="other")])
    batch = verl_batch(ROWS, 2)
    batch["non_tensor_batch"]["uid"][1] = "u9"
    with pytest.raises(ValueError, match="uid runs of lengths"):
        manager(client).generate_sequences(batch)


def test_rows_of_reads_verl_columns_as_plain_python():
    rows = rows_of(verl_batch(ROWS[:1], 1))
    assert rows == ROWS[:1] and isinstance(rows[0]["prompt"], list)
    assert rows_of({"non_tensor_batch": {"prompt": np.array(["hi"], dtype=object)}}) == [{"prompt": "hi", "reward_model": {"ground_truth": None}}]
    with pytest.raises(TypeError, match="list of rows, or a batch with non_tensor_batch"):
        rows_of(42)


def fake_module(name: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None)
    module.__dict__.update(attrs)
    return module


def test_returns_a_data_proto_when_verl_and_torch_are_importable(server, client, feed, monkeypatch):
    made = {}

    class DataProto:
        @classmethod
        def from_dict(cls, tensors, non_tensors, meta_info):
            made.update(tensors=tensors, non_tensors=non_tensors, meta_info=meta_info)
            return cls()

    monkeypatch.setitem(sys.modules, "torch", fake_module("torch", from_numpy=lambda a: ("tensor", a), is_tensor=lambda v: isinstance(v, tuple)))
    monkeypatch.setitem(sys.modules, "verl", fake_module("verl", DataProto=DataProto))
    serve_batch(server, feed, full_groups)
    out = EdgeRolloutManager(client, "calculator", 2, 4, 3, pad_token_id=0, run_id="run", timeout=5).generate_sequences(verl_batch(ROWS, 2))
    assert isinstance(out, DataProto)
    assert made["tensors"]["input_ids"][0] == "tensor" and made["tensors"]["input_ids"][1].shape == (4, 7)
    assert made["non_tensors"]["uid"].tolist() == ["u0", "u0", "u1", "u1"] and "timing" in made["meta_info"]


def test_without_an_input_uid_groups_are_n_consecutive_rows_with_edge_rollouts_uids(server, client, feed):
    serve_batch(server, feed, full_groups)
    batch = verl_batch(ROWS, 2)
    del batch["non_tensor_batch"]["uid"]
    out = manager(client).generate_sequences(batch)
    assert out.non_tensor_batch["uid"].tolist() == ["run-s7-train1:0"] * 2 + ["run-s7-train1:1"] * 2


def test_gives_up_after_timeout_with_the_batch_progress(server, client, feed):
    server.route("POST", "/v1/batches", lambda body: (202, {}, {}))
    server.route("GET", "/v1/batches/run-s7-train1", lambda body: (200, {"counts": {"running": 4}}, {}))
    with pytest.raises(StreamTimeout, match=r"batch run-s7-train1: 0/2 groups after 0.2 s; counts \{'running': 4\}"):
        manager(client, timeout=0.2).generate_sequences(verl_batch(ROWS, 2))
