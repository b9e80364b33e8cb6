"""to_verl_batch(return_tensors="pt"): the same padded batch as numpy, as torch tensors.

CI installs torch (CPU) from the machine's pip index and sets EDGE_ROLLOUT_REQUIRE_TORCH=1, so
this path runs there; elsewhere it is skipped with the reason when torch is missing.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from edge_rollout import to_verl_batch
from test_batching import P, R, three_samples

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None
    if os.environ.get("EDGE_ROLLOUT_REQUIRE_TORCH"):
        raise
pytestmark = pytest.mark.skipif(torch is None, reason="torch is not installed (CI installs it: python3 -m pip install torch)")

# verl's agent loop: token ids and masks are int64, log-probs and scores float32.
DTYPES = {"prompts": "int64", "responses": "int64", "response_mask": "int64", "attention_mask": "int64",
          "input_ids": "int64", "position_ids": "int64", "rollout_log_probs": "float32", "rm_scores": "float32"}


def test_torch_tensors_equal_the_numpy_arrays_key_by_key_with_verl_dtypes():
    as_np = to_verl_batch(three_samples(), P, R, 0).batch
    as_pt = to_verl_batch(three_samples(), P, R, 0, return_tensors="pt").batch
    assert set(as_pt) == set(as_np)
    for key, tensor in as_pt.items():
        assert isinstance(tensor, torch.Tensor), key
        assert str(tensor.dtype) == f"torch.{DTYPES.get(key, str(as_np[key].dtype))}", key
        np.testing.assert_array_equal(tensor.numpy(), as_np[key], err_msg=key)


def test_torch_batch_keeps_the_non_tensor_fields_and_the_reward_position():
    out = to_verl_batch(three_samples(), P, R, 0, return_tensors="pt")
    assert list(out.non_tensor_batch["uid"]) == ["g:0", "g:0", "g:1"]
    last_valid = out.batch["attention_mask"][:, P:].sum(dim=1) - 1
    rewards = out.batch["rm_scores"].gather(1, last_valid.unsqueeze(1)).squeeze(1)
    assert rewards.tolist() == [1.0, 0.5, -1.0]
