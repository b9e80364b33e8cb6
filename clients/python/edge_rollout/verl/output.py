"""The batch one ``generate_sequences`` call returns, shaped as ``RayPPOTrainer.fit`` consumes it.

What fit does with it, at the commit pinned in ``docs/verl.md``:

* ``batch.union(output)`` row for row (ray_trainer.py:1437; protocol.py:806-808): shared tensor
  and non-tensor keys must be equal and shared ``meta_info`` keys too (py_functional.py:149-163);
  so ``uid`` is the input's, and nothing else of the input's columns is repeated;
* ``non_tensor_batch["multi_modal_inputs"]`` is read unconditionally (ray_trainer.py:1461):
  one ``{}`` per row, as verl's agent loop emits without a processor (agent_loop.py:642-646);
* ``__num_turns__`` feeds ``num_turns/*`` metrics (metric_utils.py:213-217) and counts as
  ToolAgentLoop does: user turns + assistant turns + 1 (tool_agent_loop.py:204);
* ``meta_info["timing"]`` goes into ``timing_raw`` and so into every step's metrics as
  ``timing_s/<key>`` (ray_trainer.py:1401, metric_utils.py:261-262): only durations go there (the
  manager adds them); the counts ride in ``meta_info["edge_rollout"]`` and reach the step's
  metrics as ``edge_rollout/*`` through ``EdgeRolloutTrainer`` (``metrics``);
  ``reward_extra_keys`` is ``[]`` (rewards are in ``rm_scores``; ray_trainer.py:513-516);
* REMAX's baseline output is unioned into the un-repeated batch and only its tensors are popped
  again (ray_trainer.py:1420-1433): it carries tensors and ``uid`` only, or its columns would
  collide with the main output's in the next union.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import numpy as np

from ..batching import VerlBatch
from .call_plan import CallPlan


def shape_output(out: VerlBatch, plan: CallPlan, kind: str, uids: Optional[Any], samples: Sequence[Mapping[str, Any]],
                 stats: Mapping[str, Any]) -> VerlBatch:
    """``out`` (one row per rollout) with the padding rows appended and verl's columns and meta."""
    # pad_dataproto_to_divisor appends the first rows again, cycling when the padding is the longer.
    rows = list(range(plan.rolled_out)) + [i % max(plan.rolled_out, 1) for i in range(plan.padding)]
    tensors = {key: value[rows] if len(rows) != plan.rolled_out else value for key, value in out.batch.items()}
    columns = {key: value[rows] for key, value in out.non_tensor_batch.items()}
    if uids is not None:
        columns["uid"] = np.array(list(uids), dtype=object)
    columns["__num_turns__"] = verl_turns(columns["__num_turns__"])
    columns["multi_modal_inputs"] = _objects([{} for _ in rows])
    if kind == "greedy":
        columns = {key: value for key, value in columns.items() if key == "uid" and uids is not None}
    counts = _counts(out, plan, stats)
    meta: dict[str, Any] = {"timing": {}, "reward_extra_keys": []}
    if kind != "greedy":
        meta["edge_rollout"] = {**counts, "policy_versions": list(stats["policy_versions"]), "kind": kind}
    return VerlBatch(batch=tensors, non_tensor_batch=columns, meta_info=meta)


def verl_turns(model_calls: np.ndarray) -> np.ndarray:
    """``__num_turns__`` as ToolAgentLoop counts it (tool_agent_loop.py:204): user + assistant turns + 1."""
    calls = model_calls.astype(np.int32)
    return np.where(calls > 0, 2 * calls, 1).astype(np.int32)


def _counts(out: VerlBatch, plan: CallPlan, stats: Mapping[str, Any]) -> dict[str, int]:
    flags = out.non_tensor_batch
    versions = stats["policy_versions"]
    return {
        "rollouts": plan.rolled_out,
        "padding_rows": plan.padding,
        "failed": stats["failed"],
        "placeholders": stats["placeholders"],
        "dropped_groups": stats.get("dropped_groups", 0),
        **{f"dropped_{reason}": n for reason, n in sorted((stats.get("dropped_by_reason") or {}).items())},
        "invalid_rows": stats.get("invalid_rows", 0),
        "truncated": int(np.sum(flags["response_truncated"])),
        "cut_to_model_token": int(np.sum(flags["response_cut_to_model_token"])),
        "no_model_token": int(np.sum(flags["response_no_model_token"])),
        "drift_segments": stats["drift_segments"],
        "drift_segments_trained": stats["drift_segments_trained"],
        "drift_model_tokens_untrained": stats["drift_model_tokens_untrained"],
        "policy_version_min": min(versions) if versions else 0,
        "policy_version_max": max(versions) if versions else 0,
    }


def _objects(items: list[Any]) -> np.ndarray:
    array = np.empty(len(items), dtype=object)
    array[:] = items
    return array
