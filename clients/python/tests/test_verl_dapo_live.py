"""Live: DAPO's dynamic sampling under EdgeRolloutTrainer, the filter and the cut done by the service."""
from __future__ import annotations

import numpy as np
import pytest

from edge_rollout import Client
from edge_rollout.verl import PRESAMPLED, EdgeRolloutManager, dapo
from edge_rollout.verl.dapo import DapoBatches
from live_stack import ROWS
from verl_fakes import MiniDataProto


def loader(batches: int, size: int) -> list[dict]:
    """verl's collated dataloader batches: object columns as RLHFDataset + collate_fn emit them, and a tensor."""
    out = []
    for b in range(batches):
        rows = [ROWS[(b * size + i) % len(ROWS)] for i in range(size)]
        column = lambda key: np.array([row.get(key) for row in rows], dtype=object)  # noqa: E731
        out.append({"input_ids": np.arange(size * 3).reshape(size, 3) + b, "raw_prompt": column("prompt"), "data_source": column("data_source"),
                    "reward_model": column("reward_model"), "extra_info": column("extra_info")})
    return out


def test_each_step_holds_only_groups_with_signal_and_fit_gets_them_without_a_second_rollout(stack: str) -> None:
    client = Client(stack, timeout=30)
    submitted: list[str] = []
    submit = client.submit_batch
    client.submit_batch = lambda *args, **kwargs: submitted.append(kwargs["batch_id"]) or submit(*args, **kwargs)  # type: ignore[method-assign]
    manager = EdgeRolloutManager(client, agent="calculator", n=4, prompt_length=1024, response_length=512, pad_token_id=0,
                                 return_tensors="np", run_id="dapo", timeout=300)
    batches = DapoBatches(loader(4, 4), manager, train_batch_size=3, filter_groups={"enable": True, "metric": "seq_reward", "max_num_gen_batches": 0})
    step = next(iter(batches))
    assert len(step[PRESAMPLED]) == 3 and step["input_ids"].shape == (3, 3)
    assert len(submitted) == batches.steps[0]["gen_batches"] >= 1
    gen = MiniDataProto({"input_ids": step["input_ids"]}, {k: v for k, v in step.items() if k != "input_ids"}, {"global_steps": 1})
    gen.non_tensor_batch["uid"] = np.array([f"u{i}" for i in range(3)], dtype=object)
    out = manager.generate_sequences(gen.repeat(4, interleave=True))
    assert len(submitted) == batches.steps[0]["gen_batches"]  # answered from the groups DapoBatches kept, no second rollout
    scores = np.asarray(out.batch["rm_scores"]).sum(-1).reshape(3, 4)
    assert all(len(set(row.tolist())) > 1 for row in scores), scores
    first = client.batch_status(submitted[0])
    assert first["groups"]["target"] == 3 and first["groups"]["delivered"] >= 1
    assert out.non_tensor_batch["uid"].tolist() == [f"u{i}" for i in range(3) for _ in range(4)]


def test_a_step_that_cannot_fill_raises_after_max_num_gen_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dapo, "sample_signal_groups", lambda *args: {})  # every group without signal
    manager = EdgeRolloutManager(Client("http://127.0.0.1:9"), agent="calculator", n=4, prompt_length=8, response_length=8, pad_token_id=0, return_tensors="np")
    batches = DapoBatches(loader(5, 2), manager, train_batch_size=2, filter_groups={"enable": True, "metric": "acc", "max_num_gen_batches": 3})
    assert batches.metric == "acc"
    with pytest.raises(ValueError, match="num_gen_batches=3 >= max_num_gen_batches=3"):
        next(iter(batches))
