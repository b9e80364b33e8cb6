"""What the verl contract tests stand on: a fake edge-rollout service and verl's DataProto semantics.

``MiniDataProto`` re-states (numpy only; verl and tensordict are not installable here) the parts of
verl's ``DataProto`` the trainer's call sequence uses, at the commit pinned in docs/verl.md:
``repeat(interleave=True)`` (protocol.py:982-1020), ``pad_dataproto_to_divisor`` /
``unpad_dataproto`` (protocol.py:73-106), ``union`` with its equality checks
(protocol.py:108-121, 187-198, 806-808; py_functional.py:149-163), ``pop`` and ``deepcopy``.
"""
from __future__ import annotations

import copy
import importlib
import sys
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional

import numpy as np

from fake_server import FakeServer, group, pulled, sample


class MiniDataProto:
    """``batch`` (arrays), ``non_tensor_batch`` (object arrays) and ``meta_info``, with verl's rules."""

    def __init__(self, batch: Optional[dict] = None, non_tensor_batch: Optional[dict] = None, meta_info: Optional[dict] = None):
        self.batch, self.non_tensor_batch, self.meta_info = dict(batch or {}), dict(non_tensor_batch or {}), dict(meta_info or {})

    def __len__(self) -> int:
        source = self.batch or self.non_tensor_batch
        return len(next(iter(source.values()))) if source else 0

    def take(self, rows: Any) -> "MiniDataProto":
        return MiniDataProto({k: _rows(v, rows) for k, v in self.batch.items()},
                             {k: v[rows] for k, v in self.non_tensor_batch.items()}, dict(self.meta_info))

    def __getitem__(self, rows: Any) -> "MiniDataProto":
        """``data[list]``: the rows' copy, as ``DataProto.__getitem__`` → ``select_idxs`` (protocol.py:354-376)."""
        return self.take(list(rows))

    def repeat(self, repeat_times: int, interleave: bool = True) -> "MiniDataProto":
        assert interleave, "the trainer always interleaves"
        return MiniDataProto({k: np.repeat(np.asarray(v), repeat_times, axis=0) for k, v in self.batch.items()},
                             {k: np.repeat(v, repeat_times, axis=0) for k, v in self.non_tensor_batch.items()}, dict(self.meta_info))

    def union(self, other: Any) -> "MiniDataProto":
        assert len(self) == len(other) or not self.batch or not other.batch, f"batch sizes {len(self)} != {len(other)}"
        for key, value in other.batch.items():
            if key in self.batch:
                assert np.array_equal(np.asarray(self.batch[key]), np.asarray(value)), f"{key} differs"
            self.batch[key] = value
        for key, value in other.non_tensor_batch.items():
            if key in self.non_tensor_batch:
                assert self.non_tensor_batch[key].tolist() == value.tolist(), f"`{key}` in tensor_dict1 and tensor_dict2 are not the same object."
            self.non_tensor_batch[key] = value
        for key, value in other.meta_info.items():
            if key in self.meta_info:
                assert self.meta_info[key] == value, f"{key} in meta_dict1 and meta_dict2 are not the same object"
            self.meta_info[key] = value
        return self

    def pop(self, batch_keys: list[str]) -> None:
        for key in batch_keys:
            self.batch.pop(key)

    @staticmethod
    def concat(items: list["MiniDataProto"]) -> "MiniDataProto":
        first = items[0]
        return MiniDataProto({k: _cat([i.batch[k] for i in items]) for k in first.batch},
                             {k: np.concatenate([i.non_tensor_batch[k] for i in items]) for k in first.non_tensor_batch}, dict(first.meta_info))


def _rows(value: Any, rows: Any) -> Any:
    """Rows of a numpy array or a torch tensor (kept a tensor, as a TensorDict keeps it)."""
    return value[rows] if hasattr(value, "detach") else np.asarray(value)[rows]


def _cat(values: list[Any]) -> Any:
    if hasattr(values[0], "detach"):
        import torch
        return torch.cat(values)
    return np.concatenate([np.asarray(v) for v in values])


def pad_to_divisor(data: MiniDataProto, size_divisor: int) -> tuple[MiniDataProto, int]:
    """verl's ``pad_dataproto_to_divisor``: appends copies of the first rows."""
    if len(data) % size_divisor == 0:
        return data, 0
    pad_size = size_divisor - len(data) % size_divisor
    pieces, remaining = [data], pad_size
    while remaining > 0:
        take = min(remaining, len(data))
        pieces.append(data.take(slice(0, take)))
        remaining -= take
    return MiniDataProto.concat(pieces), pad_size


