"""Integration (real local stack): examples/verl/cpu_step.py runs the rollout and weight-sync half of a step."""
from __future__ import annotations

import subprocess
import sys

from edge_rollout import Client
from live_stack import MODEL_SERVERS, ROOT


def test_the_cpu_step_example_rolls_out_syncs_weights_twice_and_prints_the_batch(stack):
    before = Client(stack).policy()["policy_version"]
    run = subprocess.run([sys.executable, "examples/verl/cpu_step.py", "--url", stack, "--model-url", MODEL_SERVERS[stack], "--rows", "2",
                          "--timeout", "120"], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr
    assert "responses          (4, 256)" in run.stdout and "multi_modal_inputs: 4 rows" in run.stdout
    assert "\"edge_rollout/rollouts\": 4.0" in run.stdout and "timing_s/edge_rollout/generate_sequences" in run.stdout
    assert "timing_s/edge_rollout/rollouts" not in run.stdout  # a count is not a duration
    assert f"policy versions made live [{before + 1}, {before + 2}]" in run.stdout
    policy = Client(stack).policy()
    assert policy["policy_version"] == before + 2 and MODEL_SERVERS[stack].rstrip("/") in str(policy["backend"])
