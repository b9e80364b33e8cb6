"""DAPO's dynamic sampling for ``EdgeRolloutTrainer``: every training batch holds only prompts whose
groups carry signal, refilled from the dataloader, with the filtering and the cut done by the service.

verl-recipe's DAPO trainer (``dapo/dapo_ray_trainer.py`` at dd811fe, ``RayDAPOTrainer.fit``) does,
per step: generate a dataloader batch, score it, keep the uids whose ``filter_groups.metric`` has
``np.std > 0`` (or a single sample), and while fewer than ``data.train_batch_size`` prompts are kept,
draw the next dataloader batch (``num_gen_batches``), up to ``filter_groups.max_num_gen_batches``
(≤ 0: no limit; reached: ``ValueError``); then trim to ``train_batch_size × n`` rows. Stock
``RayPPOTrainer.fit`` has no such loop (only the config dataclass exists), and its
``generate_sequences`` must answer one row per input row.

``DapoBatches`` keeps verl's fit as it is by running that loop *before* fit sees a batch: it wraps
``train_dataloader``; for each step it submits dataloader batches to edge-rollout with a
``filter`` and ``target_groups`` (the prompts still missing), so the service drops groups without
signal, re-runs infrastructure failures and cancels the surplus once the target is met; it keeps the
delivered groups, and yields a batch of exactly ``train_batch_size`` kept prompts, each tagged
(``edge_rollout_group``) with its service group. When fit calls ``generate_sequences`` on that
batch, the manager answers from those groups without rolling out again.
"""
from __future__ import annotations

import time
from typing import Any, Iterator, Mapping

import numpy as np

from ..errors import StreamTimeout
from .generate_sequences import PRESAMPLED, EdgeRolloutManager, rows_of

#: verl's ``filter_groups.metric`` names → the batch filter's metric (``acc`` is a reward dimension the agent declares).
METRICS = {"seq_reward": "reward", "seq_final_reward": "reward", "score": "reward", "acc": "acc"}


def _get(node: Any, key: str, default: Any = None) -> Any:
    if isinstance(node, Mapping):
        return node.get(key, default)
    return getattr(node, key, default)


def _rows_of_dict(batch_dict: Mapping[str, Any], extra_columns: tuple) -> list[dict[str, Any]]:
    columns = {key: value for key, value in batch_dict.items() if isinstance(value, np.ndarray) and value.dtype == object}
    return rows_of({"non_tensor_batch": columns}, extra_columns)


def _take(batch_dicts: list[Mapping[str, Any]], picks: list[tuple[int, int]]) -> dict[str, Any]:
    """The rows ``picks`` ((batch, row) pairs) of ``batch_dicts``, as one batch dict of the same keys."""
    out: dict[str, Any] = {}
    for key in batch_dicts[0]:
        parts = [batch_dicts[b][key][[r]] for b, r in picks]
        first = parts[0]
        if hasattr(first, "dim") and hasattr(first, "new_empty"):  # torch, without importing it here
            import torch
            out[key] = torch.cat(parts, dim=0)
        else:
            out[key] = np.concatenate(parts, axis=0)
    return out


def sample_signal_groups(manager: EdgeRolloutManager, rows: list[dict[str, Any]], need: int, metric: str, step: Any) -> dict[int, Mapping[str, Any]]:
    """Rolls ``rows`` out ``manager.n`` times as one filtered batch that stops at ``need`` groups with
    signal; returns the delivered groups by row index (dropped and cut rows are absent)."""
    manager.calls += 1
    batch_id = f"{manager.run_id}-s{step}-dapo{manager.calls}"
    manager.client.submit_batch(rows, agent=manager.agent, n=manager.n, mode="train", batch_id=batch_id, config=manager.config,
                                max_concurrent=manager.max_concurrent, training_mode=manager.training_mode, data_manager="train",
                                target_groups=min(need, len(rows)), filter={"metric": metric})
    deadline = time.monotonic() + manager.timeout
    while not (progress := manager.client.batch_status(batch_id))["done"]:
        if time.monotonic() > deadline:
            raise StreamTimeout(f"batch {batch_id} not done after {manager.timeout:g} s; counts {progress.get('counts')}")
        time.sleep(manager.poll_interval)
    delivered = progress["groups"]["delivered"]
    got: dict[int, Mapping[str, Any]] = {}
    if delivered:
        for group in manager.client.stream_groups(max_groups=delivered, poll_interval=manager.poll_interval, timeout=max(deadline - time.monotonic(), 1),
                                                  lease_ms=manager.lease_ms, batch_id=batch_id, training_mode=manager.training_mode,
                                                  on_dropped=lambda _group: None):
            got[int(group["uid"].rsplit(":", 1)[1])] = group
            if len(got) >= delivered:
                break
    return got


class DapoBatches:
    """``train_dataloader`` for a DAPO step (see the module doc): each batch is ``train_batch_size``
    prompts whose groups carry signal. ``len()`` is the wrapped loader's (one step may use several
    of its batches, as DAPO's ``gen_steps`` do)."""

    def __init__(self, dataloader: Any, manager: EdgeRolloutManager, train_batch_size: int, filter_groups: Any):
        metric = _get(filter_groups, "metric") or "seq_reward"
        self.dataloader, self.manager, self.train_batch_size = dataloader, manager, int(train_batch_size)
        self.metric = METRICS.get(metric, metric)
        self.max_num_gen_batches = int(_get(filter_groups, "max_num_gen_batches", 0) or 0)
        #: Per yielded step: how many dataloader batches it took and how many groups were kept.
        self.steps: list[dict[str, int]] = []

    def __len__(self) -> int:
        return len(self.dataloader)

    def __getattr__(self, name: str) -> Any:
        # state_dict / load_state_dict (fit checkpoints a StatefulDataLoader), sampler, dataset, …
        return getattr(self.dataloader, name)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        source = iter(self.dataloader)
        while True:
            drawn: list[Mapping[str, Any]] = []
            picks: list[tuple[int, int, Mapping[str, Any]]] = []
            while len(picks) < self.train_batch_size:
                if self.max_num_gen_batches > 0 and len(drawn) >= self.max_num_gen_batches:
                    raise ValueError(f"num_gen_batches={len(drawn)} >= max_num_gen_batches={self.max_num_gen_batches} with "
                                     f"{len(picks)} of {self.train_batch_size} prompts kept: the data may be too hard or too easy "
                                     "(max_num_gen_batches=0 keeps drawing)")
                try:
                    batch_dict = next(source)
                except StopIteration:
                    return  # an epoch's remainder that cannot fill a step is not trained (as DAPO's loop ends with its dataloader)
                drawn.append(batch_dict)
                groups = sample_signal_groups(self.manager, _rows_of_dict(batch_dict, self.manager.extra_columns),
                                              self.train_batch_size - len(picks), self.metric, len(self.steps) + 1)
                for row, group in sorted(groups.items()):
                    picks.append((len(drawn) - 1, row, group))
            picks = picks[: self.train_batch_size]  # DAPO trims the surplus the same way
            for _, _, group in picks:
                self.manager.presampled[group["uid"]] = group
            batch = _take(drawn, [(b, r) for b, r, _ in picks])
            batch[PRESAMPLED] = np.array([group["uid"] for _, _, group in picks], dtype=object)
            self.steps.append({"gen_batches": len(drawn), "kept": len(picks)})
            yield batch


__all__ = ["DapoBatches", "sample_signal_groups"]
