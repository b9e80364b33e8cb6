"""A GRPO trainer that learns from edge-rollout's feed, and syncs its weights the way a real server takes them.

    python3 -m edge_rollout.learn.trainer --url http://127.0.0.1:8787 --model-url http://127.0.0.1:8000 \\
        --rows rows.jsonl --checkpoint v0.pt --workdir .tmp/learn [--steps 20] [--n 8] [--rows-per-step 16]

Each step (verl's hybrid schedule: generate with the current weights, then train):
1. submits the step's rows as a batch (``agent: digits``, ``n`` samples per row, the run's ``series``);
2. pulls the batch's complete groups (Arrow when pyarrow is there) and pads them with ``to_verl_batch``;
3. recomputes every response token's log-prob with its own copy of the policy from exactly the
   ``input_ids``, ``attention_mask`` and ``position_ids`` it built (verl's ``compute_log_prob``), and
   compares with the log-probs the gateway recorded where ``response_mask`` is 1;
4. GRPO advantages and the clipped policy loss (``grpo.py``), one optimizer step;
5. writes the weights, ``sync/begin``, loads them into the engine through the simulator's
   ``/update_weights_from_disk``, ``sync/end`` with the new version; then acks the pulls. A step that
   fails before the ack leaves its groups to be delivered again; a reload the server refuses ends the
   sync at the old version (``sync/abort``) before the step fails.
Prints one JSON line per step.
"""
from __future__ import annotations

import argparse
import copy
import json
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import torch

from ..batching import to_verl_batch
from ..client import Client
from .checkpoint import load_checkpoint, save_checkpoint
from .grpo import clipped_policy_loss, group_advantages
from .policy import set_one_thread
from .versions import agreement, token_versions, under_versions


def token_logprobs(model, batch, prompt_length: int, temperature: float) -> torch.Tensor:
    """``[B, R]`` log-probs of ``responses`` from the padded batch's own arrays (logits at the previous column)."""
    ids = batch["input_ids"].long()
    logits = model(ids, batch["attention_mask"].long(), batch["position_ids"].long()) / temperature
    predicting = logits[:, prompt_length - 1 : -1].log_softmax(-1)
    columns = model.out_index(batch["responses"].long())
    # Padding (and any id the policy cannot emit) reads column 0; the mask zeroes those tokens.
    return predicting.gather(-1, columns.clamp(min=0)[..., None])[..., 0]


