"""Unit (fake HTTP server): every drift segment of a rollout trained through fit()'s call sequence.

``FitReplay`` replays ``RayPPOTrainer.fit`` from ``generate_sequences`` to ``compute_advantage``
at the commit pinned in docs/verl.md (line numbers in the comments), with ``MiniDataProto`` for
``DataProto`` and verl's GRPO outcome advantage re-stated (core_algos.py:267-330). The trainer under
test is ``DriftSegmentsTrainerMixin`` over that replay, as ``EdgeRolloutTrainer`` is over verl's.
"""
from __future__ import annotations

import uuid
from types import SimpleNamespace as NS

import numpy as np
import pytest

from edge_rollout.verl.drift_segments import EARLIER_SEGMENT, EARLIER_SEGMENTS, DriftSegmentsTrainerMixin, minimal_batch_divisor
from edge_rollout.verl.trainer import wire_trainer
from fake_server import pulled, sample
from test_verl_trainer_contract import FakeReplica, dataloader_batch, gen_batch_of, make_manager, verl_config
from grpo_reference import grpo_outcome_advantage
from verl_fakes import FakeEdgeRollout, objects, stand_in_packages

#: Rollout (row, sample) → how many segments it has; the others have one.
SEGMENTS = {(0, 1): 3, (1, 0): 2}


class SegmentedEdgeRollout(FakeEdgeRollout):
    """Answers every rollout with ``SEGMENTS`` drift segments: each re-tokenized (its own prompt)
    with 3 model tokens then 1 tool token; reward ``k`` on every segment, as the sample builder sets it."""

    def _pull(self, body: dict) -> tuple:
        (batch_id,) = body["batch_id"]
        submitted = self.batches.pop(batch_id, None)
        if submitted is None:
            return 200, {"lease_id": None, "lease_expires_at": None, "policy_version": self.version, "dropped_stale": 0, "groups": []}, {}
        groups = []
        for r in range(len(submitted["rows"])):
            uid = f"{batch_id}:{r}"
            members = []
            for k in range(submitted["n"]):
                parts = [dict(sample(uid, k, [1, 2, 3 + s], [40 + s, 41 + s, 42 + s, 9], reward=float(k)),
                              segment_index=s, response_mask=[1, 1, 1, 0]) for s in range(SEGMENTS.get((r, k), 1))]
                members.append({"rollout_id": f"{uid}:{k}", "sample_index": k, "status": "succeeded", "termination_reason": "ENV_DONE",
                                "reward": float(k), "policy_version_start": 0, "policy_version_end": 0, "samples": parts})
            groups.append({"uid": uid, "training_mode": "verl/hybrid", "group_size": submitted["n"], "policy_version_start": 0,
                           "policy_version_end": 0, "partial": False, "deliveries": 1, "members": members})
        return 200, pulled(f"L-{batch_id}", *groups), {}


class FitReplay:
    """``RayPPOTrainer.fit``'s training step from generation to advantages (ray_trainer.py:1371-1594)."""

    def __init__(self, config, manager, module):
        self.config, self.async_rollout_manager, self.module = config, manager, module
        self.checkpoint_manager = NS(sleep_replicas=lambda: None, update_weights=lambda: None)

    def _compute_or_extract_reward(self, batch, reward_fn=None, reward_for_val=False, sum_reward=False):
        return batch.batch["rm_scores"], {}  # rm_scores present: extracted as is (ray_trainer.py:505-516)

    def fit(self):
        batch = dataloader_batch(2)
        batch.meta_info["temperature"] = 0.9
        batch.non_tensor_batch["uid"] = objects([str(uuid.uuid4()) for _ in range(2)])  # 1374-1376
        gen_batch = gen_batch_of(batch)
        gen_batch.meta_info["global_steps"] = 1
        n = self.config.actor_rollout_ref.rollout.n
        output = self.async_rollout_manager.generate_sequences(gen_batch.repeat(n, interleave=True))  # 1382-1396
        self.timing = output.meta_info.pop("timing")  # 1401-1402
        batch = batch.repeat(n, interleave=True).union(output)  # 1436-1437
        batch.meta_info["global_token_num"] = np.asarray(batch.batch["attention_mask"]).sum(-1).tolist()  # 1458
        reward_tensor, _ = self._compute_or_extract_reward(batch, reward_fn=None, reward_for_val=False)  # 1482-1484
        batch.batch["token_level_scores"] = reward_tensor  # 1552
        batch.batch["token_level_rewards"] = batch.batch["token_level_scores"]  # 1564
        self.batch = self.module.compute_advantage(batch, adv_estimator="grpo", num_repeat=n)  # 1586-1594
        self.metrics = self.module.compute_data_metrics(batch=self.batch, use_critic=False)  # 1682, by name
        return self.batch


class Trainer(DriftSegmentsTrainerMixin, FitReplay):
    """What ``EdgeRolloutTrainer`` is over verl's trainer, here over the replay."""


