"""Every drift segment of a rollout trained inside ``RayPPOTrainer.fit``.

A rollout whose later model calls re-tokenized its history differently (chat-template drift) is
split into segments: each is its own prompt + response row, because a model token may only be
trained in the context that produced it. verl's ``fit`` unions the rollout output with its input
row for row (ray_trainer.py:1436-1437, protocol.py:806-808), so ``generate_sequences`` can return
only one row per rollout: its **last** segment, which carries the reward. The earlier segments
travel beside it in ``meta_info[EARLIER_SEGMENTS]`` (meta is merged by the union) and
``EdgeRolloutTrainer`` (``DriftSegmentsTrainerMixin``) appends them once the union is done.

The rule for a rollout's segments, at the commit pinned in docs/verl.md:

* **expanded before rewards** (``_compute_or_extract_reward``, ray_trainer.py:1482-1484), so
  verl computes old/ref log-probs, values, KL and rollout-correction weights for every row;
* every earlier segment **copies its rollout's input row** (``uid``, ``data_source``,
  ``reward_model``, …) and overwrites the generated columns with its own; its ``rm_scores`` are
  zero: the rollout's reward is counted once, on its last segment;
* the **advantage is computed once per rollout**: verl's own ``compute_advantage``
  (ray_trainer.py:1586-1594) runs on the last segments only, so a GRPO group's mean and std are
  over rollouts, not rows; each earlier segment then gets its rollout's advantage (and return)
  at the last segment's first response token, on its own model tokens;
* the batch stays a multiple of verl's minimal batch size (utils/config.py:87-112: ``n_gpus``, or
  Megatron's dp × ``ppo_micro_batch_size_per_gpu``) by appending fully masked filler rows, which
  every ``loss_agg_mode`` ignores (core_algos.py:1055-1070).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from .call_plan import _get
from .validity import scatter_rows, valid_member_advantage

#: ``meta_info`` key of the earlier segments of a call's rollouts (``{"batch", "non_tensor_batch"}``).
EARLIER_SEGMENTS = "edge_rollout_earlier_segments"
#: Non-tensor column set at expansion: True on earlier segments and fillers, False on last segments.
EARLIER_SEGMENT = "edge_rollout_earlier_segment"
#: The generated columns an earlier segment brings; every other column is its rollout's row's.
SEGMENT_TENSORS = ("prompts", "responses", "response_mask", "input_ids", "attention_mask", "position_ids", "rollout_log_probs")


def attach_earlier_segments(meta: dict[str, Any], segments: Any) -> None:
    """Puts ``segments`` (a ``VerlBatch`` of earlier segments, with ``rollout_id``) into ``meta``."""
    if len(segments.non_tensor_batch.get("rollout_id", ())):
        meta[EARLIER_SEGMENTS] = {"batch": dict(segments.batch), "non_tensor_batch": dict(segments.non_tensor_batch)}


def expand_drift_segments(batch: Any, divisor: int = 1) -> dict[str, int]:
    """Appends the earlier segments carried in ``batch.meta_info`` to ``batch`` in place (a verl
    ``DataProto``, or anything with its indexing, ``concat`` and three fields), then filler rows
    up to a multiple of ``divisor``. Returns the counts; no-op (zeros) without segments."""
    carried = batch.meta_info.pop(EARLIER_SEGMENTS, None)
    if not carried:
        return {"segments": 0, "fillers": 0}
    tensors, columns = carried["batch"], carried["non_tensor_batch"]
    row_of = {rollout_id: i for i, rollout_id in enumerate(batch.non_tensor_batch["rollout_id"])}
    wanted = [i for i, rollout_id in enumerate(columns["rollout_id"]) if rollout_id in row_of]
    sources = [row_of[columns["rollout_id"][i]] for i in wanted]
    if not sources:
        return {"segments": 0, "fillers": 0}
    fillers = (-(len(batch) + len(sources))) % max(divisor, 1)
    added = batch[sources]
    for key in SEGMENT_TENSORS:
        if key in tensors and key in added.batch.keys():
            added.batch[key] = tensors[key][wanted]
    if "rm_scores" in added.batch.keys():
        added.batch["rm_scores"] = added.batch["rm_scores"] * 0  # the reward counts once: on the last segment
    for key, value in columns.items():
        if key in added.non_tensor_batch and key != "uid":
            added.non_tensor_batch[key] = value[wanted]
    pieces = [batch, added]
    if fillers:
        filler = added[[i % len(sources) for i in range(fillers)]]
        filler.batch["response_mask"] = filler.batch["response_mask"] * 0
        pieces.append(filler)
    flags = np.concatenate([np.zeros(len(batch), dtype=bool), np.ones(len(sources) + fillers, dtype=bool)])
    for piece in pieces:
        piece.non_tensor_batch.pop(EARLIER_SEGMENT, None)
    tokens = batch.meta_info.get("global_token_num")
    merged = type(batch).concat(pieces)
    batch.batch, batch.non_tensor_batch = merged.batch, merged.non_tensor_batch
    batch.non_tensor_batch[EARLIER_SEGMENT] = flags
    if isinstance(tokens, list):  # fit computed it before the expansion (ray_trainer.py:1458)
        batch.meta_info["global_token_num"] = [int(v) for v in batch.batch["attention_mask"].sum(-1).tolist()]
    return {"segments": len(sources), "fillers": fillers}


def segment_aware_advantage(compute_advantage: Callable[..., Any]) -> Callable[..., Any]:
    """verl's ``compute_advantage`` computed over one row per rollout (its last segment), then
    given to the rollout's earlier segments (see the module doc). Batches without expanded
    segments go straight through."""

    def compute(data: Any, *args: Any, **kwargs: Any) -> Any:
        flags = data.non_tensor_batch.get(EARLIER_SEGMENT)
        if flags is None or not np.any(flags):
            return compute_advantage(data, *args, **kwargs)
        last = [int(i) for i in np.flatnonzero(~flags)]
        earlier = [int(i) for i in np.flatnonzero(flags)]
        head = compute_advantage(data[last], *args, **kwargs)
        position = {data.non_tensor_batch["rollout_id"][row]: j for j, row in enumerate(last)}
        owners = [position[data.non_tensor_batch["rollout_id"][row]] for row in earlier]
        mask = data.batch["response_mask"]
        head_mask = head.batch["response_mask"]
        first = ((head_mask > 0) * 1.0).argmax(-1)  # each last segment's first response token
        has_token = ((head_mask > 0) * 1.0).sum(-1) > 0
        for key in ("advantages", "returns"):
            if key not in head.batch.keys():
                continue
            values = head.batch[key]
            at_first = values[list(range(len(last))), first] * has_token

            def earlier_rows(full: Any, at_first: Any = at_first) -> None:
                full[earlier] = at_first[owners][:, None] * mask[earlier]

            data.batch[key] = scatter_rows(mask, last, values, earlier_rows)
        return data

    return compute


def minimal_batch_divisor(config: Any) -> int:
    """verl's minimal batch size (utils/config.py:87-112): every training batch is a multiple of it."""
    def get(node: Any, *path: str) -> Any:
        for key in path:
            node = _get(node, key)
        return node

    n_gpus = int(get(config, "trainer", "n_gpus_per_node") or 1) * int(get(config, "trainer", "nnodes") or 1)
    if get(config, "actor_rollout_ref", "actor", "strategy") == "megatron":
        megatron = get(config, "actor_rollout_ref", "actor", "megatron")
        parallel = int(get(megatron, "tensor_model_parallel_size") or 1) * int(get(megatron, "pipeline_model_parallel_size") or 1) \
            * int(get(megatron, "context_parallel_size") or 1)
        return max(n_gpus // parallel, 1) * int(get(config, "actor_rollout_ref", "actor", "ppo_micro_batch_size_per_gpu") or 1)
    return n_gpus


class DriftSegmentsTrainerMixin:
    """Trains every drift segment in ``RayPPOTrainer.fit`` (see the module doc). Put it before
    ``RayPPOTrainer`` in the bases; ``advantage_module`` is the module whose ``compute_advantage``
    fit calls by name (verl's ``ray_trainer``)."""

    advantage_module: Optional[Any] = None
    #: Counts of the last expansion (``segments``, ``fillers``), for tests and logs.
    last_expansion: dict[str, int] = {"segments": 0, "fillers": 0}

    def _compute_or_extract_reward(self, batch: Any, reward_fn: Any = None, reward_for_val: bool = False, sum_reward: bool = False) -> Any:
        if not reward_for_val and not sum_reward:  # the training batch, after union and balancing
            self.last_expansion = expand_drift_segments(batch, minimal_batch_divisor(self.config))
        return super()._compute_or_extract_reward(batch, reward_fn=reward_fn, reward_for_val=reward_for_val,  # type: ignore[misc]
                                                  sum_reward=sum_reward)

    def fit(self) -> Any:
        module = self.advantage_module
        original = module.compute_advantage
        # Invalid rows (infrastructure failures of a deliver_valid group) leave first, then drift segments are expanded.
        module.compute_advantage = valid_member_advantage(segment_aware_advantage(original))
        try:
            return super().fit()  # type: ignore[misc]
        finally:
            module.compute_advantage = original


__all__ = ["EARLIER_SEGMENTS", "EARLIER_SEGMENT", "DriftSegmentsTrainerMixin", "attach_earlier_segments",
           "expand_drift_segments", "minimal_batch_divisor", "segment_aware_advantage"]
