"""A stand-in for verl's agent-loop manager: rollouts run on edge-rollout, verl gets its batch.

verl is optional: this module imports without it, and returns a ``verl.DataProto`` only when
verl and torch are importable (a ``VerlBatch`` otherwise).

Example (in verl's trainer, in place of ``self.async_rollout_manager``)::

    from edge_rollout import Client
    from edge_rollout.verl import EdgeRolloutManager
    manager = EdgeRolloutManager.from_verl_config(Client(url), config, tokenizer, agent="calculator")
    gen_batch_output = manager.generate_sequences(gen_batch)   # gen_batch repeated n times, as verl passes it
"""
from __future__ import annotations

import time
import uuid
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from .batching import VerlBatch, to_verl_batch
from .client import DEFAULT_LEASE_MS, Client
from .errors import StreamTimeout

#: Columns of a verl RL row sent to edge-rollout; verl-internal ones (``agent_name`` naming a verl
#: agent loop, ``index``, ``raw_prompt_ids``, ``tools_kwargs``, …) stay behind.
ROW_COLUMNS = ("data_source", "ability", "reward_model", "extra_info")


def _plain(value: Any) -> Any:
    """numpy values (object arrays of messages, scalars) as plain Python, recursively."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def rows_of(prompts: Any, extra_columns: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The verl RL rows of ``prompts``: a list of row dicts (returned as is), or a DataProto-like
    batch (an object or dict with ``non_tensor_batch``, or a dict of columns) whose
    ``raw_prompt`` (else ``prompt``), ``data_source``, ``ability``, ``reward_model``,
    ``extra_info`` and ``extra_columns`` become each row."""
    if isinstance(prompts, (list, tuple)):
        return [dict(row) for row in prompts]
    columns = prompts.get("non_tensor_batch", prompts) if isinstance(prompts, Mapping) else getattr(prompts, "non_tensor_batch", None)
    if not isinstance(columns, Mapping):
        raise TypeError("prompts must be a list of rows, or a batch with non_tensor_batch (e.g. a verl DataProto)")
    prompt_key = "raw_prompt" if "raw_prompt" in columns else "prompt"
    if prompt_key not in columns:
        raise ValueError("prompts.non_tensor_batch has no raw_prompt or prompt column")
    rows = []
    for i in range(len(columns[prompt_key])):
        row: dict[str, Any] = {"prompt": _plain(columns[prompt_key][i])}
        for key in (*ROW_COLUMNS, *extra_columns):
            if key in columns:
                row[key] = _plain(columns[key][i])
        row.setdefault("reward_model", {"ground_truth": None})
        rows.append(row)
    return rows


def _meta_info(prompts: Any) -> Mapping[str, Any]:
    meta = prompts.get("meta_info") if isinstance(prompts, Mapping) else getattr(prompts, "meta_info", None)
    return meta if isinstance(meta, Mapping) else {}


def _input_uids(prompts: Any) -> Optional[Any]:
    columns = prompts.get("non_tensor_batch") if isinstance(prompts, Mapping) else getattr(prompts, "non_tensor_batch", None)
    return columns.get("uid") if isinstance(columns, Mapping) else None


def _placeholder(uid: str, index: int, member: Optional[Mapping[str, Any]], pad_token_id: int) -> dict[str, Any]:
    """A row for a rollout with no sample (failed before any call, unreadable record, missing
    from a partial group): one attended pad token, empty response, fully masked, flagged."""
    member = member or {}
    return {"uid": uid, "rollout_id": member.get("rollout_id", f"{uid}:{index}"), "sample_index": index, "segment_index": 0,
            "prompt_ids": [pad_token_id], "response_ids": [], "response_mask": [], "response_logprobs": [],
            "reward_score": float(member.get("reward") or 0.0), "num_turns": 0,
            "termination_reason": member.get("termination_reason"),
            "policy_version": {"start": member.get("policy_version_start", 0), "end": member.get("policy_version_end", 0)},
            "extra_fields": {"trainable": False, "failed": True, "placeholder": True, "record_error": member.get("record_error")}}


