"""Unit: overlong prompts and responses are cut as verl cuts them, and flagged."""
from __future__ import annotations

import numpy as np
import pytest

from edge_rollout import to_verl_batch
from fake_server import sample


def overlong() -> dict:
    s = sample("g:0", 0, [1, 2, 3, 4, 5], [6, 7, 8], reward=1.0)
    s["response_mask"], s["response_logprobs"] = [1, 0, 1], [-1.0, -2.0, -3.0]
    return s


@pytest.mark.parametrize("truncation, kept", [("left", [3, 4, 5]), ("right", [1, 2, 3]), ("middle", [1, 4, 5])])
def test_cuts_an_overlong_prompt_by_the_truncation_rule(truncation, kept):
    out = to_verl_batch([overlong()], 3, 2, 0, truncation=truncation)
    np.testing.assert_array_equal(out.batch["prompts"], [kept])
    np.testing.assert_array_equal(out.batch["attention_mask"][:, :3], [[1, 1, 1]])
    assert out.non_tensor_batch["prompt_truncated"].tolist() == [True]


def test_error_truncation_refuses_an_overlong_prompt_naming_the_sample():
    with pytest.raises(ValueError, match=r"samples\[0\]\.prompt_ids has 5 tokens, more than prompt_length 3"):
        to_verl_batch([overlong()], 3, 2, 0, truncation="error")


def test_cuts_an_overlong_response_back_to_its_last_model_token_so_the_reward_is_on_a_trained_token():
    out = to_verl_batch([overlong()], 8, 2, 0)  # first 2 tokens end on a tool token (mask 0): keep only the model token
    np.testing.assert_array_equal(out.batch["responses"], [[6, 0]])
    np.testing.assert_array_equal(out.batch["response_mask"], [[1, 0]])
    np.testing.assert_allclose(out.batch["rollout_log_probs"], [[-1.0, 0.0]])
    np.testing.assert_array_equal(out.batch["rm_scores"], [[1.0, 0]])
    assert (out.batch["rm_scores"] * out.batch["response_mask"]).sum() == 1.0
    np.testing.assert_array_equal(out.batch["position_ids"], [[0, 0, 0, 0, 1, 2, 3, 4, 5, 5]])
    assert out.non_tensor_batch["response_truncated"].tolist() == [True]
    assert out.non_tensor_batch["response_cut_to_model_token"].tolist() == [True]
    assert out.non_tensor_batch["prompt_truncated"].tolist() == [False]


def test_a_cut_response_with_no_model_token_left_is_kept_fully_masked_and_flagged():
    s = overlong()
    s["response_mask"] = [0, 1, 1]
    out = to_verl_batch([s], 8, 1, 0)
    np.testing.assert_array_equal(out.batch["responses"], [[6]])
    np.testing.assert_array_equal(out.batch["response_mask"], [[0]])
    assert out.non_tensor_batch["response_no_model_token"].tolist() == [True]


def test_truncates_both_sides_at_once():
    out = to_verl_batch([overlong()], 2, 1, 0)
    np.testing.assert_array_equal(out.batch["input_ids"], [[4, 5, 6]])
    np.testing.assert_array_equal(out.batch["attention_mask"], [[1, 1, 1]])
    np.testing.assert_array_equal(out.batch["position_ids"], [[0, 1, 2]])
    np.testing.assert_array_equal(out.batch["rm_scores"], [[1.0]])


def test_samples_exactly_at_the_limits_are_not_flagged():
    out = to_verl_batch([overlong()], 5, 3, 0)
    assert out.non_tensor_batch["prompt_truncated"].tolist() == [False]
    assert out.non_tensor_batch["response_truncated"].tolist() == [False]
    np.testing.assert_array_equal(out.batch["input_ids"], [[1, 2, 3, 4, 5, 6, 7, 8]])
