"""edge-rollout inside verl's trainer: rollouts run on edge-rollout, verl trains on its batches.

verl is optional: every module here imports without it (``trainer`` defines ``EdgeRolloutTrainer``
only where verl is installed). Where each part lives (see ``docs/verl.md``):

* ``generate_sequences``: ``EdgeRolloutManager``, verl's ``generate_sequences`` on edge-rollout;
* ``agent_loop_manager``: ``EdgeRolloutAgentLoopManager``, the class verl's
  ``agent_loop_manager_class`` names;
* ``main``: ``python3 -m edge_rollout.verl.main``, verl's ``main_ppo`` with both of ours;
* ``trainer``: ``EdgeRolloutTrainer`` and the weight-sync bracket;
* ``call_plan`` (which call, how many samples), ``output`` (the batch verl gets back), ``metrics``
  (``edge_rollout/*`` step metrics), ``validity`` (invalid rows out of the advantage),
  ``drift_segments`` (every segment of a drifted rollout trained), ``dapo`` (DAPO's dynamic sampling).

This package's own names are those ``edge_rollout.verl`` had as one module.
"""
from .generate_sequences import PRESAMPLED, ROW_COLUMNS, EdgeRolloutManager, VerlBatch, rows_of

__all__ = ["EdgeRolloutManager", "VerlBatch", "rows_of", "PRESAMPLED", "ROW_COLUMNS"]
