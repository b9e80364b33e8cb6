"""Unit: to_verl_batch pads, masks, positions and rewards exactly as verl's agent-loop postprocess."""
from __future__ import annotations

import numpy as np
import pytest

from edge_rollout import to_verl_batch
from fake_server import group, sample

P, R = 4, 5


def three_samples() -> list[dict]:
    a = sample("g:0", 0, [11, 12], [21, 22, 23], reward=1.0)
    a["response_mask"], a["response_logprobs"] = [1, 0, 1], [-0.5, 0.0, -0.25]
    b = sample("g:0", 1, [31, 32, 33, 34], [41], reward=0.5)
    b["response_logprobs"] = [-1.0]
    c = sample("g:1", 0, [51], [61, 62, 63, 64, 65], reward=-1.0, trainable=True)
    c["response_mask"], c["response_logprobs"] = [1, 1, 0, 0, 1], [-0.1, -0.2, 0.0, 0.0, -0.3]
    return [a, b, c]


def test_left_pads_prompts_and_right_pads_responses():
    out = to_verl_batch(three_samples(), P, R, pad_token_id=0).batch
    np.testing.assert_array_equal(out["prompts"], [[0, 0, 11, 12], [31, 32, 33, 34], [0, 0, 0, 51]])
    np.testing.assert_array_equal(out["responses"], [[21, 22, 23, 0, 0], [41, 0, 0, 0, 0], [61, 62, 63, 64, 65]])
    np.testing.assert_array_equal(out["input_ids"], [[0, 0, 11, 12, 21, 22, 23, 0, 0], [31, 32, 33, 34, 41, 0, 0, 0, 0],
                                                     [0, 0, 0, 51, 61, 62, 63, 64, 65]])


def test_masks_cover_real_tokens_only():
    out = to_verl_batch(three_samples(), P, R, pad_token_id=0).batch
    np.testing.assert_array_equal(out["attention_mask"], [[0, 0, 1, 1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 0, 0, 0, 0],
                                                          [0, 0, 0, 1, 1, 1, 1, 1, 1]])
    np.testing.assert_array_equal(out["response_mask"], [[1, 0, 1, 0, 0], [1, 0, 0, 0, 0], [1, 1, 0, 0, 1]])
    np.testing.assert_allclose(out["rollout_log_probs"], [[-0.5, 0, -0.25, 0, 0], [-1, 0, 0, 0, 0], [-0.1, -0.2, 0, 0, -0.3]])


def test_position_ids_are_the_clipped_cumsum_of_the_attention_mask():
    out = to_verl_batch(three_samples(), P, R, pad_token_id=0).batch
    np.testing.assert_array_equal(out["position_ids"], [[0, 0, 0, 1, 2, 3, 4, 4, 4], [0, 1, 2, 3, 4, 4, 4, 4, 4],
                                                        [0, 0, 0, 0, 1, 2, 3, 4, 5]])


def test_places_the_reward_on_the_last_valid_response_token():
    out = to_verl_batch(three_samples(), P, R, pad_token_id=0).batch
    np.testing.assert_array_equal(out["rm_scores"], [[0, 0, 1, 0, 0], [0.5, 0, 0, 0, 0], [0, 0, 0, 0, -1]])


def test_an_empty_response_puts_the_reward_in_the_last_column_as_verl_indexing_does():
    out = to_verl_batch([sample("g:0", 0, [7], [], reward=2.0)], P, R, pad_token_id=9).batch
    np.testing.assert_array_equal(out["prompts"], [[9, 9, 9, 7]])
    np.testing.assert_array_equal(out["responses"], [[9, 9, 9, 9, 9]])
    np.testing.assert_array_equal(out["rm_scores"], [[0, 0, 0, 0, 2.0]])
    np.testing.assert_array_equal(out["position_ids"], [[0] * 9])


def test_uses_verl_dtypes_and_the_pad_token():
    out = to_verl_batch(three_samples(), P, R, pad_token_id=151643).batch
    assert out["prompts"][0, 0] == 151643 and out["responses"][1, 4] == 151643
    for key in ("prompts", "responses", "response_mask", "input_ids", "attention_mask", "position_ids"):
        assert out[key].dtype == np.int64, key
    assert out["rollout_log_probs"].dtype == np.float32 and out["rm_scores"].dtype == np.float32


