"""Unit: the manager's per-step counts become verl step metrics (``edge_rollout/*``), never timings."""
from __future__ import annotations

from types import SimpleNamespace as NS

from edge_rollout.verl.metrics import RolloutMetricsTrainerMixin, StepCounts, step_metrics


def test_counts_of_a_steps_calls_are_summed_with_version_extremes_and_taken_once():
    counts = StepCounts()
    counts.add({"rollouts": 4, "failed": 1, "policy_version_min": 3, "policy_version_max": 3, "policy_versions": [3], "kind": "train", "batch_id": "b1"})
    counts.add({"rollouts": 2, "failed": 0, "policy_version_min": 2, "policy_version_max": 5, "drift_segments": 1, "flag": True})
    assert counts.take() == {"edge_rollout/rollouts": 6.0, "edge_rollout/failed": 1.0, "edge_rollout/policy_version_min": 2.0,
                             "edge_rollout/policy_version_max": 5.0, "edge_rollout/drift_segments": 1.0, "edge_rollout/generate_calls": 2.0}
    assert counts.take() == {}


def test_the_mixin_adds_the_metrics_to_compute_data_metrics_only_while_fit_runs():
    def compute_data_metrics(batch, use_critic):
        return {"critic/score/mean": 0.5}

    module = NS(compute_data_metrics=compute_data_metrics)

    class Fit:
        def fit(self):
            return module.compute_data_metrics(batch=None, use_critic=False)  # fit calls it by name (ray_trainer.py:1682)

    class Trainer(RolloutMetricsTrainerMixin, Fit):
        metrics_module = module

    trainer = Trainer()
    trainer.async_rollout_manager = NS(step_counts=StepCounts())
    trainer.async_rollout_manager.step_counts.add({"rollouts": 8, "placeholders": 2})
    trainer.last_expansion = {"segments": 3, "fillers": 1}
    assert trainer.fit() == {"critic/score/mean": 0.5, "edge_rollout/rollouts": 8.0, "edge_rollout/placeholders": 2.0,
                             "edge_rollout/generate_calls": 1.0, "edge_rollout/segments_appended": 3.0, "edge_rollout/filler_rows": 1.0}
    assert module.compute_data_metrics is compute_data_metrics
    assert step_metrics(NS()) == {}  # a trainer without the manager's counts adds nothing