def trainer_for(client, n_gpus=4, async_reward=False):
    config = verl_config(n=2)
    config.trainer = NS(n_gpus_per_node=n_gpus, nnodes=1)
    config.reward_model = NS(launch_reward_fn_async=async_reward)
    trainer = Trainer(config, make_manager(client, config, [FakeReplica("10.0.0.1:8000")]),
                      NS(compute_advantage=grpo_outcome_advantage, compute_data_metrics=lambda batch, use_critic: {}))
    trainer.advantage_module = trainer.module
    wire_trainer(trainer)
    return trainer


@pytest.fixture
def edge(server):
    return SegmentedEdgeRollout(server)


def test_every_segment_is_trained_with_its_rollouts_row_reward_once_and_advantage_per_rollout(client, edge):
    trainer = trainer_for(client)
    batch = trainer.fit()
    flags = batch.non_tensor_batch[EARLIER_SEGMENT]
    # 4 rollouts answer their rows; 2 + 1 earlier segments appended; 1 filler to a multiple of 4 GPUs.
    assert len(batch) == 8 and flags.tolist() == [False] * 4 + [True] * 4 and trainer.last_expansion == {"segments": 3, "fillers": 1}
    mask = np.asarray(batch.batch["response_mask"])
    assert mask.sum() == 3 * (4 + 3) and mask[7].sum() == 0  # every model token of every segment; the filler masked
    rollout_ids = batch.non_tensor_batch["rollout_id"]
    row_of = {rid: i for i, rid in enumerate(rollout_ids[:4])}
    for row in range(4, 7):  # an earlier segment is its rollout's input row with its own generation
        source = row_of[rollout_ids[row]]
        for key in ("uid", "data_source", "reward_model", "extra_info", "multi_modal_inputs"):
            assert batch.non_tensor_batch[key][row] == batch.non_tensor_batch[key][source], key
        assert batch.batch["prompts"][row][-1] != batch.batch["prompts"][source][-1]  # re-tokenized: not the last segment's prompt
    assert [int(s) for s in batch.non_tensor_batch["segment_index"][4:7]] == [0, 1, 0]
    scores = np.asarray(batch.batch["token_level_scores"]).sum(-1)
    assert scores[4:].tolist() == [0.0] * 4 and scores[:4].tolist() == [0.0, 1.0, 0.0, 1.0]  # the reward counts once per rollout
    advantages = np.asarray(batch.batch["advantages"])
    # GRPO over one row per rollout: each group is rewards {0, 1} → ∓0.7071 on model tokens.
    per_row = advantages.sum(-1) / np.maximum(mask.sum(-1), 1)
    np.testing.assert_allclose(per_row[:4], [-0.70710, 0.70710, -0.70710, 0.70710], atol=1e-4)
    for row in range(4, 7):
        np.testing.assert_allclose(advantages[row], per_row[row_of[rollout_ids[row]]] * mask[row], atol=1e-6)
    assert not advantages[7].any() and len(batch.meta_info["global_token_num"]) == 8
    counts = trainer.async_rollout_manager.step_counts.take()
    assert counts["edge_rollout/drift_segments"] == 3 and counts["edge_rollout/drift_segments_trained"] == 3
    assert counts["edge_rollout/drift_model_tokens_untrained"] == 0 and set(trainer.timing) == {"edge_rollout/generate_sequences", "edge_rollout/wait_s"}


def test_with_the_stock_trainer_only_last_segments_are_trained_and_the_rest_counted(client, edge):
    config = verl_config(n=2)
    manager = make_manager(client, config)  # RayPPOTrainer itself: nothing sets train_drift_segments
    batch = dataloader_batch(2)
    batch.non_tensor_batch["uid"] = objects(["u0", "u1"])
    out = manager.generate_sequences(gen_batch_of(batch).repeat(2, interleave=True))
    assert len(out) == 4 and EARLIER_SEGMENTS not in out.meta_info
    assert out.meta_info["edge_rollout"]["drift_segments"] == 3 and out.meta_info["edge_rollout"]["drift_model_tokens_untrained"] == 9


def test_validation_and_async_rewards_do_not_carry_segments(client, edge):
    trainer = trainer_for(client, async_reward=True)  # launch_reward_fn_async skips the hook: count, do not carry
    assert trainer.async_rollout_manager.train_drift_segments is False
    trainer = trainer_for(client)
    batch = dataloader_batch(1)
    batch.non_tensor_batch["uid"] = objects(["u0"])
    val = gen_batch_of(batch)
    val.meta_info.update(validate=True, do_sample=True, global_steps=0)
    out = trainer.async_rollout_manager.generate_sequences(val)  # val_n = 1: one row, its last segment
    assert EARLIER_SEGMENTS not in out.meta_info and len(out) == 1


