#!/usr/bin/env python3
"""The rollout and weight-sync half of one verl training step, without verl or a GPU.

Start the local stack first (``npm start``), then::

    python3 examples/verl/cpu_step.py [--url http://127.0.0.1:8787] [--model-url http://127.0.0.1:8000]

It reads ``examples/verl/ppo_edge_rollout.yaml`` (the config verl would get), builds the manager
the way verl's ``agent_loop_manager_class`` hook does, with the simulator standing in for verl's
vLLM replica (so ``PUT /v1/policy`` points edge-rollout at it), then replays fit()'s calls:
``update_weights`` before training, a train step (``repeat(n, interleave=True)``,
``generate_sequences``, ``sleep_replicas``), and the ``update_weights`` after the actor update
— each weight update bracketed by ``sync/begin`` / ``sync/end(version)``. It prints the batch
the actor would train on and the metrics verl would log, and exits 0.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.request
import uuid
from pathlib import Path
from types import SimpleNamespace

import numpy as np

try:
    import yaml
except ImportError:  # verl depends on PyYAML; without verl it is this script's one extra package
    sys.exit("cpu_step.py reads verl's YAML config and needs PyYAML: pip install pyyaml")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "clients" / "python"))  # run from a checkout without installing
from edge_rollout import Client  # noqa: E402
from edge_rollout.verl.agent_loop_manager import EdgeRolloutAgentLoopManager  # noqa: E402
from edge_rollout.verl.drift_segments import EARLIER_SEGMENTS  # noqa: E402
from edge_rollout.verl.metrics import step_metrics  # noqa: E402
from edge_rollout.verl.trainer import bracket_weight_sync  # noqa: E402


class SimulatorReplica:
    """Stands in for one of verl's vLLM replicas: its address, and profiling / KV-cache calls that do nothing on CPU."""

    def __init__(self, url: str):
        self._server_address = url

    async def start_profile(self, **kwargs): ...

    async def stop_profile(self): ...

    async def clear_kv_cache(self): ...


class CpuCheckpointManager:
    """verl's CheckpointEngineManager without GPUs: there are no weights to move, so it only counts."""

    def __init__(self):
        self.calls: list[str] = []

    def sleep_replicas(self):
        self.calls.append("sleep_replicas")

    def update_weights(self):
        self.calls.append("update_weights")


def namespace(value):
    """The YAML as attribute access, as an OmegaConf config reads."""
    if isinstance(value, dict):
        return SimpleNamespace(**{key: namespace(item) for key, item in value.items()})
    return value


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("EDGE_ROLLOUT_URL", "http://127.0.0.1:8787"))
    parser.add_argument("--model-url", default=os.environ.get("EDGE_ROLLOUT_MODEL_URL", "http://127.0.0.1:8000"),
                        help="the simulator npm start runs, in place of verl's vLLM server")
    parser.add_argument("--config", default=str(Path(__file__).with_name("ppo_edge_rollout.yaml")))
    parser.add_argument("--rows", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=300.0)
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    raw = yaml.safe_load(Path(args.config).read_text())
    raw["edge_rollout"].update(url=args.url, timeout=args.timeout)
    config = namespace(raw)
    config.edge_rollout = raw["edge_rollout"]
    client = Client(args.url, token=os.environ.get("EDGE_ROLLOUT_TOKEN"))
    if not client.health():
        print(f"edge-rollout is not answering at {args.url}: start it with `npm start`", file=sys.stderr)
        return 1
    # verl's vLLM serves actor_rollout_ref.model.path; the simulator serves its own model name.
    config.edge_rollout["model"] = served_model(args.model_url)
    # init_workers (ray_trainer.py:912-926): the manager from the hook, the checkpoint manager on its replicas.
    manager = EdgeRolloutAgentLoopManager(config, None, None, None, replicas=[SimulatorReplica(args.model_url)], client=client)
    manager.return_tensors = "np"
    manager.train_drift_segments = True  # as EdgeRolloutTrainer sets it: earlier drift segments ride in the output's meta
    checkpoint = CpuCheckpointManager()
    sync = bracket_weight_sync(checkpoint, client, wait_ms=30_000)
    checkpoint.sleep_replicas()
    checkpoint.update_weights()  # fit() 1324: before training
    lines = (ROOT / "test/fixtures/datasets/calculator.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines if line.strip()][: args.rows]
    n = config.actor_rollout_ref.rollout.n
    columns = {"raw_prompt": [row["prompt"] for row in rows], "uid": [str(uuid.uuid4()) for _ in rows],
               **{key: [row[key] for row in rows] for key in ("data_source", "reward_model", "extra_info")}}
    gen_batch = {"non_tensor_batch": {key: _repeat(values, n) for key, values in columns.items()}, "meta_info": {"global_steps": 1}}
    output = manager.generate_sequences(gen_batch)  # fit() 1396
    checkpoint.sleep_replicas()  # 1397
    timing = output.meta_info.pop("timing")
    print("the batch the actor would train on:")
    for key, value in output.batch.items():
        print(f"  {key:18} {str(value.shape):14} {value.dtype}")
    print(f"  uid / __num_turns__ / multi_modal_inputs: {len(output.non_tensor_batch['uid'])} rows, "
          f"turns {sorted(set(output.non_tensor_batch['__num_turns__'].tolist()))}")
    earlier = output.meta_info.pop(EARLIER_SEGMENTS, None)
    print(f"  + {len(earlier['non_tensor_batch']['rollout_id']) if earlier else 0} earlier drift segments, "
          "appended by EdgeRolloutTrainer after fit's union")
    scores = np.asarray(output.batch["rm_scores"]).sum(-1)
    print(f"mean reward {scores.mean():.3f} over {len(scores)} rollouts")
    checkpoint.update_weights()  # 1610-1611: after the actor update
    # fit logs meta_info["timing"] as timing_s/* (durations only); EdgeRolloutTrainer adds the counts as edge_rollout/*.
    logged = {**{f"timing_s/{k}": round(v, 3) for k, v in timing.items()}, **step_metrics(SimpleNamespace(async_rollout_manager=manager))}
    print("metrics verl would log:", json.dumps(logged, sort_keys=True))
    print(f"checkpoint manager calls {checkpoint.calls}; policy versions made live {sync.versions}")
    return 0


def served_model(model_url: str) -> str:
    """The first model ``GET /v1/models`` of the model server lists."""
    base = model_url.rstrip("/")
    try:
        with urllib.request.urlopen(base + ("/models" if base.endswith("/v1") else "/v1/models"), timeout=10) as response:
            return json.loads(response.read())["data"][0]["id"]
    except OSError as error:  # urllib's URLError is an OSError: nothing listening, or not a model server
        sys.exit(f"no model server answers at {model_url} ({error}): pass the one the stack uses with "
                 "--model-url or $EDGE_ROLLOUT_MODEL_URL (npm start's simulator: --simulator-port, default 8000)")


def _repeat(values: list, n: int) -> np.ndarray:
    column = np.empty(len(values) * n, dtype=object)
    column[:] = [value for value in values for _ in range(n)]
    return column


if __name__ == "__main__":
    sys.exit(main())
