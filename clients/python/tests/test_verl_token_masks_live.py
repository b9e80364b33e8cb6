"""Live (real local stack, Qwen3's tokenizer and chat template in the simulator): the verl batch of
multi-turn reasoning rollouts trains every model token once and no template token.

The dialogue agent talks for 5 turns with ``<think>`` on; Qwen3's template drops the reasoning of
assistant turns before the last user query, so every later call re-renders history and the sample
builder splits each rollout at every call. The calculator reasons too, but its tool turn keeps
its reasoning, so its tool results are context tokens inside one segment. The batch is built as ``EdgeRolloutTrainer`` builds it inside
``fit``: ``generate_sequences`` with ``train_drift_segments`` (the last segment answers the row),
fit's union with the repeated input (``MiniDataProto``: verl is not installable here), then
``expand_drift_segments`` appending the earlier segments (``drift_segments``).

The expectation is rebuilt independently from the gateway's own records (``GET /v1/rollouts/:id``,
every call's ``prompt_token_ids`` / ``completion_token_ids`` / ``logprobs``): a call starts a new
segment when its prompt does not extend the previous call's prompt + completion; inside a segment
the tokens a later prompt adds (template glue, the user's next turn) are context (mask 0) and
each completion is trained (mask 1). Every row must equal that token for token, so a mask or a
segment boundary off by one fails. The simulator's ``POST /detokenize`` names what was masked.
"""
from __future__ import annotations

import json
import urllib.request
import uuid

import numpy as np
import pytest

from edge_rollout import Client
from edge_rollout.verl import EdgeRolloutManager
from edge_rollout.verl.drift_segments import EARLIER_SEGMENT, expand_drift_segments
from live_stack import MODEL_SERVERS, ROWS
from verl_fakes import MiniDataProto, objects

PROMPT_LEN, RESPONSE_LEN, PAD = 512, 2048, 151643  # Qwen3's <|endoftext|> is its pad token
DEFAULTS = {"thinking": False, "stripThinkInHistory": False, "successRate": 0.7, "faults": {"rate5xx": 0}}


def post_json(url: str, body: dict, method: str = "POST") -> dict:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method=method, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read() or b"{}")


@pytest.fixture
def thinking_simulator(stack):
    url = MODEL_SERVERS[stack].rstrip("/")
    post_json(f"{url}/sim/config", {**DEFAULTS, "thinking": True, "successRate": 1}, method="PUT")
    yield url
    post_json(f"{url}/sim/config", DEFAULTS, method="PUT")


def expected_segments(calls: list[dict]) -> list[dict]:
    """The segments the gateway's records imply: prompt, response ids and mask, model-token logprobs."""
    segments: list[dict] = []
    covered: list[int] = []
    for call in calls:
        prompt, completion = call["prompt_token_ids"], call["completion_token_ids"]
        if not segments or prompt[:len(covered)] != covered:
            segments.append({"prompt": list(prompt), "ids": [], "mask": [], "logprobs": [], "calls": 0})
        else:
            glue = prompt[len(covered):]
            segments[-1]["ids"] += glue
            segments[-1]["mask"] += [0] * len(glue)
        segment = segments[-1]
        segment["ids"] += completion
        segment["mask"] += [1] * len(completion)
        segment["logprobs"] += call["logprobs"]
        segment["calls"] += 1
        covered = list(prompt) + list(completion)
    return segments


