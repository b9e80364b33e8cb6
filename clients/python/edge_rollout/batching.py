"""``to_verl_batch``: training samples into the padded arrays of verl's agent-loop postprocess.

The rules follow verl (``verl/experimental/agent_loop/agent_loop.py``: ``_run_agent_loop``'s
padding and ``_postprocess``; ``verl/utils/model.py``: ``compute_position_id_with_mask``;
``verl/utils/torch_functional.py``: prompt truncation; the agent loops' ``[: response_length]``):

* ``prompts`` [B, P]: left-padded with ``pad_token_id``; a longer prompt is truncated by
  ``truncation``: ``"left"`` keeps its last P tokens (default), ``"right"`` its first P,
  ``"middle"`` its first P//2 and last P - P//2, ``"error"`` raises;
* ``responses`` [B, R]: right-padded; a longer response keeps its first R tokens, and its mask
  and logprobs are cut the same way; then, like verl's ToolAgentLoop, which stops before adding
  an observation that would overflow (tool_agent_loop.py:360), a cut response is cut further back
  to its last model token (mask 1), so the reward in ``rm_scores`` sits on a trained token and GAE
  sees it (flag ``response_cut_to_model_token``); a cut response with no model token left keeps
  its tokens with an all-zero mask (flag ``response_no_model_token``);
* ``response_mask`` [B, R]: the sample's mask (1 = model token, 0 = tool/env token), 0 on padding
  (and everywhere for untrainable samples with ``mask_untrainable``);
* ``attention_mask`` [B, P+R]: 1 on real prompt and response tokens, 0 on padding;
* ``input_ids`` [B, P+R]: ``prompts`` then ``responses``;
* ``position_ids`` [B, P+R]: ``clip(cumsum(attention_mask) - 1, 0)``, so left padding is 0 and
  right padding repeats the last position;
* ``rollout_log_probs`` [B, R] float32: the sample's logprobs, 0.0 on padding;
* ``rm_scores`` [B, R] float32: ``reward_score`` at index ``valid response length - 1``, 0
  elsewhere; an empty response puts it at index -1, i.e. the last column, as verl's indexing does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from .batching_columns import non_tensor_columns, pad_columns, same_columns

TRUNCATIONS = ("left", "right", "middle", "error")

#: Non-tensor keys this module sets; a sample's ``extra_fields`` may not reuse them.
RESERVED_KEYS = ("uid", "__num_turns__", "rollout_id", "sample_index", "segment_index", "termination_reason",
                 "policy_version_start", "policy_version_end", "prompt_truncated", "response_truncated",
                 "response_cut_to_model_token", "response_no_model_token")


@dataclass
class VerlBatch:
    """A verl batch: ``batch`` (the tensors, numpy arrays or torch tensors), ``non_tensor_batch``
    (numpy arrays, one entry per sample) and ``meta_info``, as ``verl.DataProto`` holds them."""

    batch: dict[str, Any]
    non_tensor_batch: dict[str, np.ndarray]
    meta_info: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.batch["input_ids"])

    def to_data_proto(self) -> Any:
        """This batch as a ``verl.DataProto`` (needs verl and torch installed)."""
        try:
            import torch
            from verl import DataProto
        except ImportError as error:
            raise ImportError("to_data_proto needs verl and torch installed; use .batch / .non_tensor_batch otherwise") from error
        tensors = {key: value if torch.is_tensor(value) else torch.from_numpy(value) for key, value in self.batch.items()}
        return DataProto.from_dict(tensors=tensors, non_tensors=self.non_tensor_batch, meta_info=self.meta_info)


def samples_of(groups: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """The training samples of pulled groups (inline), in group, member, segment order."""
    for group in groups:
        for member in group["members"]:
            yield from member["samples"]


def _truncate_prompt(ids: Sequence[int], length: int, truncation: str, index: int) -> Sequence[int]:
    if len(ids) <= length:
        return ids
    if truncation == "left":
        return ids[len(ids) - length:]
    if truncation == "right":
        return ids[:length]
    if truncation == "middle":
        head = length // 2
        return list(ids[:head]) + list(ids[len(ids) - (length - head):])
    raise ValueError(f"samples[{index}].prompt_ids has {len(ids)} tokens, more than prompt_length {length} (truncation='error')")


def _check_sample(sample: Mapping[str, Any], index: int) -> None:
    n = len(sample["response_ids"])
    for key in ("response_mask", "response_logprobs"):
        if len(sample[key]) != n:
            raise ValueError(f"samples[{index}].{key} has {len(sample[key])} entries, response_ids {n}")


def _object_array(values: list[Any]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def to_verl_batch(samples: Iterable[Mapping[str, Any]], prompt_length: int, response_length: int, pad_token_id: int,
                  *, truncation: str = "left", mask_untrainable: bool = True, return_tensors: str = "np") -> VerlBatch:
    """Pads training samples (or pulled groups) into verl's agent-loop output arrays.

    ``samples`` are TrainingSample dicts as ``pull(inline=True)`` returns them, or the pulled
    groups themselves (flattened with ``samples_of``). See the module doc for every array and
    the padding / truncation rules. ``truncation`` (default ``"left"``) handles prompts longer
    than ``prompt_length``; responses longer than ``response_length`` keep their first tokens.
    ``mask_untrainable`` (default True) zeroes ``response_mask`` of samples whose
    ``extra_fields.trainable`` is false (failed or truncated rollouts, as the sample builder
    flags them); their rewards stay in ``rm_scores`` so GRPO's group baseline still counts them.
    ``return_tensors`` is ``"np"`` (default) or ``"pt"`` (torch tensors; needs torch).

    ``non_tensor_batch`` holds ``uid`` (the GRPO group), ``__num_turns__``, ``rollout_id``,
    ``sample_index``, ``segment_index``, ``termination_reason``, ``policy_version_start`` /
    ``_end``, the flags ``prompt_truncated`` / ``response_truncated``, and one object array per
    ``extra_fields`` key (None where a sample lacks it).

    Example::

        batch = to_verl_batch(groups, prompt_length=1024, response_length=2048, pad_token_id=0)
        batch.batch["responses"].shape  # (len(batch), 2048)
    """
    if prompt_length < 1 or response_length < 1:
        raise ValueError("prompt_length and response_length must be >= 1")
    if truncation not in TRUNCATIONS:
        raise ValueError(f"truncation must be one of {', '.join(TRUNCATIONS)}, got {truncation!r}")
    if return_tensors not in ("np", "pt"):
        raise ValueError(f"return_tensors must be 'np' or 'pt', got {return_tensors!r}")
    items = list(samples)
    if items and "members" in items[0]:
        items = list(samples_of(items))
    size, p_len, r_len = len(items), prompt_length, response_length
    columns = same_columns(items)
    if columns is not None:  # an Arrow pull: gather from its flat buffers
        rows = np.array([item.row_index for item in items], dtype=np.int64)
        padded = pad_columns(columns, rows, p_len, r_len, pad_token_id, truncation, mask_untrainable)
        prompts, responses, response_mask = padded["prompts"], padded["responses"], padded["response_mask"]
        attention_mask, log_probs, scores = padded["attention_mask"], padded["rollout_log_probs"], padded["scores"]
        prompt_truncated, response_truncated = padded["prompt_truncated"], padded["response_truncated"]
        cut_to_model, no_model_token = padded["response_cut_to_model_token"], padded["response_no_model_token"]
    else:
        prompts, responses, attention_mask, response_mask, log_probs, scores, prompt_truncated, response_truncated, cut_to_model, no_model_token = \
            _pad_rows(items, p_len, r_len, pad_token_id, truncation, mask_untrainable)
    position_ids = padded["position_ids"] if columns is not None else np.clip(np.cumsum(attention_mask, axis=1) - 1, 0, None)
    rm_scores = np.zeros((size, r_len), dtype=np.float32)
    last = attention_mask[:, p_len:].sum(axis=1) - 1  # -1 (empty response) wraps to the last column, as in verl
    rm_scores[np.arange(size), last] = scores
    batch = {"prompts": prompts, "responses": responses, "response_mask": response_mask,
             "input_ids": np.concatenate([prompts, responses], axis=1), "attention_mask": attention_mask,
             "position_ids": position_ids, "rollout_log_probs": log_probs, "rm_scores": rm_scores}
    if return_tensors == "pt":
        batch = _as_torch(batch)
    non_tensor = _non_tensor(items) if columns is None else non_tensor_columns(columns, rows, RESERVED_KEYS)
    non_tensor["prompt_truncated"], non_tensor["response_truncated"] = prompt_truncated, response_truncated
    non_tensor["response_cut_to_model_token"], non_tensor["response_no_model_token"] = cut_to_model, no_model_token
    meta = {"prompt_length": p_len, "response_length": r_len, "pad_token_id": pad_token_id, "truncation": truncation}
    return VerlBatch(batch=batch, non_tensor_batch=non_tensor, meta_info=meta)


def _pad_rows(items: list[Mapping[str, Any]], p_len: int, r_len: int, pad_token_id: int, truncation: str, mask_untrainable: bool) -> tuple:
    """The padded arrays of ``items`` (sample mappings of any origin), one row at a time."""
    size = len(items)
    prompts = np.full((size, p_len), pad_token_id, dtype=np.int64)
    responses = np.full((size, r_len), pad_token_id, dtype=np.int64)
    attention_mask = np.zeros((size, p_len + r_len), dtype=np.int64)
    response_mask = np.zeros((size, r_len), dtype=np.int64)
    log_probs = np.zeros((size, r_len), dtype=np.float32)
    scores = np.zeros(size, dtype=np.float32)
    prompt_truncated = np.zeros(size, dtype=bool)
    response_truncated = np.zeros(size, dtype=bool)
    cut_to_model = np.zeros(size, dtype=bool)
    no_model_token = np.zeros(size, dtype=bool)
    for i, sample in enumerate(items):
        _check_sample(sample, i)
        prompt = _truncate_prompt(sample["prompt_ids"], p_len, truncation, i)
        prompt_truncated[i] = len(prompt) < len(sample["prompt_ids"])
        response_truncated[i] = len(sample["response_ids"]) > r_len
        n_prompt, n_response = len(prompt), min(len(sample["response_ids"]), r_len)
        if response_truncated[i]:
            kept = _last_model_token(sample["response_mask"], n_response)
            cut_to_model[i] = 0 < kept < n_response
            no_model_token[i] = kept == 0
            n_response = kept or n_response
        if n_prompt:
            prompts[i, p_len - n_prompt:] = prompt
            attention_mask[i, p_len - n_prompt:p_len] = 1
        if n_response:
            responses[i, :n_response] = sample["response_ids"][:n_response]
            attention_mask[i, p_len:p_len + n_response] = 1
            log_probs[i, :n_response] = sample["response_logprobs"][:n_response]
            if not no_model_token[i] and not (mask_untrainable and sample.get("extra_fields", {}).get("trainable") is False):
                response_mask[i, :n_response] = sample["response_mask"][:n_response]
        scores[i] = sample["reward_score"]
    return prompts, responses, attention_mask, response_mask, log_probs, scores, prompt_truncated, response_truncated, cut_to_model, no_model_token


def _last_model_token(mask: Sequence[int], limit: int) -> int:
    """How many of the first ``limit`` response tokens to keep so the last kept one is a model token (0: none is)."""
    for end in range(limit, 0, -1):
        if mask[end - 1]:
            return end
    return 0


def _non_tensor(items: list[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    policy = [sample.get("policy_version") or {} for sample in items]
    out: dict[str, np.ndarray] = {
        "uid": _object_array([sample["uid"] for sample in items]),
        "__num_turns__": np.array([sample.get("num_turns", 0) for sample in items], dtype=np.int32),
        "rollout_id": _object_array([sample.get("rollout_id") for sample in items]),
        "sample_index": np.array([sample.get("sample_index", 0) for sample in items], dtype=np.int64),
        "segment_index": np.array([sample.get("segment_index", 0) for sample in items], dtype=np.int64),
        "termination_reason": _object_array([sample.get("termination_reason") for sample in items]),
        "policy_version_start": np.array([version.get("start", 0) for version in policy], dtype=np.int64),
        "policy_version_end": np.array([version.get("end", 0) for version in policy], dtype=np.int64),
    }
    # Per-token behaviour-policy versions (partial rollouts): one list per sample whose tokens span
    # versions, None for the others (all their tokens came from policy_version_start).
    if any(sample.get("response_policy_versions") is not None for sample in items):
        out["response_policy_versions"] = _object_array([sample.get("response_policy_versions") for sample in items])
    keys: dict[str, None] = {}
    for sample in items:
        keys.update(dict.fromkeys(sample.get("extra_fields") or {}))
    for key in keys:
        if key in RESERVED_KEYS:
            raise ValueError(f"extra_fields.{key} would overwrite the non-tensor field {key!r}")
        out[key] = _object_array([(sample.get("extra_fields") or {}).get(key) for sample in items])
    return out


def _as_torch(arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    try:
        import torch
    except ImportError as error:
        raise ImportError("return_tensors='pt' needs torch installed; use return_tensors='np'") from error
    return {key: torch.from_numpy(value) for key, value in arrays.items()}