class EdgeRolloutManager:
    """Runs verl's rollouts on edge-rollout: submit rows × n, wait for the groups, pad them.

    ``agent`` is the registered edge-rollout agent; ``n`` is ``rollout.n`` (``val_n`` for
    validation batches, default 1); ``prompt_length`` / ``response_length`` / ``pad_token_id``
    shape the arrays (see ``to_verl_batch``). Options: ``config`` (RolloutConfig for every
    rollout), ``training_mode`` (default ``"verl/hybrid"``), ``max_concurrent``, ``run_id``
    (batch ids are ``<run_id>-s<global_steps>``; default a random id), ``timeout`` (default 1800 s:
    the longest wait for all of a batch's groups, then ``StreamTimeout``), ``lease_ms``, ``truncation`` (default ``"left"``),
    ``mask_untrainable`` (default True), ``return_tensors`` (default ``"pt"`` when torch is
    installed, else ``"np"``), ``extra_columns`` (more row columns to send).
    """

    def __init__(self, client: Client, agent: str, n: int, prompt_length: int, response_length: int,
                 pad_token_id: int, *, val_n: int = 1, config: Optional[Mapping[str, Any]] = None,
                 training_mode: str = "verl/hybrid", max_concurrent: Optional[int] = None,
                 run_id: Optional[str] = None, timeout: float = 1800.0, lease_ms: int = DEFAULT_LEASE_MS,
                 poll_interval: float = 0.5, truncation: str = "left", mask_untrainable: bool = True,
                 return_tensors: Optional[str] = None, extra_columns: Sequence[str] = ()):
        if n < 1 or val_n < 1:
            raise ValueError("n and val_n must be >= 1")
        self.client, self.agent, self.n, self.val_n = client, agent, n, val_n
        self.prompt_length, self.response_length, self.pad_token_id = prompt_length, response_length, pad_token_id
        self.config, self.training_mode, self.max_concurrent = config, training_mode, max_concurrent
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.timeout, self.lease_ms, self.poll_interval = timeout, lease_ms, poll_interval
        self.truncation, self.mask_untrainable, self.extra_columns = truncation, mask_untrainable, tuple(extra_columns)
        self.return_tensors = return_tensors or ("pt" if _importable("torch") else "np")

    @classmethod
    def from_verl_config(cls, client: Client, config: Any, tokenizer: Any, agent: str, **options: Any) -> "EdgeRolloutManager":
        """Reads ``n``, ``prompt_length``, ``response_length`` from ``config.actor_rollout_ref.rollout``,
        ``val_kwargs.n``, ``config.data.truncation`` and the tokenizer's ``pad_token_id``."""
        rollout = config.actor_rollout_ref.rollout
        truncation = getattr(getattr(config, "data", None), "truncation", "left")
        options.setdefault("truncation", truncation if truncation in ("left", "right", "middle", "error") else "left")
        options.setdefault("val_n", getattr(getattr(rollout, "val_kwargs", None), "n", 1) or 1)
        return cls(client, agent, rollout.n, rollout.prompt_length, rollout.response_length, tokenizer.pad_token_id, **options)

    def generate_sequences(self, prompts: Any) -> Any:
        """verl's ``generate_sequences``: ``prompts`` is the generation batch **already repeated**
        ``n`` times, interleaved (row r's copies at r·n … r·n+n-1), as verl's trainer passes it.
        Returns one padded row per input row, aligned with it, as a ``DataProto`` when verl and
        torch are importable, else a ``VerlBatch``. So that verl's ``batch.union(output)`` holds,
        ``uid`` is the input's ``uid`` column when it has one, and absent otherwise (verl then
        assigns its own per prompt, which groups the rows the same way)."""
        meta = _meta_info(prompts)
        n = self.val_n if meta.get("validate") else self.n
        repeated = rows_of(prompts, self.extra_columns)
        if len(repeated) % n:
            raise ValueError(f"prompts has {len(repeated)} rows, not a multiple of n={n}")
        return self._run(repeated[::n], n, meta, _input_uids(prompts), keep_uid=False)

    def rollout(self, rows: Any, validate: bool = False) -> Any:
        """Runs distinct ``rows`` (a list of verl RL rows or a batch) ``n`` times each and returns
        rows × n padded rows in row-major order (row r's samples at r·n … r·n+n-1)."""
        return self._run(rows_of(rows, self.extra_columns), self.val_n if validate else self.n, {"validate": validate}, None, keep_uid=True)

    def wake_up(self) -> None:
        """No-op: the model servers live behind edge-rollout (sync weights with ``Client.begin_sync`` / ``end_sync``)."""

    def sleep(self) -> None:
        """No-op, like ``wake_up``."""

    def _run(self, rows: list[dict[str, Any]], n: int, meta: Mapping[str, Any], uids: Optional[Any], keep_uid: bool) -> Any:
        started = time.monotonic()
        step = meta.get("global_steps")
        batch_id = f"{self.run_id}-s{step}" if step is not None else f"{self.run_id}-{uuid.uuid4().hex[:8]}"
        batch_id += "-val" if meta.get("validate") else ""
        self.client.submit_batch(rows, agent=self.agent, n=n, mode="val" if meta.get("validate") else "train",
                                 batch_id=batch_id, config=self.config, max_concurrent=self.max_concurrent,
                                 training_mode=self.training_mode, data_manager="train")
        groups = self._collect(batch_id, len(rows))
        samples, stats = self._aligned(batch_id, len(rows), n, groups)
        out = to_verl_batch(samples, self.prompt_length, self.response_length, self.pad_token_id, truncation=self.truncation,
                            mask_untrainable=self.mask_untrainable, return_tensors=self.return_tensors)
        if uids is not None and len(uids) == len(samples):
            out.non_tensor_batch["uid"] = np.array(uids, dtype=object)
        elif not keep_uid:
            del out.non_tensor_batch["uid"]
        elapsed = time.monotonic() - started
        out.meta_info.update({"timing": {"edge_rollout/generate_sequences": elapsed},
                              "edge_rollout": {"batch_id": batch_id, **stats}})
        return out.to_data_proto() if self.return_tensors == "pt" and _importable("verl") else out

    def _collect(self, batch_id: str, rows: int) -> dict[str, Mapping[str, Any]]:
        """Pulls this batch's groups (the feed leases no other consumer's) until all arrived."""
        got: dict[str, Mapping[str, Any]] = {}
        deadline = time.monotonic() + self.timeout
        try:
            stream = self.client.stream_groups(max_groups=rows, limit=rows, poll_interval=self.poll_interval, timeout=self.timeout,
                                               lease_ms=self.lease_ms, batch_id=batch_id, training_mode=self.training_mode)
            for group in stream:
                got[group["uid"]] = group
                if time.monotonic() > deadline and len(got) < rows:
                    stream.close()  # the open lease is not acked: its groups come back
                    raise StreamTimeout("deadline passed")
        except StreamTimeout:
            progress = self.client.batch_status(batch_id)
            raise StreamTimeout(f"batch {batch_id}: {len(got)}/{rows} groups after {self.timeout:g} s; "
                                f"counts {progress.get('counts')}") from None
        return got

    def _aligned(self, batch_id: str, rows: int, n: int, groups: Mapping[str, Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], dict[str, int]]:
        """One sample per rollout in (row, sample) order: its last segment, or a placeholder."""
        samples: list[Mapping[str, Any]] = []
        placeholders = dropped_segments = 0
        for r in range(rows):
            uid = f"{batch_id}:{r}"
            members = {member["sample_index"]: member for member in groups[uid]["members"]}
            for k in range(n):
                member = members.get(k)
                own = sorted((member or {}).get("samples") or [], key=lambda sample: sample.get("segment_index", 0))
                if own:
                    samples.append(own[-1])
                    dropped_segments += len(own) - 1
                else:
                    samples.append(_placeholder(uid, k, member, self.pad_token_id))
                    placeholders += 1
        return samples, {"placeholders": placeholders, "dropped_segments": dropped_segments}


def _importable(name: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(name) is not None


__all__ = ["EdgeRolloutManager", "VerlBatch", "rows_of"]
