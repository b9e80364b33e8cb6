"""Integration (real local stack): every sample pulled as Arrow equals the JSON pull of the same
groups, decoded by pyarrow, for every sample kind the stack produces, and pads to the same arrays.

The kinds come from real rollouts on the vLLM simulator: multi-turn calculator samples (tool
tokens masked 0), drift segments (a template that strips ``<think>`` from history), truncated
untrainable samples (``max_steps: 1``), per-call segments, failed rollouts with no sample
(the model answering 5xx: the trainer's placeholders), and validation rollouts whose calls carry
no training data. Samples whose calls lack logprobs are covered in the workerd test
(test/integration/runtime/feed/feed-arrow.integration.test.ts): the stack's vLLM backend always
returns them.
"""
from __future__ import annotations

import json
import time
import urllib.request
import uuid

import numpy as np
import pytest

pytest.importorskip("pyarrow", reason="the Arrow format needs pyarrow (.ci/run installs it)")

from edge_rollout import Client, to_verl_batch  # noqa: E402
from live_stack import MODEL_SERVERS, ROWS, wait_done  # noqa: E402

DEFAULTS = {"thinking": False, "stripThinkInHistory": False, "successRate": 0.7, "faults": {"rate5xx": 0}}


def configure_simulator(url: str, patch: dict) -> None:
    request = urllib.request.Request(url.rstrip("/") + "/sim/config", method="PUT", data=json.dumps(patch).encode(),
                                     headers={"content-type": "application/json"})
    urllib.request.urlopen(request, timeout=10).read()


@pytest.fixture
def simulator(stack):
    url = MODEL_SERVERS[stack]
    yield lambda patch: configure_simulator(url, patch)
    configure_simulator(url, DEFAULTS)


def strip(groups):
    """Groups without what differs between two deliveries, samples as plain dicts."""
    return [{**{k: v for k, v in g.items() if k != "deliveries"},
             "members": [{**m, "samples": [s.to_dict() if hasattr(s, "to_dict") else s for s in m["samples"]]} for m in g["members"]]}
            for g in groups]


def test_every_sample_kind_pulled_as_arrow_equals_the_json_pull(stack, simulator):
    client = Client(stack, timeout=60)
    prefix = f"arrow-{uuid.uuid4().hex[:8]}"
    kinds = [
        ("multi", {}, {}, "train"),
        # Qwen3's chat template drops the <think> of assistant turns before the last user query, so
        # a multi-turn dialogue (not the calculator, whose tool turn keeps its reasoning) drifts.
        ("drift", {"thinking": True, "successRate": 1}, {}, "train"),
        ("truncated", {}, {"max_steps": 1}, "train"),
        ("percall", {}, {"sample_mode": "per_call"}, "train"),
        ("failed", {"faults": {"rate5xx": 1}}, {"max_attempts": 1}, "train"),
        ("val", {}, {}, "val"),
    ]
    for name, sim_patch, config, mode in kinds:
        simulator({**DEFAULTS, **sim_patch})
        batch = f"{prefix}-{name}"
        agent = "dialogue" if name == "drift" else "calculator"
        client.submit_batch(ROWS[:2], agent=agent, n=2, batch_id=batch, config=config or None, mode=mode, data_manager="train")
        wait_done(client, batch, timeout=120)
    simulator(DEFAULTS)

    as_json = client.pull(max_groups=64, batch_prefix=prefix, lease_ms=1000, format="json")
    # The failed kind's rollouts ended MODEL_ERROR (infrastructure) on every run: their groups are
    # withheld, reported with the reason, never delivered (docs/verl.md).
    assert len(as_json["groups"]) == 2 * (len(kinds) - 1)
    withheld = sorted(g["uid"] for g in as_json["dropped_groups"] if g["reason"] == "infra_failure")
    assert withheld == [f"{prefix}-failed:0", f"{prefix}-failed:1"]
    time.sleep(1.2)  # the lease lapses: the same groups are delivered again
    as_arrow = client.pull(max_groups=64, batch_prefix=prefix, format="arrow")
    client.ack(as_arrow["lease_id"])
    assert "columns" in as_arrow and as_arrow["returned_groups"] == as_json["returned_groups"] == 0
    assert [g["deliveries"] for g in as_arrow["groups"]] == [2] * len(as_json["groups"])
    assert strip(as_arrow["groups"]) == strip(as_json["groups"])

    def members(kind):
        return [m for g in as_json["groups"] if g["batch_id"] == f"{prefix}-{kind}" for m in g["members"]]

    assert any(0 in s["response_mask"] for m in members("multi") for s in m["samples"]), "multi-turn samples mask tool tokens"
    assert any(len(m["samples"]) > 1 for m in members("drift")), "a stripped <think> splits a rollout into drift segments"
    assert any(len(m["samples"]) > 1 for m in members("percall")), "per-call mode makes one segment per call"
    assert all(s["extra_fields"]["trainable"] is False for m in members("truncated") for s in m["samples"])
    assert members("failed") == [], "a group with an infrastructure failure is never delivered"
    assert all(m["samples"] == [] for m in members("val")), "validation calls carry no training data"

    fast = to_verl_batch(as_arrow["groups"], 512, 256, pad_token_id=0)
    slow = to_verl_batch(as_json["groups"], 512, 256, pad_token_id=0)
    for key in slow.batch:
        np.testing.assert_array_equal(fast.batch[key], slow.batch[key], err_msg=key)


