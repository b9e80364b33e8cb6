"""verl's ``generate_sequences`` on edge-rollout: rollouts run on edge-rollout, verl gets its batch.

verl is optional: this module imports without it, and returns a ``verl.DataProto`` only when
verl and torch are importable (a ``VerlBatch`` otherwise). ``edge_rollout.verl.agent_loop_manager`` wraps
it in the shape verl's ``agent_loop_manager_class`` hook constructs; see ``docs/verl.md``.

Example (driving it by hand)::

    from edge_rollout import Client
    from edge_rollout.verl import EdgeRolloutManager
    manager = EdgeRolloutManager.from_verl_config(Client(url), config, tokenizer, agent="calculator")
    gen_batch_output = manager.generate_sequences(gen_batch)   # gen_batch repeated n times, as verl passes it
"""
from __future__ import annotations

import time
import uuid
import warnings
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from ..batching import VerlBatch, to_verl_batch
from ..client import DEFAULT_LEASE_MS, Client
from ..errors import GroupsDropped, StreamTimeout
from ..stream import why_dropped
from .call_plan import CallPlan, call_kind, plan_call, sampling_config
from .drift_segments import attach_earlier_segments
from .metrics import StepCounts
from .output import shape_output, verl_turns
from .validity import VALID

#: Non-tensor column ``DapoBatches`` adds: the service group uid a row was already rolled out as.
PRESAMPLED = "edge_rollout_group"

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
    """Runs verl's rollouts on edge-rollout: one batch per call, rows × n, answered aligned.

    ``agent`` is the registered edge-rollout agent; ``n`` / ``val_n`` are ``rollout.n`` /
    ``val_kwargs.n``, used only when the input has no ``uid`` column (verl always sets one; the
    group size is then read from it, see ``call_plan``); ``prompt_length`` / ``response_length`` /
    ``pad_token_id`` shape the arrays (see ``to_verl_batch``). Options: ``rollout`` (verl's
    ``actor_rollout_ref.rollout`` config, for temperature / top_p / val_kwargs), ``config``
    (RolloutConfig for every rollout), ``training_mode`` (default ``"verl/hybrid"``),
    ``max_concurrent``, ``run_id`` (batch ids are ``<run_id>-s<step>-<kind><call>``; default a
    random id), ``timeout`` (default 1800 s: the longest wait for a batch's groups, then
    ``StreamTimeout``), ``lease_ms``, ``truncation`` (default ``"left"``), ``mask_untrainable``
    (default True), ``return_tensors`` (default ``"pt"`` when torch is installed, else ``"np"``),
    ``extra_columns`` (more row columns to send), ``on_dropped`` (``"mask"``, the default: a
    group the feed dropped as too stale answers its rows with masked placeholders, counted as
    ``edge_rollout/dropped_groups`` and warned about; ``"raise"``: ``GroupsDropped``). Either way
    the call ends as soon as every group arrived or was dropped, not at ``timeout``.
    """

    def __init__(self, client: Client, agent: str, n: int, prompt_length: int, response_length: int,
                 pad_token_id: int, *, val_n: int = 1, rollout: Any = None, config: Optional[Mapping[str, Any]] = None,
                 training_mode: str = "verl/hybrid", max_concurrent: Optional[int] = None,
                 run_id: Optional[str] = None, timeout: float = 1800.0, lease_ms: int = DEFAULT_LEASE_MS,
                 poll_interval: float = 0.5, truncation: str = "left", mask_untrainable: bool = True,
                 return_tensors: Optional[str] = None, extra_columns: Sequence[str] = (), on_dropped: str = "mask"):
        if n < 1 or val_n < 1:
            raise ValueError("n and val_n must be >= 1")
        if on_dropped not in ("mask", "raise"):
            raise ValueError('on_dropped must be "mask" or "raise"')
        self.on_dropped = on_dropped
        self.client, self.agent, self.n, self.val_n = client, agent, n, val_n
        self.prompt_length, self.response_length, self.pad_token_id = prompt_length, response_length, pad_token_id
        self.rollout_config, self.config, self.training_mode, self.max_concurrent = rollout, config, training_mode, max_concurrent
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.timeout, self.lease_ms, self.poll_interval = timeout, lease_ms, poll_interval
        self.truncation, self.mask_untrainable, self.extra_columns = truncation, mask_untrainable, tuple(extra_columns)
        self.return_tensors = return_tensors or ("pt" if _importable("torch") else "np")
        self.calls = 0
        #: Groups ``DapoBatches`` rolled out and kept (signal-carrying), by service uid, until fit asks for them.
        self.presampled: dict[str, Mapping[str, Any]] = {}
        #: Set by ``EdgeRolloutTrainer``, which appends them after fit's union (``drift_segments``):
        #: a training call's output then carries its rollouts' earlier drift segments in its meta.
        self.train_drift_segments = False
        #: Counts of the training calls since the trainer last logged a step (``metrics``: ``edge_rollout/*``).
        self.step_counts = StepCounts()

    @classmethod
    def from_verl_config(cls, client: Client, config: Any, tokenizer: Any, agent: str, **options: Any) -> "EdgeRolloutManager":
        """Reads ``n``, ``prompt_length``, ``response_length``, sampling and ``val_kwargs`` from
        ``config.actor_rollout_ref.rollout``, ``config.data.truncation`` and the tokenizer's ``pad_token_id``."""
        rollout = config.actor_rollout_ref.rollout
        truncation = getattr(getattr(config, "data", None), "truncation", "left")
        options.setdefault("truncation", truncation if truncation in ("left", "right", "middle", "error") else "left")
        options.setdefault("val_n", getattr(getattr(rollout, "val_kwargs", None), "n", 1) or 1)
        options.setdefault("rollout", rollout)
        return cls(client, agent, rollout.n, rollout.prompt_length, rollout.response_length, tokenizer.pad_token_id, **options)

    def generate_sequences(self, prompts: Any) -> Any:
        """verl's ``generate_sequences``: ``prompts`` as verl's trainer passes it (repeated ``n``
        times, interleaved; un-repeated for REMAX's baseline; padded for validation). Returns one
        row per input row, aligned with it, as a ``DataProto`` when verl and torch are importable,
        else a ``VerlBatch``; padding rows are copies of the rows they duplicate, never rolled out."""
        meta = _meta_info(prompts)
        uids = _input_uids(prompts)
        rows = rows_of(prompts, self.extra_columns)
        n = self.val_n if meta.get("validate") else (1 if meta.get("do_sample") is False else self.n)  # REMAX: un-repeated
        plan = plan_call(None if uids is None else list(uids), rows, n)
        sampled = self._presampled(prompts, plan) if not meta.get("validate") else None
        return self._run([rows[i] for i in plan.first_rows], plan, meta, uids, sampled, count_step=True)

    def rollout(self, rows: Any, validate: bool = False) -> Any:
        """Runs distinct ``rows`` (a list of verl RL rows or a batch) ``n`` times each and returns
        rows × n padded rows in row-major order (row r's samples at r·n … r·n+n-1), with edge-rollout's uids."""
        distinct = rows_of(rows, self.extra_columns)
        n = self.val_n if validate else self.n
        return self._run(distinct, CallPlan(list(range(len(distinct))), n, 0), {"validate": validate}, None)

    def wake_up(self) -> None:
        """No-op: weights reach the model servers through verl's checkpoint manager (see ``trainer``)."""

    def sleep(self) -> None:
        """No-op, like ``wake_up``."""

    def _presampled(self, prompts: Any, plan: CallPlan) -> Optional[list[str]]:
        """The service groups of rows ``DapoBatches`` already rolled out (column ``edge_rollout_group``), or None."""
        columns = prompts.get("non_tensor_batch") if isinstance(prompts, Mapping) else getattr(prompts, "non_tensor_batch", None)
        named = columns.get(PRESAMPLED) if isinstance(columns, Mapping) else None
        if named is None:
            return None
        wanted = [str(named[i]) for i in plan.first_rows]
        return wanted if all(uid in self.presampled for uid in wanted) else None

    def _run(self, rows: list[dict[str, Any]], plan: CallPlan, meta: Mapping[str, Any], uids: Optional[Any],
             presampled: Optional[list[str]] = None, count_step: bool = False) -> Any:
        started = time.monotonic()
        kind = call_kind(meta)
        self.calls += 1
        # One batch per call: REMAX's second call and every validation batch of a step get their own id.
        batch_id = f"{self.run_id}-s{meta.get('global_steps', 'x')}-{kind}{self.calls}"
        if presampled is not None:  # rolled out and filtered already (DapoBatches): answered from those groups
            groups, dropped = {uid: self.presampled.pop(uid) for uid in presampled}, {}
            row_uids = presampled
        else:
            if rows:
                self.client.submit_batch(rows, agent=self.agent, n=plan.n, mode="val" if kind == "val" else "train", batch_id=batch_id,
                                         config=sampling_config(self.rollout_config, meta, self.config) or None,
                                         max_concurrent=self.max_concurrent, training_mode=self.training_mode, data_manager="train",
                                         series=f"{self.run_id}-{kind}")  # one run view per run and kind, steps in order
            groups, dropped = self._collect(batch_id, len(rows)) if rows else ({}, {})
            row_uids = [f"{batch_id}:{r}" for r in range(len(rows))]
        submitted = time.monotonic()
        keep_earlier = self.train_drift_segments and kind == "train"
        samples, earlier, stats = self._aligned(row_uids, plan.n, groups, keep_earlier)
        stats["dropped_groups"] = len(dropped)
        stats["dropped_by_reason"] = {}
        for group in dropped.values():
            stats["dropped_by_reason"][group.get("reason")] = stats["dropped_by_reason"].get(group.get("reason"), 0) + 1
        padded = self._padded(samples)
        padded.non_tensor_batch[VALID] = np.array(stats.pop("valid"), dtype=bool)
        out = shape_output(padded, plan, kind, uids, samples, stats)
        if earlier:
            segments = self._padded(earlier)
            segments.non_tensor_batch["__num_turns__"] = verl_turns(segments.non_tensor_batch["__num_turns__"])
            attach_earlier_segments(out.meta_info, segments)
        if "edge_rollout" in out.meta_info:  # not on REMAX's baseline output: its meta stays in fit's batch
            out.meta_info["edge_rollout"]["batch_id"] = batch_id
            if count_step and kind == "train":  # fit's training batch: its counts go to the step's metrics
                self.step_counts.add(out.meta_info["edge_rollout"])
        out.meta_info["timing"]["edge_rollout/wait_s"] = submitted - started
        out.meta_info["timing"]["edge_rollout/generate_sequences"] = time.monotonic() - started
        return out.to_data_proto() if self.return_tensors == "pt" and _importable("verl") else out

    def _collect(self, batch_id: str, rows: int) -> tuple[dict[str, Mapping[str, Any]], dict[str, Mapping[str, Any]]]:
        """Pulls this batch's groups (the feed leases no other consumer's) until each arrived or
        was dropped by the feed; returns both, by uid."""
        got: dict[str, Mapping[str, Any]] = {}
        dropped: dict[str, Mapping[str, Any]] = {}
        deadline = time.monotonic() + self.timeout
        try:
            stream = self.client.stream_groups(max_groups=rows, limit=rows, poll_interval=self.poll_interval, timeout=self.timeout,
                                               lease_ms=self.lease_ms, batch_id=batch_id, training_mode=self.training_mode,
                                               on_dropped=lambda group: dropped.setdefault(group["uid"], group))
            for group in stream:
                got[group["uid"]] = group
                if time.monotonic() > deadline and len(got) < rows:
                    stream.close()  # the open lease is not acked: its groups come back
                    raise StreamTimeout("deadline passed")
        except StreamTimeout:
            progress = self.client.batch_status(batch_id)
            raise StreamTimeout(f"batch {batch_id}: {len(got)}/{rows} groups after {self.timeout:g} s; "
                                f"counts {progress.get('counts')}") from None
        if dropped:
            first = next(iter(dropped.values()))
            why = (f"batch {batch_id}: the feed dropped {len(dropped)} of {rows} groups as {first.get('reason')} "
                   f"(e.g. {first.get('uid')}, {why_dropped(first)})")
            if self.on_dropped == "raise":
                raise GroupsDropped(why, list(dropped.values()))
            warnings.warn(why + "; their rows are masked placeholders", RuntimeWarning, stacklevel=4)
        return got, dropped

    def _padded(self, samples: list[Mapping[str, Any]]) -> VerlBatch:
        return to_verl_batch(samples, self.prompt_length, self.response_length, self.pad_token_id, truncation=self.truncation,
                             mask_untrainable=self.mask_untrainable, return_tensors=self.return_tensors)

    def _aligned(self, row_uids: Sequence[str], n: int, groups: Mapping[str, Mapping[str, Any]],
                 keep_earlier: bool = False) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]], dict[str, Any]]:
        """One sample per rollout in (row, sample) order: its last drift segment, or a placeholder;
        and, with ``keep_earlier``, every earlier drift segment.

        verl's trainer unions the output with its input row for row (protocol.py:108-121), so a
        rollout split by chat-template drift answers its row with its last segment, which carries
        the rollout's final reward. Its earlier segments are trained only under ``EdgeRolloutTrainer``
        (``keep_earlier``; see ``drift_segments``); elsewhere their model tokens are counted, not trained."""
        samples: list[Mapping[str, Any]] = []
        earlier: list[Mapping[str, Any]] = []
        stats: dict[str, Any] = {"rollouts": len(row_uids) * n, "placeholders": 0, "failed": 0, "drift_segments": 0, "invalid_rows": 0,
                                 "drift_segments_trained": 0, "drift_model_tokens_untrained": 0, "policy_versions": set(), "valid": []}
        for uid in row_uids:
            group = groups.get(uid)  # None: dropped by the feed (see _collect)
            members = {member["sample_index"]: member for member in group["members"]} if group else {}
            # A group delivered with infrastructure failures (deliver_valid) names its valid members;
            # a dropped group's placeholders are all invalid (zero reward, masked: advantage 0 either way).
            valid_members = set(group["valid_members"]) if group and group.get("valid_members") is not None else None
            for k in range(n):
                member = members.get(k)
                valid = group is not None and (valid_members is None or k in valid_members)
                stats["valid"].append(valid)
                stats["invalid_rows"] += 0 if valid else 1
                if group is not None and (member is None or member.get("status") != "succeeded"):
                    stats["failed"] += 1
                # An invalid member's own samples are never trained (they are masked failures): a placeholder stands in.
                own = sorted((member or {}).get("samples") or [], key=lambda sample: sample.get("segment_index", 0)) if valid else []
                if own:
                    samples.append(own[-1])
                    stats["drift_segments"] += len(own) - 1
                    if keep_earlier:
                        earlier.extend(own[:-1])
                        stats["drift_segments_trained"] += len(own) - 1
                    else:
                        stats["drift_model_tokens_untrained"] += sum(sum(s.get("response_mask") or []) for s in own[:-1])
                    for s in own:
                        version = s.get("policy_version") or {}
                        stats["policy_versions"].update(v for v in (version.get("start"), version.get("end")) if v is not None)
                else:
                    # An invalid member's reward is not the policy's: 0, whatever it recorded.
                    samples.append(_placeholder(uid, k, member if valid else None, self.pad_token_id))
                    stats["placeholders"] += 1
        stats["policy_versions"] = sorted(stats["policy_versions"])
        return samples, earlier, stats


def _importable(name: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(name) is not None


__all__ = ["EdgeRolloutManager", "VerlBatch", "rows_of"]
