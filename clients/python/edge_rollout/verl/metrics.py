"""The manager's counts in verl's step metrics as ``edge_rollout/*``, not as timings.

What ``RayPPOTrainer.fit`` logs, at the commit pinned in docs/verl.md: ``generate_sequences``'s
``meta_info["timing"]`` is merged into ``timing_raw`` (ray_trainer.py:1401) and logged as
``timing_s/<key>`` (metric_utils.py:261-262), so anything there reads as seconds; nothing else of
the rollout output reaches ``metrics``, which fit fills from the workers' outputs and, at the end
of the step, from ``compute_data_metrics(batch=, use_critic=)`` called by its name in
``ray_trainer``'s namespace (ray_trainer.py:1682) right before ``logger.log`` (1697). So:

* ``meta_info["timing"]`` carries only durations (``edge_rollout/generate_sequences``,
  ``edge_rollout/wait_s``);
* the manager sums the counts of the step's training ``generate_sequences`` calls
  (``StepCounts``; validation and REMAX's greedy call are not the trained batch);
* ``EdgeRolloutTrainer`` (``RolloutMetricsTrainerMixin``) wraps ``compute_data_metrics`` for the
  length of ``fit`` and adds them, with the drift-segment expansion's counts, as
  ``edge_rollout/<count>``.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

#: Counts that are extremes across the step's calls, not sums.
MINIMA, MAXIMA = ("policy_version_min",), ("policy_version_max",)


class StepCounts:
    """The counts of the training calls since the last ``take``: sums, except the version extremes."""

    def __init__(self) -> None:
        self.counts: dict[str, float] = {}
        self.calls = 0

    def add(self, counts: Mapping[str, Any]) -> None:
        """Adds one call's counts (numbers only; lists, strings and flags are skipped)."""
        self.calls += 1
        for key, value in counts.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            if key in self.counts and key in MINIMA:
                self.counts[key] = min(self.counts[key], float(value))
            elif key in self.counts and key in MAXIMA:
                self.counts[key] = max(self.counts[key], float(value))
            else:
                self.counts[key] = self.counts.get(key, 0.0) + float(value)

    def take(self) -> dict[str, float]:
        """The counts so far, as metrics (``edge_rollout/<count>``), and a fresh start."""
        taken = {f"edge_rollout/{key}": value for key, value in sorted(self.counts.items())}
        if self.calls:
            taken["edge_rollout/generate_calls"] = float(self.calls)
        self.counts, self.calls = {}, 0
        return taken


def step_metrics(trainer: Any) -> dict[str, float]:
    """The ``edge_rollout/*`` metrics of the step ``trainer`` just ran (its manager's counts since
    the last step, and the drift segments its last expansion appended)."""
    manager = getattr(trainer, "async_rollout_manager", None)
    counts: Optional[StepCounts] = getattr(manager, "step_counts", None)
    metrics = counts.take() if counts is not None else {}
    expansion = getattr(trainer, "last_expansion", None)
    if isinstance(expansion, Mapping):
        metrics["edge_rollout/segments_appended"] = float(expansion.get("segments", 0))
        metrics["edge_rollout/filler_rows"] = float(expansion.get("fillers", 0))
    return metrics


class RolloutMetricsTrainerMixin:
    """Adds ``step_metrics`` to every training step's metrics (see the module doc). Put it before
    ``RayPPOTrainer`` in the bases; ``metrics_module`` is the module whose ``compute_data_metrics``
    fit calls by name (verl's ``ray_trainer``); without one, ``advantage_module`` is used."""

    metrics_module: Optional[Any] = None

    def fit(self) -> Any:
        module = self.metrics_module or getattr(self, "advantage_module", None)
        original = getattr(module, "compute_data_metrics", None) if module is not None else None
        if original is None:
            return super().fit()  # type: ignore[misc]

        def compute_data_metrics(*args: Any, **kwargs: Any) -> dict[str, Any]:
            metrics = dict(original(*args, **kwargs))
            metrics.update(step_metrics(self))
            return metrics

        module.compute_data_metrics = compute_data_metrics
        try:
            return super().fit()  # type: ignore[misc]
        finally:
            module.compute_data_metrics = original


__all__ = ["RolloutMetricsTrainerMixin", "StepCounts", "step_metrics"]