def test_cli_drain_writes_arrow_parts_pyarrow_reads_each_sample_once(stack, tmp_path):
    import subprocess

    import pyarrow as pa
    from live_stack import ROOT, edge_rollout_cli

    client = Client(stack, timeout=60)
    batch = f"arrow-drain-{uuid.uuid4().hex[:8]}"
    client.submit_batch(ROWS[:3], agent="calculator", n=2, batch_id=batch)
    wait_done(client, batch, timeout=120)
    out = tmp_path / "samples"
    args = ("drain", "--url", stack, "--batch", batch, "--format", "arrow", "--out", str(out), "--per-pull", "1", "--json")
    run = subprocess.run(edge_rollout_cli(*args), cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    parts = sorted(out.glob("part-*.arrows"))
    assert len(parts) == summary["pulls"] - 1 == 3  # one part per pull with groups; the last pull found none
    table = pa.concat_tables(pa.ipc.open_stream(part.read_bytes()).read_all() for part in parts)
    keys = [f"{r}#{s}" for r, s in zip(table.column("rollout_id").to_pylist(), table.column("segment_index").to_pylist())]
    assert table.num_rows == summary["samples_written"] == summary["samples_pulled"] == len(set(keys))
    assert {r.rsplit(":", 2)[0] for r in table.column("rollout_id").to_pylist()} == {batch}
    assert all(len(m) == len(i) for m, i in zip(table.column("response_mask").to_pylist(), table.column("response_ids").to_pylist()))
    again = subprocess.run(edge_rollout_cli(*args), cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert json.loads(again.stdout)["samples_in_file"] == table.num_rows and len(list(out.glob("part-*.arrows"))) == 3


def test_cli_export_writes_a_batchs_samples_as_parquet_equal_to_the_json_pull(stack, tmp_path):
    import subprocess

    import pyarrow.parquet as pq
    from live_stack import ROOT, edge_rollout_cli

    client = Client(stack, timeout=60)
    batch = f"parquet-{uuid.uuid4().hex[:8]}"
    client.submit_batch(ROWS[:3], agent="calculator", n=2, batch_id=batch)
    wait_done(client, batch, timeout=120)
    out = tmp_path / "samples.parquet"
    run = subprocess.run(edge_rollout_cli("export", "--url", stack, "--batch", batch, "--out", str(out), "--json"),
                         cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    table = pq.read_table(out)
    rows = table.to_pylist()
    for row in rows:
        row["policy_version"] = {"start": row.pop("policy_version_start"), "end": row.pop("policy_version_end")}
        row["extra_fields"] = json.loads(row["extra_fields"])
        row["schema_version"] = 2
        # Per-token versions: a column of every row, null where the JSON sample leaves the field out.
        versions = row.pop("response_policy_versions")
        if versions is not None:
            row["response_policy_versions"] = versions
    pulled = client.pull(max_groups=64, batch_id=batch, format="json")
    client.ack(pulled["lease_id"])
    expected = [s for g in pulled["groups"] for m in g["members"] for s in m["samples"]]
    assert json.loads(run.stdout)["samples"] == len(rows) == len(expected) > 0
    key = lambda s: (s["rollout_id"], s["segment_index"])  # noqa: E731
    assert sorted(rows, key=key) == sorted(expected, key=key)