def unpad(data: Any, pad_size: int) -> MiniDataProto:
    """verl's ``unpad_dataproto``: drops the last ``pad_size`` rows."""
    batch = MiniDataProto(data.batch, data.non_tensor_batch, data.meta_info)
    return batch.take(slice(0, len(batch) - pad_size)) if pad_size else batch


def objects(values: list[Any]) -> np.ndarray:
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


class FakeEdgeRollout:
    """The edge-rollout routes a manager and the sync bracket use, answering every batch at once."""

    def __init__(self, server: FakeServer, response: Any = None, dropped_rows: frozenset = frozenset()):
        self.server, self.batches, self.version = server, {}, 3
        self.response = response or (lambda batch_id, r, k: [10 + r, 20 + k])
        #: Rows whose group the feed reports dropped as stale (on every pull naming the batch) instead of delivering.
        self.dropped_rows = dropped_rows
        server.route("POST", "/v1/batches", self._submit)
        server.route("POST", "/v1/feed/pull", self._pull)
        server.route("POST", "/v1/feed/ack", lambda body: (200, {"lease_id": body["lease_id"], "acked_groups": 1, "already": False}, {}))
        server.route("PUT", "/v1/policy", lambda body: (200, {"policy_version": self.version, **body}, {}))
        server.route("GET", "/v1/policy", lambda body: (200, {"policy_version": self.version}, {}))
        server.route("POST", "/v1/policy/sync/begin", lambda body: (200, {"policy_version": self.version, "syncing": True, "in_flight": 0}, {}))
        server.route("POST", "/v1/policy/sync/end", self._end)

    def _submit(self, body: dict) -> tuple:
        assert body["batch_id"] not in self.batches, f"batch id {body['batch_id']} reused"
        self.batches[body["batch_id"]] = body
        return 202, {"batch_id": body["batch_id"], "rollouts": len(body["rows"]) * body["n"]}, {}

    def _pull(self, body: dict) -> tuple:
        (batch_id,) = body["batch_id"]
        submitted = self.batches.pop(batch_id, None) or self.batches.get(f"{batch_id}/done")
        dropped = [{"uid": f"{batch_id}:{r}", "batch_id": batch_id, "training_mode": "verl/hybrid", "reason": "stale", "group_size": submitted["n"],
                    "arrived": submitted["n"], "max_staleness": 0, "policy_version_start": self.version - 1, "policy_version_end": self.version - 1,
                    "policy_version": self.version, "dropped_at": 0} for r in sorted(self.dropped_rows)] if submitted else []
        if submitted is None or f"{batch_id}/done" in self.batches:
            return 200, {"lease_id": None, "lease_expires_at": None, "policy_version": self.version, "dropped_stale": 0, "dropped_groups": dropped, "groups": []}, {}
        groups = [group(f"{batch_id}:{r}", [sample(f"{batch_id}:{r}", k, [1, 2], self.response(batch_id, r, k), reward=float(k))
                                            for k in range(submitted["n"])])
                  for r in range(len(submitted["rows"])) if r not in self.dropped_rows]
        self.batches[f"{batch_id}/done"] = submitted
        return 200, {**pulled(f"L-{batch_id}", *groups), "dropped_groups": dropped}, {}

    def _end(self, body: dict) -> tuple:
        self.version = body["policy_version"]
        return 200, {"policy_version": self.version, "syncing": False}, {}

    def submitted(self) -> list[dict]:
        """Every batch submitted so far, in order."""
        return self.server.bodies("POST", "/v1/batches")


def stand_in_packages(root: Path, files: Mapping[str, str], fresh: tuple[str, ...] = ()) -> Iterator[None]:
    """Makes the modules in ``files`` (``"verl/trainer/main_ppo.py": source``; every folder gets an
    ``__init__.py``) importable from ``root`` while the generator is suspended, with ``fresh``
    modules imported again over them; afterwards every module they touched is forgotten."""
    tops = {path.split("/", 1)[0] for path in files}
    for path, source in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        folder = target.parent
        while folder != root:
            (folder / "__init__.py").touch()
            folder = folder.parent
        target.write_text(source)

    def forget() -> None:
        for name in [name for name in sys.modules if name.split(".", 1)[0] in tops or name in fresh]:
            sys.modules.pop(name, None)

    forget()
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    try:
        yield
    finally:
        sys.path.remove(str(root))
        forget()
