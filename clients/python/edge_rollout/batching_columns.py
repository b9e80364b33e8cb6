"""``to_verl_batch``'s path for Arrow pulls: padding gathered straight from the flat buffers.

When every sample is a ``SampleRef`` of one pull's ``SampleColumns``, lengths, cuts and masks are
computed for all rows at once from the offsets, and each row's tokens are copied as one slice of
the flat token / mask / logprob buffers into the padded arrays (a slice copy per row and array is
a memcpy; a fancy-index gather over all cells measured several times slower). The rules are those
of ``batching`` (its module doc); ``non_tensor_columns`` builds the per-sample columns from the
arrays too, never through per-sample mappings.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def same_columns(items: Sequence[Any]) -> Any:
    """The ``SampleColumns`` all ``items`` are rows of, or None."""
    from .arrow_feed import SampleRef

    if not items or not all(isinstance(item, SampleRef) for item in items):
        return None
    columns = items[0].columns
    return columns if all(item.columns is columns for item in items) else None


def pad_columns(columns: Any, rows: np.ndarray, p_len: int, r_len: int, pad_token_id: int, truncation: str,
                mask_untrainable: bool) -> dict[str, np.ndarray]:
    """The padded arrays and per-row flags of ``rows`` of ``columns`` (see ``to_verl_batch``)."""
    size = len(rows)
    # Prompts: left-padded; a longer one keeps its last (left) or first (right) p_len tokens.
    p_start, p_end = columns.prompt_offsets[rows].astype(np.int64), columns.prompt_offsets[rows + 1].astype(np.int64)
    p_full = p_end - p_start
    prompt_truncated = p_full > p_len
    if truncation == "error" and prompt_truncated.any():
        i = int(np.flatnonzero(prompt_truncated)[0])
        raise ValueError(f"samples[{i}].prompt_ids has {p_full[i]} tokens, more than prompt_length {p_len} (truncation='error')")
    p_n = np.minimum(p_full, p_len)
    p_from = p_start if truncation == "right" else p_end - p_n
    prompts = np.full((size, p_len), pad_token_id, dtype=np.int64)
    ids = columns.prompt_ids
    for i in range(size):
        n = p_n[i]
        if n:
            prompts[i, p_len - n:] = ids[p_from[i]:p_from[i] + n]
    if truncation == "middle":
        head = p_len // 2
        for i in np.flatnonzero(prompt_truncated):
            prompts[i] = np.concatenate([ids[p_start[i]:p_start[i] + head], ids[p_end[i] - (p_len - head):p_end[i]]])
    # Responses: right-padded, first r_len tokens; a cut one goes back to its last model token.
    r_start = columns.response_offsets[rows].astype(np.int64)
    r_full = columns.response_offsets[rows + 1].astype(np.int64) - r_start
    response_truncated = r_full > r_len
    r_n = np.minimum(r_full, r_len)
    cut_to_model = np.zeros(size, dtype=bool)
    no_model_token = np.zeros(size, dtype=bool)
    for i in np.flatnonzero(response_truncated):
        kept = np.flatnonzero(columns.response_mask[r_start[i]:r_start[i] + r_n[i]])
        last = int(kept[-1]) + 1 if len(kept) else 0
        cut_to_model[i], no_model_token[i] = 0 < last < r_n[i], last == 0
        r_n[i] = last or r_n[i]
    extra = columns.extra_fields
    trains = np.array([not (mask_untrainable and extra[r].get("trainable") is False) for r in rows], dtype=bool) & ~no_model_token
    responses = np.full((size, r_len), pad_token_id, dtype=np.int64)
    response_mask = np.zeros((size, r_len), dtype=np.int64)
    log_probs = np.zeros((size, r_len), dtype=np.float32)
    rid, rmask, rlp = columns.response_ids, columns.response_mask, columns.response_logprobs
    for i in range(size):
        n, at = r_n[i], r_start[i]
        if n:
            responses[i, :n] = rid[at:at + n]
            log_probs[i, :n] = rlp[at:at + n]
            if trains[i]:
                response_mask[i, :n] = rmask[at:at + n]
    cols_p, cols_r = np.arange(p_len), np.arange(r_len)
    attention_mask = np.concatenate([(cols_p >= (p_len - p_n)[:, None]), (cols_r < r_n[:, None])], axis=1).astype(np.int64)
    # Real tokens are contiguous (left-padded prompt, then right-padded response), so verl's
    # clip(cumsum(attention_mask) - 1, 0) is the column minus the padding, capped at the last token.
    position_ids = np.arange(p_len + r_len, dtype=np.int64)[None, :] - (p_len - p_n)[:, None]
    np.maximum(position_ids, 0, out=position_ids)
    np.minimum(position_ids, np.maximum(p_n + r_n - 1, 0)[:, None], out=position_ids)
    return {"prompts": prompts, "responses": responses, "position_ids": position_ids, "response_mask": response_mask, "attention_mask": attention_mask,
            "rollout_log_probs": log_probs, "scores": columns.reward_score[rows].astype(np.float32),
            "prompt_truncated": prompt_truncated, "response_truncated": response_truncated,
            "response_cut_to_model_token": cut_to_model, "response_no_model_token": no_model_token}


def non_tensor_columns(columns: Any, rows: np.ndarray, reserved: Sequence[str]) -> dict[str, np.ndarray]:
    """``to_verl_batch``'s ``non_tensor_batch`` (before the flags) for ``rows`` of ``columns``."""
    def objects(values: list[Any]) -> np.ndarray:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out

    picked = rows.tolist()
    out: dict[str, np.ndarray] = {
        "uid": objects([columns.uid[r] for r in picked]),
        "__num_turns__": columns.num_turns[rows].astype(np.int32),
        "rollout_id": objects([columns.rollout_id[r] for r in picked]),
        "sample_index": columns.sample_index[rows].astype(np.int64),
        "segment_index": columns.segment_index[rows].astype(np.int64),
        "termination_reason": objects([columns.termination_reason[r] for r in picked]),
        "policy_version_start": columns.policy_version_start[rows].astype(np.int64),
        "policy_version_end": columns.policy_version_end[rows].astype(np.int64),
    }
    extra = [columns.extra_fields[r] for r in picked]
    keys: dict[str, None] = {}
    for fields in extra:
        keys.update(dict.fromkeys(fields))
    for key in keys:
        if key in reserved:
            raise ValueError(f"extra_fields.{key} would overwrite the non-tensor field {key!r}")
        out[key] = objects([fields.get(key) for fields in extra])
    return out
