"""Live: with half the model server's generations failing, verl's own GRPO never sees a fake signal.

The simulator answers 50% of generation requests with a 5xx (the gateway retries each call up to 4
times, so about one calculator rollout in eight still fails with MODEL_ERROR). The verl manager
rolls a batch out; verl's default estimator (``grpo_reference``, re-stated from
core_algos.py:267-327) then runs over its output. In every group either each valid member's
advantage equals the advantage computed over the valid members alone, or the group is withheld
whole (every row masked with zero reward: advantage 0).
"""
from __future__ import annotations

import json
import urllib.request
from types import SimpleNamespace as NS

import numpy as np

from edge_rollout import Client
from edge_rollout.verl import EdgeRolloutManager
from edge_rollout.verl.validity import VALID
from grpo_reference import grpo_outcome_advantage, grpo_scores
from live_stack import MODEL_SERVERS, ROWS


def configure_simulator(url: str, patch: dict) -> None:
    request = urllib.request.Request(f"{url}/sim/config", data=json.dumps(patch).encode(), method="PUT", headers={"content-type": "application/json"})
    urllib.request.urlopen(request, timeout=10).read()


def current_runs(client: Client, batch_id: str) -> list[dict]:
    listed = client.request("GET", f"/v1/batches/{batch_id}/rollouts?limit=1000")["rollouts"]
    return listed


def test_groups_with_infrastructure_failures_are_retried_or_withheld_never_scored(stack: str) -> None:
    client = Client(stack, timeout=30)
    simulator = MODEL_SERVERS[stack]
    configure_simulator(simulator, {"faults": {"rate5xx": 0.5}})
    try:
        manager = EdgeRolloutManager(client, agent="calculator", n=4, prompt_length=1024, response_length=512, pad_token_id=0,
                                     return_tensors="np", run_id="signal", timeout=300)
        out = manager.rollout(ROWS[:16])
    finally:
        configure_simulator(simulator, {"faults": {"rate5xx": 0}})
    batch_id = out.meta_info["edge_rollout"]["batch_id"]
    progress = client.batch_status(batch_id)
    assert progress["retried"] > 0, progress
    listed = current_runs(client, batch_id)
    superseded = [entry for entry in listed if entry["superseded"]]
    assert superseded
    # The re-run is visible on the rollout views too: the first run says infra, its replacement its run number.
    first = client.request("GET", f"/v1/rollouts/{superseded[0]['rollout_id']}")
    assert first["outcome"] == "infra" and first["group"]["max_member_retries"] == 2
    rerun = client.request("GET", f"/v1/rollouts/{superseded[0]['rollout_id'].split('.retry-')[0]}.retry-{superseded[0]['attempt'] + 1}")
    assert rerun["group"]["attempt"] == superseded[0]["attempt"] + 1
    valid = {(entry["row_index"], entry["sample_index"]) for entry in listed if not entry["superseded"] and entry["outcome"] == "policy"}

    uids = out.non_tensor_batch["uid"]
    scores = np.asarray(out.batch["rm_scores"]).sum(-1)
    mask = np.asarray(out.batch["response_mask"])
    data = NS(batch={"token_level_rewards": out.batch["rm_scores"], "response_mask": mask}, non_tensor_batch={"uid": uids})
    advantages = grpo_outcome_advantage(data).batch["advantages"]
    per_row = np.asarray(advantages).sum(-1) / np.maximum(mask.sum(-1), 1)
    rollout_ids = [rid for rid in out.non_tensor_batch["rollout_id"] if rid is not None]
    assert len(rollout_ids) == len(set(rollout_ids)), "a rollout id was trained twice"

    withheld = 0
    for r, uid in enumerate(sorted(set(uids), key=lambda u: int(u.rsplit(":", 1)[1]))):
        rows = np.flatnonzero(uids == uid)
        row_index = int(uid.rsplit(":", 1)[1])
        if not mask[rows].any() and not scores[rows].any() and not out.non_tensor_batch[VALID][rows].any():
            withheld += 1
            assert np.all(per_row[rows] == 0)
            continue
        members = [(row_index, k) for k in range(4)]
        assert all(member in valid for member in members), f"group {uid} was delivered with an invalid member"
        alone = grpo_scores(scores[rows], uids[rows])
        trained = [i for i, row in enumerate(rows) if mask[row].any()]
        assert np.allclose(per_row[rows][trained], alone[trained], atol=1e-5)
    assert withheld == progress["groups"]["withheld"] + progress["groups"]["filtered"] + progress["groups"]["cut"]
    assert progress["groups"]["delivered"] + withheld == 16
