"""Unit (fake HTTP server): the manager driven through RayPPOTrainer's own call sequence.

Each test replays what ``verl/trainer/ppo/ray_trainer.py`` does at the commit pinned in
docs/verl.md (line numbers in the comments) with ``MiniDataProto`` (verl_fakes.py) in place of
``DataProto``, and asserts every key fit() reads from the output.
"""
from __future__ import annotations

import time
import uuid
from copy import deepcopy
from types import SimpleNamespace as NS

import numpy as np
import pytest

from edge_rollout import GroupsDropped
from edge_rollout.verl.agent_loop_manager import EdgeRolloutAgentLoopManager
from edge_rollout.verl.trainer import bracket_weight_sync
from verl_fakes import FakeEdgeRollout, MiniDataProto, objects, pad_to_divisor, unpad

PROMPT, RESPONSE = 6, 4
#: Keys fit() and its helpers read from the batch after ``batch.union(gen_batch_output)``:
#: response_mask (1429-1430), attention_mask (1441), multi_modal_inputs (1461), rm_scores
#: (505-506), rollout_log_probs (1527, 1571), responses/prompts (_validate 615, 623), uid (1114, adv).
TENSOR_KEYS = {"prompts", "responses", "response_mask", "input_ids", "attention_mask", "position_ids", "rm_scores", "rollout_log_probs"}


class FakeReplica:
    """A rollout replica as the checkpoint manager and fit() drive it (records its calls)."""

    def __init__(self, address: str):
        self._server_address, self.calls = address, []

    async def start_profile(self, **kwargs):
        self.calls.append(("start_profile", kwargs))

    async def stop_profile(self):
        self.calls.append(("stop_profile", {}))

    async def clear_kv_cache(self):
        self.calls.append(("clear_kv_cache", {}))


def verl_config(n: int = 2, val_n: int = 1, num_workers: int = 4, do_sample: bool = True) -> NS:
    rollout = NS(n=n, prompt_length=PROMPT, response_length=RESPONSE, temperature=0.9, top_p=0.95,
                 val_kwargs=NS(n=val_n, temperature=0.5, top_p=1.0, do_sample=do_sample), agent=NS(num_workers=num_workers))
    return NS(actor_rollout_ref=NS(rollout=rollout, model=NS(path="Qwen/Qwen3-0.6B")), data=NS(truncation="left"),
              edge_rollout={"agent": "calculator", "run_id": "run", "timeout": 5, "pad_token_id": 0})


@pytest.fixture
def edge(server):
    return FakeEdgeRollout(server)


def make_manager(client, config, replicas=None):
    manager = EdgeRolloutAgentLoopManager(config=config, worker_group=None, rollout_resource_pool=None, rm_resource_pool=None,
                                          replicas=replicas if replicas is not None else [FakeReplica("10.0.0.1:8000")], client=client)
    manager.poll_interval, manager.return_tensors = 0.01, "np"
    return manager


def dataloader_batch(rows: int) -> MiniDataProto:
    """One batch as ``DataProto.from_single_dict(batch_dict)`` gives it in agent-loop mode."""
    return MiniDataProto(non_tensor_batch={
        "raw_prompt": objects([[{"role": "user", "content": f"q{r}"}] for r in range(rows)]),
        "data_source": objects(["calc"] * rows), "reward_model": objects([{"ground_truth": str(r)} for r in range(rows)]),
        "extra_info": objects([{"index": r} for r in range(rows)]), "agent_name": objects(["tool_agent"] * rows)})


def gen_batch_of(batch: MiniDataProto) -> MiniDataProto:
    """``_get_gen_batch`` in async mode (536-551): the generation batch keeps every column."""
    return MiniDataProto(non_tensor_batch={k: v.copy() for k, v in batch.non_tensor_batch.items()})


def test_the_hook_builds_the_manager_and_points_the_policy_at_verls_vllm_servers(server, client, edge):
    manager = make_manager(client, verl_config(), [FakeReplica("10.0.0.1:8000"), FakeReplica("http://10.0.0.2:8000")])
    assert manager.server_addresses == ["10.0.0.1:8000", "http://10.0.0.2:8000"]
    (put,) = server.bodies("PUT", "/v1/policy")
    assert put == {"backend": {"name": "vllm", "replicas": ["http://10.0.0.1:8000", "http://10.0.0.2:8000"]}, "model": "Qwen/Qwen3-0.6B"}


