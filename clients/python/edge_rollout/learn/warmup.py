"""The starting checkpoint: a seeded supervised warm-up on the task's own prompts, stopped early.

    python3 -m edge_rollout.learn.warmup --data prompts.json --out policy.pt [--seed 0] [--target 0.3]

``prompts.json`` is ``{"out_ids": [...], "items": [{"prompt_ids": [...], "answer_ids": [...]}]}`` (the
prompts as the server's chat template renders them, the answer as the policy should write it, EOS
included). Training stops as soon as the mean probability of the whole answer reaches ``--target``,
so the policy starts with a reward between 0.1 and 0.5 at temperature 1: GRPO then has groups with
reward spread from its first step. Deterministic for a seed; a few seconds on one core.
"""
from __future__ import annotations

import argparse
import json
import sys

import torch

from .checkpoint import save_checkpoint
from .policy import create_policy, set_one_thread
from .recompute import response_logprobs


def answer_probability(model, items) -> float:
    """Mean probability, over the items, that the policy writes exactly the answer."""
    with torch.no_grad():
        scores = response_logprobs(model, [i["prompt_ids"] for i in items], [i["answer_ids"] for i in items])
    return float(scores.sum(-1).exp().mean())


def warm_up(out_ids, items, seed: int = 0, target: float = 0.3, lr: float = 3e-3, max_steps: int = 2000):
    """The warmed policy and the answer probability it stopped at."""
    model = create_policy(out_ids, seed=seed)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    generator = torch.Generator().manual_seed(seed)
    probability = answer_probability(model, items)
    for _ in range(max_steps):
        if probability >= target:
            break
        batch = [items[int(i)] for i in torch.randint(len(items), (16,), generator=generator)]
        loss = -response_logprobs(model, [i["prompt_ids"] for i in batch], [i["answer_ids"] for i in batch]).sum(-1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        probability = answer_probability(model, items)
    model.eval()
    return model, probability


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", type=float, default=0.3)
    args = parser.parse_args(argv)
    set_one_thread()
    data = json.load(open(args.data))
    model, probability = warm_up(data["out_ids"], data["items"], seed=args.seed, target=args.target)
    save_checkpoint(model, args.out)
    print(json.dumps({"checkpoint": args.out, "answer_probability": round(probability, 4)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
