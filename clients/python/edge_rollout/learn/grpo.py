"""GRPO as verl defines it, written from its documented definitions.

``group_advantages`` is ``compute_grpo_outcome_advantage``: each sample's outcome score minus its
group's mean, divided by the group's (unbiased) standard deviation plus epsilon (a group of one has
advantage 0), broadcast over the response tokens. ``clipped_policy_loss`` is verl's PPO policy loss
(``compute_policy_loss`` with ``clip_ratio`` 0.2) aggregated as ``token-mean``: the mean over every
response token the mask keeps, across the batch.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Sequence

import torch


def group_advantages(scores: torch.Tensor, uids: Sequence[str], response_mask: torch.Tensor,
                     epsilon: float = 1e-6) -> torch.Tensor:
    """``[batch, response]`` advantages: the score normalised within its GRPO group, on masked tokens."""
    groups: dict[str, list[int]] = defaultdict(list)
    for row, uid in enumerate(uids):
        groups[str(uid)].append(row)
    advantage = torch.zeros_like(scores)
    for rows in groups.values():
        if len(rows) < 2:
            continue
        members = scores[rows]
        advantage[rows] = (members - members.mean()) / (members.std(unbiased=True) + epsilon)
    return advantage[:, None] * response_mask


def clipped_policy_loss(log_prob: torch.Tensor, old_log_prob: torch.Tensor, advantages: torch.Tensor,
                        response_mask: torch.Tensor, clip_ratio: float = 0.2) -> torch.Tensor:
    """PPO's clipped surrogate, token-mean over the masked tokens."""
    ratio = torch.exp(log_prob - old_log_prob)
    unclipped = -advantages * ratio
    clipped = -advantages * ratio.clamp(1 - clip_ratio, 1 + clip_ratio)
    per_token = torch.maximum(unclipped, clipped)
    return (per_token * response_mask).sum() / response_mask.sum().clamp(min=1)
