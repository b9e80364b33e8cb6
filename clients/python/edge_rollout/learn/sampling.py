"""One engine step: the next token of every sequence, sampled from the policy, with its log-prob.

As vLLM's sampler does, the parameters that act on logits apply here: ``min_tokens`` and
``ignore_eos`` mask EOS (and ``stop_token_ids`` before ``min_tokens``), then temperature, top-k and
top-p shape the distribution sampled from. The log-prob reported follows ``--logprobs-mode``:
``raw_logprobs`` (vLLM's default) is the model's own distribution, before temperature and every
mask; ``processed_logprobs`` is the distribution the token was sampled from. A trainer that
divides its logits by the temperature before recomputing (verl's actor does) agrees with the
second, or with the first only at temperature 1.
"""
from __future__ import annotations

import zlib
from typing import Any, Optional, Sequence

import torch

from .policy import TinyPolicy, left_pad

LOGPROBS_MODES = ("raw_logprobs", "processed_logprobs")


def _generator(sequence: dict[str, Any], k: int, fallback: torch.Generator) -> torch.Generator:
    """A generator seeded by (seed or sample key, prompt, position) when the request has one, so keyed draws repeat."""
    sampling = sequence["sampling"]
    anchor = sampling.get("seed")
    if anchor is None:
        anchor = sequence.get("key")
    if anchor is None:
        return fallback
    prompt = zlib.crc32(bytes(str(sequence["prompt_ids"]), "ascii"))
    return torch.Generator().manual_seed(zlib.crc32(f"{anchor}|{prompt}|{k}".encode()))


def _processed(logits: torch.Tensor, model: TinyPolicy, sequence: dict[str, Any]) -> torch.Tensor:
    """The logits the token is sampled from: masks, then temperature, top-k and top-p."""
    sampling = sequence["sampling"]
    k = len(sequence["output_ids"])
    out = logits.clone()
    banned: list[int] = []
    eos = sampling.get("eos_token_id")
    if eos is not None and (sampling.get("ignore_eos") or k < sampling.get("min_tokens", 0)):
        banned.append(int(eos))
    if k < sampling.get("min_tokens", 0):
        banned.extend(int(i) for i in sampling.get("stop_token_ids") or [])
    if banned:
        columns = model.out_index(torch.tensor(banned))
        out[columns[columns >= 0]] = float("-inf")
    temperature = float(sampling.get("temperature", 1.0))
    if temperature > 0:
        out = out / temperature
    top_k = int(sampling.get("top_k", -1) or -1)
    if 0 < top_k < out.numel():
        threshold = out.topk(top_k).values[-1]
        out[out < threshold] = float("-inf")
    top_p = float(sampling.get("top_p", 1.0))
    if top_p < 1.0:
        ordered, order = out.sort(descending=True)
        cumulative = ordered.softmax(-1).cumsum(-1)
        drop = cumulative - ordered.softmax(-1) >= top_p  # keep the smallest prefix reaching top_p
        out[order[drop]] = float("-inf")
    return out


def step(model: TinyPolicy, sequences: Sequence[dict[str, Any]], logprobs_mode: str,
         fallback: Optional[torch.Generator] = None) -> list[dict[str, Any]]:
    """The protocol's ``tokens``: one ``{id, logprob, top}`` per sequence, in order."""
    fallback = fallback or torch.Generator().manual_seed(0)
    contexts = [list(s["prompt_ids"]) + list(s["output_ids"]) for s in sequences]
    input_ids, mask, positions = left_pad(contexts)
    with torch.no_grad():
        last = model(input_ids, mask, positions)[:, -1, :]
    tokens = []
    for row, sequence in enumerate(sequences):
        logits = last[row]
        processed = _processed(logits, model, sequence)
        temperature = float(sequence["sampling"].get("temperature", 1.0))
        if temperature > 0:
            generator = _generator(sequence, len(sequence["output_ids"]), fallback)
            column = int(torch.multinomial(processed.softmax(-1), 1, generator=generator))
        else:
            column = int(processed.argmax())
        reported = (logits if logprobs_mode == "raw_logprobs" else processed).log_softmax(-1)
        wanted = int(sequence["sampling"].get("top_logprobs", 0) or 0)
        top = []
        if wanted > 1:
            values, columns = reported.topk(min(wanted, reported.numel()))
            top = [{"id": int(model.out_ids[c]), "logprob": float(v)} for v, c in zip(values, columns)
                   if int(c) != column and v > float("-inf")]
        tokens.append({"id": int(model.out_ids[column]), "logprob": float(reported[column]), "top": top})
    return tokens
