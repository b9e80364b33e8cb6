"""verl's trainer with edge-rollout: every weight update bracketed by the policy's sync handshake.

In ``RayPPOTrainer.fit`` weights reach the rollout replicas only through the checkpoint manager:
``update_weights()`` once before training and after every actor update, ``sleep_replicas()`` after
every ``generate_sequences`` and before a checkpoint reload (ray_trainer.py:1324, 1397, 1417,
1610-1611, 1652-1655; checkpoint_engine/base.py:371-379). ``bracket_weight_sync`` wraps both: the
first call that takes the replicas away (sleep or update) opens ``POST /v1/policy/sync/begin``
(new model calls wait, in-flight ones drain), and the end of ``update_weights`` closes it with
``sync/end(version + 1)``, so every model call records the weights that produced it.

Entry point (with verl installed)::

    python3 -m edge_rollout.verl.main <verl's usual ppo_trainer overrides> \\
        +edge_rollout.url=http://127.0.0.1:8787 +edge_rollout.agent=calculator

It is verl's ``main_ppo`` with ``EdgeRolloutTrainer`` in place of ``RayPPOTrainer`` and
``EdgeRolloutAgentLoopManager`` as ``agent_loop_manager_class``; see ``docs/verl.md``.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Optional

from ..client import Client
from .dapo import DapoBatches
from .drift_segments import DriftSegmentsTrainerMixin
from .metrics import RolloutMetricsTrainerMixin

#: How long ``sync/begin`` waits for in-flight model calls before weights move: 60 s.
SYNC_WAIT_MS = 60_000


class WeightSyncBracket:
    """The sync state of one trainer: ``versions`` lists every version ``end_sync`` made live."""

    def __init__(self, client: Client, wait_ms: int = SYNC_WAIT_MS):
        self.client, self.wait_ms = client, wait_ms
        self.open = False
        self.versions: list[int] = []
        self.version: Optional[int] = None

    def begin(self) -> None:
        """Opens the sync (idempotent while open): new model calls wait until ``end``."""
        if self.open:
            return
        began = self.client.begin_sync(wait_ms=self.wait_ms)
        self.version = int(began["policy_version"])
        self.open = True

    def end(self) -> int:
        """Closes the sync with the next version and returns it."""
        version = (self.version if self.version is not None else int(self.client.policy()["policy_version"])) + 1
        self.client.end_sync(version)
        self.open, self.version = False, version
        self.versions.append(version)
        return version


def bracket_weight_sync(checkpoint_manager: Any, client: Client, wait_ms: int = SYNC_WAIT_MS) -> WeightSyncBracket:
    """Wraps ``checkpoint_manager.sleep_replicas`` / ``update_weights`` in place (see the module doc)."""
    bracket = WeightSyncBracket(client, wait_ms)
    sleep: Callable[..., Any] = checkpoint_manager.sleep_replicas
    update: Callable[..., Any] = checkpoint_manager.update_weights

    @functools.wraps(sleep)
    def sleep_replicas(*args: Any, **kwargs: Any) -> Any:
        bracket.begin()
        return sleep(*args, **kwargs)

    @functools.wraps(update)
    def update_weights(*args: Any, **kwargs: Any) -> Any:
        bracket.begin()
        result = update(*args, **kwargs)
        bracket.end()
        return result

    checkpoint_manager.sleep_replicas, checkpoint_manager.update_weights = sleep_replicas, update_weights
    return bracket


def wire_trainer(trainer: Any) -> None:
    """What ``EdgeRolloutTrainer.init_workers`` adds once verl's workers and managers exist: the
    weight-sync bracket, and every drift segment trained unless rewards are computed
    asynchronously (``reward_model.launch_reward_fn_async`` skips ``_compute_or_extract_reward``,
    ray_trainer.py:1477-1484, where the segments are appended; they are then counted, not trained)."""
    manager = trainer.async_rollout_manager
    trainer.weight_sync = bracket_weight_sync(trainer.checkpoint_manager, manager.client)
    # DAPO's dynamic sampling (algorithm.filter_groups), which stock fit ignores: the service filters
    # and cuts, DapoBatches refills each step from the dataloader (dapo).
    filter_groups = getattr(getattr(trainer.config, "algorithm", None), "filter_groups", None)
    if filter_groups is not None and bool(getattr(filter_groups, "enable", False)):
        trainer.train_dataloader = DapoBatches(trainer.train_dataloader, manager, trainer.config.data.train_batch_size, filter_groups)
    reward_model = getattr(trainer.config, "reward_model", None)
    manager.train_drift_segments = not bool(getattr(reward_model, "launch_reward_fn_async", False))


try:  # verl is optional: the trainer subclass exists only where it is installed.
    import verl.trainer.ppo.ray_trainer as verl_ray_trainer
    from verl.trainer.ppo.ray_trainer import RayPPOTrainer
except ImportError:  # pragma: no cover - exercised wherever verl is absent
    RayPPOTrainer = None

if RayPPOTrainer is not None:  # pragma: no cover - needs verl and GPUs

    class EdgeRolloutTrainer(RolloutMetricsTrainerMixin, DriftSegmentsTrainerMixin, RayPPOTrainer):
        """``RayPPOTrainer`` whose weight updates are bracketed by edge-rollout's sync handshake,
        which trains every drift segment of a rollout (``drift_segments``) and logs the manager's
        counts as ``edge_rollout/*`` step metrics (``metrics``)."""

        advantage_module = metrics_module = verl_ray_trainer

        def init_workers(self) -> None:
            super().init_workers()
            wire_trainer(self)


__all__ = ["SYNC_WAIT_MS", "WeightSyncBracket", "bracket_weight_sync", "wire_trainer"]
if RayPPOTrainer is not None:  # pragma: no cover - needs verl
    __all__.append("EdgeRolloutTrainer")
