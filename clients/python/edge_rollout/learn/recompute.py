"""The trainer's side of log-prob agreement: every response token's log-prob recomputed by the policy.

``response_logprobs`` scores a batch the way verl's actor does in ``compute_log_prob``: prompt and
response concatenated, left-padded, ``position_ids = cumsum(attention_mask) - 1``, logits divided by
the temperature, the log-prob of each response token read at the position before it. As a command it
reads ``{"checkpoint", "temperature", "items": [{"prompt_ids", "response_ids"}]}`` on stdin and prints
``{"logprobs": [[...], ...]}``, so a test in another language can check what the engine recorded.
"""
from __future__ import annotations

import json
import sys
from typing import Sequence

import torch

from .checkpoint import load_checkpoint
from .policy import TinyPolicy, left_pad, set_one_thread


def response_logprobs(model: TinyPolicy, prompts: Sequence[Sequence[int]], responses: Sequence[Sequence[int]],
                      temperature: float = 1.0) -> torch.Tensor:
    """``[batch, max_response]`` log-probs of each response token (0 past a response's end); keeps the graph."""
    contexts = [list(p) + list(r) for p, r in zip(prompts, responses)]
    ids, mask, positions = left_pad(contexts)
    logits = model(ids, mask, positions) / temperature
    logprobs = logits.log_softmax(-1)
    width = max((len(r) for r in responses), default=0)
    out = torch.zeros(len(responses), width, dtype=logprobs.dtype)
    length = ids.shape[1]
    for row, response in enumerate(responses):
        if not response:
            continue
        # The token at column c is predicted by the logits at column c - 1.
        start = length - len(response)
        columns = model.out_index(torch.tensor(list(response)))
        if bool((columns < 0).any()):
            raise ValueError(f"row {row}: a response token the policy cannot emit ({list(response)})")
        out[row, : len(response)] = logprobs[row, start - 1 : length - 1].gather(-1, columns[:, None])[:, 0]
    return out


def main() -> int:
    set_one_thread()
    request = json.load(sys.stdin)
    model = load_checkpoint(request["checkpoint"])
    items = request["items"]
    with torch.no_grad():
        scores = response_logprobs(model, [i["prompt_ids"] for i in items], [i["response_ids"] for i in items],
                                   float(request.get("temperature", 1.0)))
    print(json.dumps({"logprobs": [scores[row, : len(i["response_ids"])].tolist() for row, i in enumerate(items)]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