@pytest.mark.parametrize("agent", ["dialogue", "calculator"])
def test_every_model_token_is_trained_once_and_no_template_token_in_the_verl_batch(stack, thinking_simulator, agent):
    client = Client(stack, timeout=60)
    rows = 2
    manager = EdgeRolloutManager(client, agent=agent, n=2, prompt_length=PROMPT_LEN, response_length=RESPONSE_LEN, pad_token_id=PAD,
                                 return_tensors="np", run_id=f"masks-{uuid.uuid4().hex[:8]}", timeout=60, poll_interval=0.1)
    manager.train_drift_segments = True  # what EdgeRolloutTrainer.init_workers sets (wire_trainer)
    batch = MiniDataProto(non_tensor_batch={  # the dataloader's batch with fit's uids (ray_trainer.py:1374-1376)
        "raw_prompt": objects([row["prompt"] for row in ROWS[:rows]]), "data_source": objects([row["data_source"] for row in ROWS[:rows]]),
        "reward_model": objects([row["reward_model"] for row in ROWS[:rows]]), "uid": objects([f"u{r}" for r in range(rows)])})
    gen_batch = MiniDataProto(non_tensor_batch={k: v.copy() for k, v in batch.non_tensor_batch.items()}, meta_info={"global_steps": 1})
    output = manager.generate_sequences(gen_batch.repeat(2, interleave=True))
    timing = output.meta_info.pop("timing")  # ray_trainer.py:1401-1402
    trained = batch.repeat(2, interleave=True).union(MiniDataProto(output.batch, output.non_tensor_batch, output.meta_info))
    expansion = expand_drift_segments(trained)  # DriftSegmentsTrainerMixin._compute_or_extract_reward
    if agent == "dialogue":
        assert expansion["segments"] > 0, "Qwen3's template dropped no <think>: the rollouts never drifted"
    counts = output.meta_info["edge_rollout"]
    assert counts["drift_segments_trained"] == expansion["segments"] and counts["placeholders"] == 0 and timing["edge_rollout/generate_sequences"] > 0

    prompts, responses = np.asarray(trained.batch["prompts"]), np.asarray(trained.batch["responses"])
    mask, attention = np.asarray(trained.batch["response_mask"]), np.asarray(trained.batch["attention_mask"])
    logprobs = np.asarray(trained.batch["rollout_log_probs"])
    rollout_ids, segment_index = trained.non_tensor_batch["rollout_id"], trained.non_tensor_batch["segment_index"]
    assert sorted(set(rollout_ids)) == sorted(rollout_ids[:rows * 2]) and len(set(rollout_ids[:rows * 2])) == rows * 2

    model_tokens = context_tokens = 0
    masked_text: list[str] = []
    for rollout_id in sorted(set(rollout_ids)):
        calls = client.request("GET", f"/v1/rollouts/{rollout_id}")["llm_calls"]
        assert len(calls) >= 2 and all(call["trainable"] for call in calls)
        segments = expected_segments(calls)
        # The dialogue drifts at every call (each earlier <think> is dropped); the calculator's tool
        # turns keep their reasoning, so its tool results sit inside one segment, masked.
        assert len(segments) == (len(calls) if agent == "dialogue" else 1), f"{rollout_id}: {len(segments)} segments of {len(calls)} calls"
        rows_of = {int(segment_index[i]): i for i in np.flatnonzero(rollout_ids == rollout_id)}
        assert sorted(rows_of) == list(range(len(segments))), f"{rollout_id}: segments {sorted(rows_of)} vs {len(segments)} from the calls"
        earlier = trained.non_tensor_batch.get(EARLIER_SEGMENT, np.zeros(len(rollout_ids), dtype=bool))  # absent: nothing expanded
        assert bool(earlier[rows_of[len(segments) - 1]]) is False  # the last segment answers the rollout's row
        for s, segment in enumerate(segments):
            i = rows_of[s]
            n = int(attention[i, PROMPT_LEN:].sum())
            assert prompts[i, PROMPT_LEN - len(segment["prompt"]):].tolist() == segment["prompt"] and attention[i, :PROMPT_LEN].sum() == len(segment["prompt"])
            assert responses[i, :n].tolist() == segment["ids"], f"{rollout_id} segment {s}: response ids"
            assert mask[i, :n].tolist() == segment["mask"], f"{rollout_id} segment {s}: response_mask off"
            assert not mask[i, n:].any()
            np.testing.assert_allclose(logprobs[i, :n][mask[i, :n] == 1], segment["logprobs"], atol=1e-6)
            model_tokens += sum(segment["mask"])
            context_tokens += len(segment["mask"]) - sum(segment["mask"])
            glue = [t for t, m in zip(segment["ids"], segment["mask"]) if m == 0]
            if glue:
                masked_text.append(post_json(f"{thinking_simulator}/detokenize", {"tokens": glue})["prompt"])
    # Every completion token of every call sits under mask 1 exactly once across the batch's rows.
    assert int(mask.sum()) == model_tokens == sum(len(c["completion_token_ids"]) for r in set(rollout_ids)
                                                   for c in client.request("GET", f"/v1/rollouts/{r}")["llm_calls"])
    # The manager's batch is one step of its run's series (the dashboard's /runs/<run_id>-train).
    run = client.request("GET", f"/v1/runs/{manager.run_id}-train")
    assert [(step["step"], step["batch_id"]) for step in run["steps"]] == [(1, output.meta_info["edge_rollout"]["batch_id"])]
    # What was masked inside a segment is template glue and the tool's results, never the model's reasoning or reply.
    if agent == "calculator":
        assert context_tokens > 0 and masked_text
    for text in masked_text:
        assert text.startswith("\n<|im_start|>user\n<tool_response>") and text.endswith("<|im_start|>assistant\n") and "<think>" not in text, text
