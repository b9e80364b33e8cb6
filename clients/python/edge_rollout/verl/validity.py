"""Which rows of a verl batch may join their GRPO group's statistics, and an advantage that honours it.

verl's outcome estimators (GRPO, RLOO, Dr.GRPO: ``compute_grpo_outcome_advantage`` and its
siblings, core_algos.py:267-327 at the commit pinned in docs/verl.md) take a group's mean and std
over *every* row that shares a ``uid``, masked or not. A member that failed for infrastructure
(``MODEL_ERROR``, a crashed drive, an exception in environment code) is a placeholder row scored 0,
and it would shift its group's baseline: rewards [1, 1, 1, failed] give the three successes +0.5
instead of 0. edge-rollout therefore withholds such a group by default (every row a masked,
zero-reward placeholder: advantage 0). A batch with ``on_infra_failure: "deliver_valid"`` gets the
valid members of a group with ≥ 2 of them instead; its output then marks each row in the
non-tensor column ``edge_rollout_valid``, and ``valid_member_advantage`` computes verl's own
estimator over the valid rows only (registered estimators see rewards, masks and index, never
validity), giving invalid rows advantage 0.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

#: Non-tensor column: True for a row whose reward is a policy outcome (may join its group's statistics).
VALID = "edge_rollout_valid"


def valid_member_advantage(compute_advantage: Callable[..., Any]) -> Callable[..., Any]:
    """verl's ``compute_advantage`` over the rows flagged valid only; invalid rows get advantage
    (and return) 0. Batches without the column, or with every row valid, go straight through."""

    def compute(data: Any, *args: Any, **kwargs: Any) -> Any:
        flags = data.non_tensor_batch.get(VALID)
        if flags is None or bool(np.all(flags.astype(bool))):
            return compute_advantage(data, *args, **kwargs)
        flags = flags.astype(bool)
        valid = [int(i) for i in np.flatnonzero(flags)]
        mask = data.batch["response_mask"]
        if not valid:  # nothing to learn from: every advantage 0
            for key in ("advantages", "returns"):
                data.batch[key] = mask * 0.0
            return data
        head = compute_advantage(data[valid], *args, **kwargs)
        for key in ("advantages", "returns"):
            if key in head.batch.keys():
                data.batch[key] = scatter_rows(mask, valid, head.batch[key])
        return data

    return compute


def scatter_rows(mask: Any, rows: list[int], values: Any, fill: Callable[[Any], None] = lambda full: None) -> Any:
    """A zero array shaped like ``mask`` holding ``values`` at ``rows`` (``fill`` may set more), in
    ``values``' dtype: numpy or torch alike."""
    full = mask * 0.0
    full[rows] = values
    fill(full)
    return full.to(values.dtype) if hasattr(full, "to") else full.astype(values.dtype)


__all__ = ["VALID", "scatter_rows", "valid_member_advantage"]