def test_the_divisor_is_verls_minimal_batch_size():
    fsdp = NS(trainer=NS(n_gpus_per_node=8, nnodes=2), actor_rollout_ref=NS(actor=NS(strategy="fsdp")))
    megatron = NS(trainer=NS(n_gpus_per_node=8, nnodes=1), actor_rollout_ref=NS(actor=NS(
        strategy="megatron", ppo_micro_batch_size_per_gpu=2,
        megatron=NS(tensor_model_parallel_size=2, pipeline_model_parallel_size=2, context_parallel_size=1))))
    assert (minimal_batch_divisor(fsdp), minimal_batch_divisor(megatron)) == (16, 4)


def test_torch_tensors_expand_and_take_their_advantage(client, edge):
    torch = pytest.importorskip("torch", reason="torch (CPU) proves the tensor path; .ci/run installs it")
    trainer = trainer_for(client, n_gpus=1)
    trainer.async_rollout_manager.return_tensors = "pt"

    def torch_grpo(data, **kwargs):  # the re-stated GRPO, answering in torch as verl does
        out = grpo_outcome_advantage(data, **kwargs)
        for key in ("advantages", "returns"):
            out.batch[key] = torch.from_numpy(np.asarray(out.batch[key], dtype=np.float32))
        return out

    trainer.advantage_module = trainer.module = NS(compute_advantage=torch_grpo, compute_data_metrics=lambda batch, use_critic: {})
    batch = trainer.fit()
    assert len(batch) == 7 and trainer.last_expansion == {"segments": 3, "fillers": 0}
    assert torch.is_tensor(batch.batch["advantages"]) and batch.batch["advantages"].dtype == torch.float32
    assert int(batch.batch["response_mask"].sum()) == 21 and batch.batch["input_ids"].dtype == torch.int64


FAKE_RAY_TRAINER = '''
"""verl.trainer.ppo.ray_trainer as far as EdgeRolloutTrainer touches it: RayPPOTrainer whose
init_workers builds the managers (ray_trainer.py:900-926) and whose fit calls compute_advantage
by module name (1586), here the replay's."""
import sys
from types import SimpleNamespace as NS
from test_verl_drift_segments import FitReplay, grpo_outcome_advantage

compute_advantage = grpo_outcome_advantage


def compute_data_metrics(batch, use_critic):
    return {"critic/score/mean": 0.0}


class RayPPOTrainer(FitReplay):
    def __init__(self, config, manager):
        self.config, self.manager = config, manager

    def init_workers(self):
        self.async_rollout_manager, self.module = self.manager, sys.modules[__name__]
        self.checkpoint_manager = NS(sleep_replicas=lambda: None, update_weights=lambda: None)
'''


@pytest.fixture
def verl_stand_in(tmp_path):
    """A ``verl`` package holding only ``trainer.ppo.ray_trainer`` (FAKE_RAY_TRAINER), importable
    while the test runs; ``edge_rollout.verl.trainer`` is imported afresh over it."""
    import importlib
    for _ in stand_in_packages(tmp_path, {"verl/trainer/ppo/ray_trainer.py": FAKE_RAY_TRAINER}, fresh=("edge_rollout.verl.trainer",)):
        yield importlib.import_module("edge_rollout.verl.trainer")


def test_edge_rollout_trainer_itself_wires_the_manager_and_patches_fits_advantage_only_while_fit_runs(client, edge, verl_stand_in):
    module = __import__("verl.trainer.ppo.ray_trainer", fromlist=["RayPPOTrainer"])
    config = verl_config(n=2)
    config.trainer, config.reward_model = NS(n_gpus_per_node=1, nnodes=1), NS(launch_reward_fn_async=False)
    trainer = verl_stand_in.EdgeRolloutTrainer(config, make_manager(client, config))
    assert isinstance(trainer, module.RayPPOTrainer) and trainer.advantage_module is module
    trainer.init_workers()
    assert trainer.async_rollout_manager.train_drift_segments is True and trainer.weight_sync.versions == []
    batch = trainer.fit()
    assert len(batch) == 7 and int(np.asarray(batch.batch["response_mask"]).sum()) == 21
    advantages, mask = np.asarray(batch.batch["advantages"]), np.asarray(batch.batch["response_mask"])
    np.testing.assert_allclose(advantages[4:].sum(-1) / mask[4:].sum(-1), [0.70710, 0.70710, -0.70710], atol=1e-4)
    assert module.compute_advantage is grpo_outcome_advantage  # restored once fit returned
    # The manager's counts are the step's metrics as edge_rollout/* (fit logs compute_data_metrics' answer), none of them a timing.
    metrics = trainer.metrics
    assert metrics["critic/score/mean"] == 0.0 and metrics["edge_rollout/rollouts"] == 4.0 and metrics["edge_rollout/drift_segments"] == 3.0
    assert metrics["edge_rollout/segments_appended"] == 3.0 and metrics["edge_rollout/filler_rows"] == 0.0
    assert metrics["edge_rollout/policy_version_min"] == 0.0 and metrics["edge_rollout/generate_calls"] == 1.0
    assert not any(key.startswith("timing") for key in metrics) and module.compute_data_metrics(None, False) == {"critic/score/mean": 0.0}  # restored
    assert trainer.async_rollout_manager.step_counts.take() == {}  # taken once per step
