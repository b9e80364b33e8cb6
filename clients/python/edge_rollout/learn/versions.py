"""Log-probs under the weights each token was generated with, and the checks that rest on them.

In the asynchronous schedule an interrupting sync cuts a response mid-generation and resumes it
under the new weights, so one response's tokens come from two versions (``response_policy_versions``).
The trainer keeps the weights of every version still in flight and recomputes each token under
its own recorded version: agreement then also checks the recorded versions, and a token whose
recorded version does not reproduce it while another version does is a version mismatch.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import torch

# Log-probs agree when within this; a token is only called a mismatch when another version agrees
# this closely and its own is off by more than MISMATCH_GAP.
AGREE = 1e-4
MISMATCH_GAP = 1e-3


def token_versions(non_tensor: Mapping[str, Any], width: int) -> torch.Tensor:
    """``[B, R]``: each response token's recorded version (``policy_version_start`` where a sample has no runs)."""
    starts = np.asarray(non_tensor["policy_version_start"])
    runs = non_tensor.get("response_policy_versions")
    out = torch.tensor(starts, dtype=torch.long)[:, None].repeat(1, width)
    if runs is not None:
        for row, versions in enumerate(runs):
            if versions is not None:
                count = min(len(versions), width)
                out[row, :count] = torch.tensor(list(versions)[:count], dtype=torch.long)
    return out


def under_versions(scorer, models: Mapping[int, torch.nn.Module], versions: torch.Tensor) -> dict[int, torch.Tensor]:
    """``{version: [B, R] log-probs}`` for every version the batch's tokens name that the trainer still holds."""
    wanted = sorted({int(v) for v in versions.unique().tolist()} & set(models))
    with torch.no_grad():
        return {v: scorer(models[v]).double() for v in wanted}


def agreement(recorded: torch.Tensor, scored: Mapping[int, torch.Tensor], versions: torch.Tensor,
              mask: torch.Tensor) -> dict[str, float | int]:
    """Max and mean |recorded − recompute under the recorded version| over masked tokens, the
    responses that span versions, and the version mismatches (tokens of an unknown version count too)."""
    own = torch.full_like(recorded, float("nan"))
    for version, logprobs in scored.items():
        own = torch.where(versions == version, logprobs, own)
    keep = mask.bool()
    gap = (own - recorded).abs()
    known = keep & ~torch.isnan(gap)
    mismatch = keep & torch.isnan(gap)
    for version, logprobs in scored.items():
        matches_other = ((logprobs - recorded).abs() <= AGREE) & (versions != version)
        mismatch |= keep & matches_other & (gap > MISMATCH_GAP)
    spans = sum(1 for row in range(len(versions)) if versions[row][keep[row]].unique().numel() > 1)
    values = gap[known]
    return {
        "agreement_max": float(values.max()) if values.numel() else 0.0,
        "agreement_mean": float(values.mean()) if values.numel() else 0.0,
        "spanned": spans,
        "version_mismatches": int(mismatch.sum()),
    }
