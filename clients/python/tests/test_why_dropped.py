"""Why the feed dropped a group, in the words a trainer's warning shows."""
from edge_rollout.stream import why_dropped


def test_names_a_group_cancelled_for_staleness_with_its_stale_member():
    group = {"uid": "b:0", "reason": "cancelled",
             "failed_members": [{"sample_index": 1, "termination_reason": "STALE", "outcome": "cut"}]}
    assert why_dropped(group) == ("cancelled: a member ended STALE while it ran (too far behind the policy "
                                  "to be trained) (sample 1 STALE)")


def test_names_a_stale_group_by_its_versions():
    group = {"reason": "stale", "policy_version_start": 3, "training_mode": "async/1", "max_staleness": 1,
             "policy_version": 5}
    assert why_dropped(group) == "stale: sampled at policy version 3, async/1 allows 1 behind version 5"