def test_a_train_step_with_profiling_unions_into_the_repeated_batch_and_carries_every_key_fit_reads(client, edge):
    replica = FakeReplica("10.0.0.1:8000")
    manager, n = make_manager(client, verl_config(n=3), [replica]), 3
    batch = dataloader_batch(2)
    batch.meta_info["temperature"] = 0.9
    batch.non_tensor_batch["uid"] = objects([str(uuid.uuid4()) for _ in range(2)])  # 1374-1376
    gen_batch = gen_batch_of(batch)
    gen_batch.meta_info["global_steps"] = 5  # 1381
    gen_batch_output = gen_batch.repeat(n, interleave=True)  # 1382-1384
    manager.start_profile(global_step=5)  # 1394-1395
    gen_batch_output = manager.generate_sequences(gen_batch_output)  # 1396
    manager.stop_profile()  # 1398-1399
    timing_raw = dict(gen_batch_output.meta_info["timing"])  # 1401-1402
    gen_batch_output.meta_info.pop("timing", None)
    batch = batch.repeat(n, interleave=True).union(gen_batch_output)  # 1436-1437
    assert TENSOR_KEYS <= set(batch.batch) and len(batch) == 6
    assert all(mmi == {} for mmi in batch.non_tensor_batch["multi_modal_inputs"])  # 1461-1464
    assert batch.non_tensor_batch["__num_turns__"].tolist() == [4] * 6  # sample num_turns 2 model calls → 2 + 1 + 1
    np.testing.assert_array_equal(batch.batch["responses"][:3, :2], [[10, 20], [10, 21], [10, 22]])
    # Only durations ride in timing (logged as timing_s/*); the counts are in meta and the manager's step counts.
    assert set(timing_raw) == {"edge_rollout/generate_sequences", "edge_rollout/wait_s"} and timing_raw["edge_rollout/generate_sequences"] > 0
    assert batch.meta_info["edge_rollout"]["rollouts"] == 6 and batch.meta_info["edge_rollout"]["padding_rows"] == 0
    step = manager.step_counts.take()
    assert step["edge_rollout/rollouts"] == 6.0 and step["edge_rollout/generate_calls"] == 1.0 and manager.step_counts.take() == {}
    assert replica.calls == [("start_profile", {"global_step": 5}), ("stop_profile", {})]
    (submitted,) = edge.submitted()
    assert (submitted["batch_id"], submitted["n"], len(submitted["rows"]), submitted["config"]) == ("run-s5-train1", 3, 2, {"temperature": 0.9, "top_p": 0.95})
    assert submitted["series"] == "run-train"  # the run view lists every step of the run under one series


@pytest.mark.parametrize("val_n, rows, num_workers", [(1, 3, 4), (2, 3, 4), (3, 2, 4), (3, 1, 8)])
def test_validation_padding_rows_are_answered_without_rollouts_and_unpad_cleanly(client, edge, val_n, rows, num_workers):
    manager = make_manager(client, verl_config(val_n=val_n, num_workers=num_workers, do_sample=False))
    test_batch = dataloader_batch(rows)
    test_batch.non_tensor_batch["uid"] = objects([str(uuid.uuid4()) for _ in range(rows)])  # 568-571
    test_batch = test_batch.repeat(val_n, interleave=True)  # 574-576
    test_gen_batch = gen_batch_of(test_batch)
    test_gen_batch.meta_info = {"eos_token_id": 2, "pad_token_id": 0, "recompute_log_prob": False, "do_sample": False, "validate": True, "global_steps": 0}
    padded, pad_size = pad_to_divisor(test_gen_batch, num_workers)  # 598-604
    output = unpad(manager.generate_sequences(padded), pad_size)  # 608-611
    test_batch = test_batch.union(output)  # 618
    (submitted,) = edge.submitted()
    assert (len(submitted["rows"]), submitted["n"], submitted["mode"]) == (rows, val_n, "val")
    assert submitted["config"] == {"temperature": 0.0, "top_p": 1.0}  # val_kwargs, greedy with do_sample=False
    assert len(test_batch) == rows * val_n and test_batch.batch["prompts"].shape == (rows * val_n, PROMPT)
    assert [r.rsplit(":", 2)[1] for r in test_batch.non_tensor_batch["rollout_id"]] == [str(r) for r in range(rows) for _ in range(val_n)]


def test_remax_gets_its_own_greedy_batch_and_both_outputs_union_into_the_batch(client, edge):
    manager, n = make_manager(client, verl_config(n=2)), 2
    batch = dataloader_batch(2)
    batch.non_tensor_batch["uid"] = objects(["u0", "u1"])
    gen_batch = gen_batch_of(batch)
    gen_batch.meta_info["global_steps"] = 9
    gen_batch_output = manager.generate_sequences(gen_batch.repeat(n, interleave=True))
    gen_batch_output.meta_info.pop("timing", None)
    gen_baseline_batch = deepcopy(gen_batch)  # 1407-1408
    gen_baseline_batch.meta_info["do_sample"] = False
    gen_baseline_output = manager.generate_sequences(gen_baseline_batch)  # 1416
    batch = batch.union(gen_baseline_output)  # 1420
    batch.pop(batch_keys=list(gen_baseline_output.batch.keys()))  # 1431-1433
    batch = batch.repeat(n, interleave=True).union(gen_batch_output)  # 1436-1437: no column collides
    train, greedy = edge.submitted()
    assert (train["batch_id"], train["n"]) == ("run-s9-train1", 2)
    assert (greedy["batch_id"], greedy["n"], greedy["config"]["temperature"]) == ("run-s9-greedy2", 1, 0.0)
    assert set(gen_baseline_output.non_tensor_batch) == {"uid"} and len(gen_baseline_output) == 2
    assert TENSOR_KEYS <= set(batch.batch) and batch.non_tensor_batch["uid"].tolist() == ["u0", "u0", "u1", "u1"]


