"""verl's GRPO outcome advantage, re-stated for the tests (verl is not installable here).

Read from ``compute_grpo_outcome_advantage`` (verl/trainer/ppo/core_algos.py:267-327 at the commit
pinned in docs/verl.md), reached through ``compute_advantage`` (ray_trainer.py:130-200): the score of
a row is the sum of its token-level rewards; a uid's mean and (unbiased) std are taken over *every*
row of that uid, masked or not; a one-row group has mean 0 and std 1 (core_algos.py:314-316); the
advantage is ``(score - mean) / (std + 1e-6)`` on every response token.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def grpo_scores(scores: np.ndarray, uids: np.ndarray) -> np.ndarray:
    """Each row's GRPO advantage (one number per row) over its uid's rows."""
    out = np.zeros(len(scores))
    for i, uid in enumerate(uids):
        group = scores[uids == uid]
        mean, std = (0.0, 1.0) if len(group) == 1 else (group.mean(), group.std(ddof=1))
        out[i] = (scores[i] - mean) / (std + 1e-6)
    return out


def grpo_outcome_advantage(data: Any, adv_estimator: str = "grpo", num_repeat: int = 1, norm_adv_by_std_in_grpo: bool = True, **_: Any) -> Any:
    """verl's ``compute_advantage`` for GRPO on a DataProto-like ``data``, in place."""
    scores = np.asarray(data.batch["token_level_rewards"]).sum(-1)
    advantages = grpo_scores(scores, data.non_tensor_batch["uid"])[:, None] * np.asarray(data.batch["response_mask"])
    data.batch["advantages"], data.batch["returns"] = advantages, advantages
    return data
