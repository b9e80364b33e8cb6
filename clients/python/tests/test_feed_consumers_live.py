"""Integration (real local stack): two consumers of one feed, each pulling only its own batch.

A CLI ``drain --batch A`` and the verl manager working on batch B run at the same time against
one feed: each gets exactly its own groups, once, and neither leases (so acks) the other's.
"""
from __future__ import annotations

import json
import subprocess
import tempfile
import threading
import uuid
from pathlib import Path

from edge_rollout import Client
from edge_rollout.verl import EdgeRolloutManager
from live_stack import ROOT, ROWS, edge_rollout_cli


def verl_gen_batch(rows: list[dict], n: int, step: int) -> dict:
    """A generation batch as verl's trainer passes it: each row repeated ``n`` times, interleaved."""
    repeated = [row for row in rows for _ in range(n)]
    columns = {key: [row.get(key) for row in repeated] for key in ("prompt", "data_source", "reward_model", "extra_info")}
    columns["raw_prompt"] = columns.pop("prompt")
    return {"non_tensor_batch": columns, "meta_info": {"global_steps": step}}


def test_a_drain_of_batch_a_and_the_verl_manager_on_batch_b_each_get_only_their_own_groups(stack):
    client = Client(stack)
    batch_a = f"drain-{uuid.uuid4().hex[:8]}"
    rows_a, rows_b, n = ROWS[:3], ROWS[3:5], 2
    client.submit_batch(rows_a, agent="calculator", n=n, batch_id=batch_a)
    out_file = Path(tempfile.mkdtemp()) / "a.jsonl"
    drain = subprocess.Popen(edge_rollout_cli("drain", "--url", stack, "--batch", batch_a, "--out", str(out_file), "--follow",
                                              "--max-groups", str(len(rows_a)), "--per-pull", "1", "--interval", "100", "--json"),
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    manager = EdgeRolloutManager(client, "calculator", n, 512, 256, 0, run_id=f"verl-{uuid.uuid4().hex[:8]}", timeout=120,
                                 poll_interval=0.1, return_tensors="np")
    result: dict = {}
    worker = threading.Thread(target=lambda: result.update(out=manager.generate_sequences(verl_gen_batch(rows_b, n, step=1))))
    worker.start()
    stdout, stderr = drain.communicate(timeout=180)
    worker.join(timeout=180)
    assert drain.returncode == 0, stderr
    summary = json.loads(stdout)
    samples = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert summary["groups"] == len(rows_a) and summary["duplicates_skipped"] == 0 and summary["expired_leases"] == 0
    assert sorted({s["uid"] for s in samples}) == [f"{batch_a}:{r}" for r in range(len(rows_a))]
    assert len({s["rollout_id"] for s in samples}) == len(rows_a) * n
    out = result["out"]
    batch_b = out.meta_info["edge_rollout"]["batch_id"]
    # Rollout ids are `<batch>:<row>:<sample>`: every row of B, each once, in the input's order.
    assert out.non_tensor_batch["rollout_id"].tolist() == [f"{batch_b}:{r}:{k}" for r in range(len(rows_b)) for k in range(n)]
    stats = client.feed_stats(batch_id=[batch_a, batch_b])
    empty = {"pending_groups": 0, "ready_groups": 0, "leased_groups": 0, "dropped_groups": 0, "dropped_by_reason": {}}
    assert stats["by_batch"] == {batch_a: empty, batch_b: empty}