def test_every_weight_update_is_bracketed_by_sync_begin_and_end_with_the_next_version(server, client, edge):
    calls = []
    checkpoint_manager = NS(sleep_replicas=lambda: calls.append("sleep"), update_weights=lambda: calls.append("update"))
    bracket = bracket_weight_sync(checkpoint_manager, client, wait_ms=1_000)
    manager = make_manager(client, verl_config())
    checkpoint_manager.update_weights()  # 1324: before training
    batch = dataloader_batch(1)
    batch.non_tensor_batch["uid"] = objects(["u0"])
    out = manager.generate_sequences(gen_batch_of(batch).repeat(2, interleave=True))
    checkpoint_manager.sleep_replicas()  # 1397: after rollouts
    checkpoint_manager.update_weights()  # 1610-1611: after the actor update
    assert calls == ["update", "sleep", "update"] and bracket.versions == [4, 5]
    assert [r["path"].rsplit("/", 1)[1] for r in server.requests if "/sync/" in r["path"]] == ["begin", "end", "begin", "end"]
    assert server.bodies("POST", "/v1/policy/sync/end") == [{"policy_version": 4}, {"policy_version": 5}]
    assert len(out) == 2 and not bracket.open


def test_clear_kv_cache_reaches_every_replica(client, edge):
    replicas = [FakeReplica("a:1"), FakeReplica("b:1")]
    make_manager(client, verl_config(), replicas).clear_kv_cache()
    assert [r.calls for r in replicas] == [[("clear_kv_cache", {})]] * 2


def test_the_hook_refuses_a_config_without_an_agent(client):
    config = verl_config()
    config.edge_rollout = {"url": "http://127.0.0.1:1"}
    with pytest.raises(ValueError, match="edge_rollout.agent is required"):
        EdgeRolloutAgentLoopManager(config, None, None, None, replicas=[], client=client)


def test_torch_tensors_come_out_with_verls_dtypes(client, edge):
    torch = pytest.importorskip("torch", reason="torch (CPU) proves the tensor path; .ci/run installs it")
    manager = make_manager(client, verl_config())
    manager.return_tensors = "pt"
    batch = dataloader_batch(1)
    batch.non_tensor_batch["uid"] = objects(["u0"])
    out = manager.generate_sequences(gen_batch_of(batch).repeat(2, interleave=True))
    assert out.batch["input_ids"].dtype == torch.int64 and out.batch["rm_scores"].dtype == torch.float32
    assert tuple(out.batch["attention_mask"].shape) == (2, PROMPT + RESPONSE)
    assert torch.equal(out.batch["rm_scores"].sum(-1), torch.tensor([0.0, 1.0]))


@pytest.mark.parametrize("on_dropped", ["mask", "raise"])
def test_a_group_the_feed_drops_as_stale_ends_the_call_at_once_masked_or_raised(server, client, on_dropped):
    # The feed reports row 1's group dropped (verl/hybrid, one version behind): the call must not
    # wait out its timeout for a group that will never come. The timeout is 60 s here and the bound
    # half of it, so a loaded machine cannot fail the test while a wait for the timeout still does.
    FakeEdgeRollout(server, dropped_rows=frozenset({1}))
    config = verl_config(n=2)
    config.edge_rollout = {**config.edge_rollout, "on_dropped": on_dropped, "timeout": 60}
    manager = make_manager(client, config)
    batch = dataloader_batch(3)
    batch.non_tensor_batch["uid"] = objects([str(uuid.uuid4()) for _ in range(3)])
    gen_batch = gen_batch_of(batch).repeat(2, interleave=True)
    gen_batch.meta_info["global_steps"] = 1
    started = time.monotonic()
    if on_dropped == "raise":
        with pytest.raises(GroupsDropped, match=r"dropped 1 of 3 groups as stale .*run-s1-train1:1.*verl/hybrid allows 0 behind version 3") as raised:
            manager.generate_sequences(gen_batch)
        assert [group["uid"] for group in raised.value.groups] == ["run-s1-train1:1"]
    else:
        with pytest.warns(RuntimeWarning, match="dropped 1 of 3 groups as stale"):
            out = manager.generate_sequences(gen_batch)
        mask = np.asarray(out.batch["response_mask"])
        assert mask[2:4].sum() == 0 and mask[:2].sum() > 0 and mask[4:].sum() > 0  # row 1's two samples are placeholders
        assert out.non_tensor_batch["uid"].tolist() == batch.repeat(2, interleave=True).non_tensor_batch["uid"].tolist()
        counts = out.meta_info["edge_rollout"]
        assert (counts["dropped_groups"], counts["placeholders"], counts["failed"]) == (1, 2, 0)
        assert "edge_rollout/dropped_groups" not in out.meta_info["timing"] and manager.step_counts.take()["edge_rollout/dropped_groups"] == 1.0
    assert time.monotonic() - started < config.edge_rollout["timeout"] / 2
