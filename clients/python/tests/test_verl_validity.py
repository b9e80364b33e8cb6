"""verl's estimator over a group's valid members only (``on_infra_failure: "deliver_valid"``)."""
from __future__ import annotations

import numpy as np

from edge_rollout.verl.validity import VALID, valid_member_advantage
from grpo_reference import grpo_outcome_advantage, grpo_scores
from verl_fakes import MiniDataProto


def batch(scores, uids, valid, width=3):
    rewards = np.zeros((len(scores), width), dtype=np.float32)
    rewards[:, -1] = scores
    mask = np.ones((len(scores), width), dtype=np.float32)
    columns = {"uid": np.array(uids, dtype=object)}
    if valid is not None:
        columns[VALID] = np.array(valid, dtype=bool)
    return MiniDataProto({"token_level_rewards": rewards, "response_mask": mask}, columns)


def test_a_group_with_an_invalid_member_is_scored_over_its_valid_members_only():
    # Group a: three successes and an infrastructure failure (placeholder scored 0).
    data = batch([1.0, 1.0, 0.0, 0.0, 1.0, 0.0], ["a", "a", "a", "b", "b", "b"], [True, True, False, True, True, True])
    plain = grpo_outcome_advantage(batch([1.0, 1.0, 0.0, 0.0, 1.0, 0.0], ["a", "a", "a", "b", "b", "b"], None)).batch["advantages"][:, 0]
    out = valid_member_advantage(grpo_outcome_advantage)(data).batch["advantages"]
    assert plain[0] > 0.5  # the fake signal verl's default gives the successes
    assert np.allclose(out[:2, 0], 0.0)  # alone, two equal successes carry no advantage
    assert np.allclose(out[2], 0.0)  # the invalid row trains nothing
    assert np.allclose(out[3:, 0], grpo_scores(np.array([0.0, 1.0, 0.0]), np.array(["b"] * 3)))


def test_batches_without_invalid_rows_go_straight_through():
    seen = []
    def estimator(data, **kwargs):
        seen.append(len(data.non_tensor_batch["uid"]))
        return grpo_outcome_advantage(data, **kwargs)
    valid_member_advantage(estimator)(batch([1.0, 0.0], ["a", "a"], [True, True]))
    valid_member_advantage(estimator)(batch([1.0, 0.0], ["a", "a"], None))
    assert seen == [2, 2]