def load_weights(model_url: str, path: str, version: int) -> dict[str, Any]:
    """``POST /update_weights_from_disk`` on the model server; raises with its message when refused."""
    request = urllib.request.Request(f"{model_url.rstrip('/')}/update_weights_from_disk",
                                     json.dumps({"model_path": path, "weight_version": version}).encode(),
                                     {"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        raise RuntimeError(f"the model server refused the weights: {error.read().decode()[:300]}") from error


def pull_batch(client: Client, batch_id: str, groups: int, timeout: float) -> tuple[list[dict], list[str]]:
    """Every complete group of ``batch_id`` and the leases holding them (acked by the caller after training)."""
    pulled, leases, deadline = [], [], time.monotonic() + timeout
    while len(pulled) < groups:
        reply = client.pull(max_groups=groups - len(pulled), batch_id=batch_id, inline=True)
        for dropped in reply.get("dropped_groups") or []:
            raise RuntimeError(f"the feed dropped group {dropped.get('uid')}: {json.dumps(dropped)[:400]}")
        if reply.get("lease_id") and reply.get("groups"):
            pulled.extend(reply["groups"])
            leases.append(reply["lease_id"])
            continue
        if time.monotonic() > deadline:
            progress = client.request("GET", f"/v1/batches/{batch_id}")
            raise TimeoutError(f"{len(pulled)}/{groups} groups of {batch_id} arrived within {timeout:g} s "
                               f"(the batch: {json.dumps(progress)[:600]})")
        time.sleep(0.2)
    return pulled, leases


def sync(client: Client, model_url: str, path: str, version: int, mode: str) -> float:
    """``sync/begin`` (drain or interrupt), the reload, ``sync/end``; answers the seconds it took."""
    started = time.monotonic()
    client.request("POST", "/v1/policy/sync/begin", {"mode": mode, "wait_ms": 60_000})
    try:
        load_weights(model_url, path, version)
    except Exception:
        # The old weights still serve: end the sync at the old version, then fail the step (its
        # groups stay unacked and are delivered again).
        client.abort_sync()
        raise
    client.end_sync(version)
    return time.monotonic() - started


def run(args: argparse.Namespace) -> int:
    set_one_thread()
    client = Client(args.url)
    rows = [json.loads(line) for line in Path(args.rows).read_text().splitlines() if line.strip()]
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    model = load_checkpoint(args.checkpoint)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    # In training mode the policy's sampling parameters apply to every call: the trainer's temperature.
    client.request("PUT", "/v1/policy", {"sampling": {"temperature": args.temperature, "top_p": 1.0}})
    version = int(client.policy()["policy_version"])
    hybrid = args.schedule == "hybrid"
    # The weights of every version whose tokens may still arrive, for the per-version recompute.
    held = {version: copy.deepcopy(model).eval()}

    def submit(step: int) -> None:
        chosen = [rows[(step * args.rows_per_step + i) % len(rows)] for i in range(args.rows_per_step)]
        client.submit_batch(chosen, agent=args.agent, n=args.n, batch_id=f"{args.series}-{step}", series=args.series,
                            training_mode="verl/hybrid" if hybrid else f"async/{args.max_staleness}",
                            config={"max_tokens_per_call": args.max_tokens, "max_steps": 4})

    if not hybrid:  # the pipeline: batches 0 .. k are generated while the trainer works
        for step in range(min(args.steps, args.max_staleness + 1)):
            submit(step)
    for step in range(args.steps):
        started = time.monotonic()
        if hybrid:
            submit(step)
        groups, leases = pull_batch(client, f"{args.series}-{step}", args.rows_per_step, args.timeout)
        generated = time.monotonic()
        padded = to_verl_batch(groups, prompt_length=args.prompt_length, response_length=args.response_length,
                               pad_token_id=0, return_tensors="pt")
        data = padded.batch
        mask = data["response_mask"].float()
        versions = token_versions(padded.non_tensor_batch, mask.shape[1])
        scored = under_versions(lambda m: token_logprobs(m, data, args.prompt_length, args.temperature), held, versions)
        checks = agreement(data["rollout_log_probs"].double(), scored, versions, mask)
        log_prob = token_logprobs(model, data, args.prompt_length, args.temperature)
        scores = data["rm_scores"].sum(-1).float()
        advantages = group_advantages(scores, list(padded.non_tensor_batch["uid"]), mask)
        loss = clipped_policy_loss(log_prob, log_prob.detach(), advantages, mask)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        trained = time.monotonic()
        version += 1
        path = str((workdir / f"policy-v{version}.pt").resolve())
        save_checkpoint(model, path)
        held[version] = copy.deepcopy(model).eval()
        for old in [v for v in held if v < version - args.max_staleness - 1]:
            del held[old]
        sync_s = sync(client, args.model_url, path, version, "drain" if hybrid else "interrupt")
        if not hybrid and step + args.max_staleness + 1 < args.steps:
            submit(step + args.max_staleness + 1)
        for lease in leases:
            client.ack(lease)
        # The run page shows it beside the batch's own numbers.
        client.report_trainer(f"{args.series}-{step}", checks["agreement_max"], checks["agreement_mean"],
                              int(mask.sum()), checks["spanned"], checks["version_mismatches"],
                              float(loss.detach()))
        print(json.dumps({
            "step": step, "reward": round(float(scores.mean()), 4), **checks,
            "tokens": int(mask.sum()), "samples": int(mask.shape[0]), "policy_version": version,
            "generate_s": round(generated - started, 3), "train_s": round(trained - generated, 3),
            "sync_s": round(sync_s, 3), "loss": round(float(loss.detach()), 5),
        }), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8787")
    parser.add_argument("--model-url", default="http://127.0.0.1:8000")
    parser.add_argument("--rows", required=True)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rows-per-step", type=int, default=16)
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--prompt-length", type=int, default=64)
    # Two turns' answers plus the user turn between them (mask 0) fit in 48.
    parser.add_argument("--response-length", type=int, default=48)
    parser.add_argument("--max-tokens", type=int, default=4, help="max_tokens of each model call")
    parser.add_argument("--series", default="learn")
    parser.add_argument("--schedule", choices=("hybrid", "async"), default="hybrid",
                        help="hybrid: generate, then train, drain-sync; async: the next batches generate "
                             "while the trainer works, interrupting syncs (async/<max-staleness>)")
    parser.add_argument("--max-staleness", type=int, default=1)
    parser.add_argument("--agent", default="digits", help="the registered agent that runs each row")
    parser.add_argument("--timeout", type=float, default=120.0)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
