#!/usr/bin/env python3
"""One verl-style GRPO training step against a running edge-rollout, with a dummy update.

Start the local stack first (``npm start``), then::

    python3 examples/verl/one_step.py [--url http://127.0.0.1:8787] [--rows 8] [--n 4]

It builds the generation batch verl's trainer would hand its agent-loop manager (fixture rows,
repeated n times, interleaved), runs it through ``EdgeRolloutManager.generate_sequences``,
computes a GRPO advantage (reward minus the group mean), stands in for the optimizer step with
a weight-sync handshake (``begin_sync`` / ``end_sync`` to the next policy version), prints the
batch shapes and the mean reward, and exits 0. The URL also comes from ``EDGE_ROLLOUT_URL``,
the token from ``EDGE_ROLLOUT_TOKEN``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "clients" / "python"))  # run from a checkout without installing

from edge_rollout import Client  # noqa: E402
from edge_rollout.verl import EdgeRolloutManager  # noqa: E402


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("EDGE_ROLLOUT_URL", "http://127.0.0.1:8787"))
    parser.add_argument("--dataset", default=str(ROOT / "test/fixtures/datasets/calculator.jsonl"))
    parser.add_argument("--agent", default="calculator")
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--prompt-length", type=int, default=512)
    parser.add_argument("--response-length", type=int, default=256)
    parser.add_argument("--pad-token-id", type=int, default=0, help="the simulator's <|endoftext|>")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--no-sync", action="store_true", help="skip the weight-sync handshake")
    return parser.parse_args()


def generation_batch(rows: list[dict], n: int) -> dict:
    """What verl's trainer passes its rollout manager: columns as numpy object arrays, each row
    repeated n times (interleaved), a ``uid`` per prompt."""
    uids = [str(uuid.uuid4()) for _ in rows]
    columns = {"raw_prompt": [row["prompt"] for row in rows], "uid": uids,
               **{key: [row[key] for row in rows] for key in ("data_source", "ability", "reward_model", "extra_info")}}
    non_tensor = {}
    for key, values in columns.items():
        column = np.empty(len(values) * n, dtype=object)
        column[:] = [value for value in values for _ in range(n)]
        non_tensor[key] = column
    return {"non_tensor_batch": non_tensor, "meta_info": {"global_steps": 1}}


def grpo_advantages(scores: np.ndarray, uids: np.ndarray) -> np.ndarray:
    """Outcome advantage per sample: its reward minus its group's mean reward."""
    advantages = np.zeros_like(scores)
    for uid in set(uids.tolist()):
        members = uids == uid
        advantages[members] = scores[members] - scores[members].mean()
    return advantages


def main() -> int:
    args = parse_args()
    client = Client(args.url, token=os.environ.get("EDGE_ROLLOUT_TOKEN"))
    if not client.health():
        print(f"edge-rollout is not answering at {args.url}: start it with `npm start`", file=sys.stderr)
        return 1
    lines = Path(args.dataset).read_text().splitlines()
    rows = [json.loads(line) for line in lines if line.strip()][: args.rows]
    manager = EdgeRolloutManager(client, args.agent, args.n, args.prompt_length, args.response_length, args.pad_token_id,
                                 timeout=args.timeout, return_tensors="np")
    output = manager.generate_sequences(generation_batch(rows, args.n))
    tensors = {key: np.asarray(value) for key, value in output.batch.items()}
    uids = output.non_tensor_batch["uid"]

    scores = tensors["rm_scores"].sum(axis=-1)
    advantages = grpo_advantages(scores, uids)
    token_advantages = advantages[:, None] * tensors["response_mask"]
    # The dummy "update": the policy-gradient surrogate verl's actor would minimise.
    surrogate = -(token_advantages * tensors["rollout_log_probs"]).sum() / max(1, int(tensors["response_mask"].sum()))
    if not args.no_sync:
        version = client.policy()["policy_version"]
        client.begin_sync(wait_ms=30_000)
        client.end_sync(version + 1)  # weights "loaded"; rollouts after this record the new version

    for key, value in tensors.items():
        print(f"{key:18} {str(value.shape):14} {value.dtype}")
    info = output.meta_info["edge_rollout"]
    print(f"batch {info['batch_id']}: {len(uids)} samples in {len(set(uids.tolist()))} groups, "
          f"placeholders {info['placeholders']}, truncated prompts {int(output.non_tensor_batch['prompt_truncated'].sum())}, "
          f"responses {int(output.non_tensor_batch['response_truncated'].sum())}")
    print(f"mean reward {scores.mean():.3f}  mean |advantage| {np.abs(advantages).mean():.3f}  surrogate loss {surrogate:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