def test_non_tensor_batch_carries_uid_turns_ids_and_extra_fields():
    nt = to_verl_batch(three_samples(), P, R, pad_token_id=0).non_tensor_batch
    assert nt["uid"].dtype == object and nt["uid"].tolist() == ["g:0", "g:0", "g:1"]
    assert nt["__num_turns__"].dtype == np.int32 and nt["__num_turns__"].tolist() == [2, 2, 2]
    assert nt["rollout_id"].tolist() == ["g:0:0", "g:0:1", "g:1:0"]
    assert nt["trainable"].tolist() == [None, None, True]
    assert nt["prompt_truncated"].tolist() == [False] * 3 and nt["response_truncated"].tolist() == [False] * 3


def test_a_forked_rollouts_tree_fields_reach_the_non_tensor_batch():
    samples = three_samples()
    tree = {"root": "r", "parent": "r", "branch_step": 2, "path": ["r", "g:0:1"], "branch_index": 0, "train_shared_prefix": False}
    samples[1]["extra_fields"] = {**samples[1].get("extra_fields", {}), "tree": tree}
    assert to_verl_batch(samples, P, R, pad_token_id=0).non_tensor_batch["tree"].tolist() == [None, tree, None]


def test_accepts_pulled_groups_in_group_member_segment_order():
    samples = three_samples()
    groups = [group("g:0", samples[:2]), group("g:1", samples[2:])]
    assert to_verl_batch(groups, P, R, 0).non_tensor_batch["rollout_id"].tolist() == ["g:0:0", "g:0:1", "g:1:0"]


def test_masks_untrainable_samples_but_keeps_their_reward():
    flagged = sample("g:0", 0, [1], [2, 3], reward=0.0, trainable=False, failed=True)
    flagged["reward_score"] = 0.25
    masked = to_verl_batch([flagged], P, R, 0).batch
    kept = to_verl_batch([flagged], P, R, 0, mask_untrainable=False).batch
    np.testing.assert_array_equal(masked["response_mask"], [[0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(kept["response_mask"], [[1, 1, 0, 0, 0]])
    np.testing.assert_array_equal(masked["rm_scores"], [[0, 0.25, 0, 0, 0]])


def test_refuses_samples_whose_mask_and_tokens_disagree():
    bad = sample("g:0", 0, [1], [2, 3])
    bad["response_mask"] = [1]
    with pytest.raises(ValueError, match=r"samples\[0\]\.response_mask"):
        to_verl_batch([bad], P, R, 0)


def test_refuses_extra_fields_that_would_overwrite_its_own_keys():
    with pytest.raises(ValueError, match="extra_fields.rollout_id"):
        to_verl_batch([sample("g:0", 0, [1], [2], rollout_id="other")], P, R, 0)


def test_validates_its_options_eagerly():
    with pytest.raises(ValueError, match="truncation must be one of"):
        to_verl_batch([], P, R, 0, truncation="both")
    with pytest.raises(ValueError, match="prompt_length and response_length"):
        to_verl_batch([], 0, R, 0)


def test_an_empty_list_gives_empty_arrays():
    out = to_verl_batch([], P, R, 0)
    assert len(out) == 0 and out.batch["input_ids"].shape == (0, P + R)


def test_torch_tensors_need_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="return_tensors='pt' needs torch"):
            to_verl_batch(three_samples(), P, R, 0, return_tensors="pt")
        return
    out = to_verl_batch(three_samples(), P, R, 0, return_tensors="pt").batch
    assert out["input_ids"].shape == (3, P + R) and str(out["rm_scores"].dtype) == "torch.float32"


def test_carries_per_token_policy_versions_of_partial_rollouts():
    resumed = sample("g:2", 0, [1, 2], [5, 6, 7])
    resumed["response_policy_versions"] = [3, 3, 4]
    resumed["policy_version"] = {"start": 3, "end": 4}
    nt = to_verl_batch([sample("g:2", 1, [1, 2], [5, 6]), resumed], P, R, pad_token_id=0).non_tensor_batch
    assert nt["response_policy_versions"].tolist() == [None, [3, 3, 4]]
    assert nt["policy_version_start"].tolist() == [0, 3]
