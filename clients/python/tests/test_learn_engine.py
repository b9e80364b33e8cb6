"""Unit: the policy engine (edge_rollout.learn) samples, reports log-probs the model recomputes, and reloads weights safely."""
from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import HTTPServer

import pytest

torch = pytest.importorskip("torch")

from edge_rollout.learn.checkpoint import CheckpointError, load_checkpoint, save_checkpoint  # noqa: E402
from edge_rollout.learn.engine_server import EngineState, handler_for  # noqa: E402
from edge_rollout.learn.policy import create_policy, left_pad  # noqa: E402
from edge_rollout.learn.sampling import step  # noqa: E402

OUT = [15, 16, 17, 18, 151645]  # "0".."3" and <|im_end|> in Qwen3's vocabulary
EOS = 151645


def sequence(prompt, output=(), **sampling):
    return {"seq_id": 0, "key": sampling.pop("key", None), "prompt_ids": list(prompt), "output_ids": list(output),
            "sampling": {"temperature": 1.0, "eos_token_id": EOS, **sampling}}


def recomputed(model, context, token, temperature=1.0):
    ids, mask, positions = left_pad([context])
    logits = model(ids, mask, positions)[0, -1] / temperature
    return float(logits.detach().log_softmax(-1)[model.out_index(torch.tensor([token]))[0]])


def test_raw_logprobs_are_the_models_own_and_processed_ones_follow_the_temperature():
    model = create_policy(OUT, seed=1)
    prompt = [151644, 872, 198, 100, 200, 300]
    for mode, temperature in (("raw_logprobs", 0.7), ("processed_logprobs", 0.7), ("raw_logprobs", 1.0)):
        [token] = step(model, [sequence(prompt, [15], temperature=temperature)], mode)
        expected = recomputed(model, prompt + [15], token["id"], 1.0 if mode == "raw_logprobs" else temperature)
        assert token["id"] in OUT
        assert abs(token["logprob"] - expected) < 1e-5


def test_a_keyed_draw_repeats_and_masks_keep_eos_out():
    model = create_policy(OUT, seed=2)
    prompt = [1, 2, 3, 4]
    draws = [[step(model, [sequence(prompt, key="r:0")], "raw_logprobs")[0]["id"] for _ in range(3)] for _ in range(2)]
    assert draws[0] == draws[1]
    banned = {step(model, [sequence(prompt, [15] * k, ignore_eos=True, key=f"k{k}")], "raw_logprobs")[0]["id"]
              for k in range(40)}
    assert EOS not in banned


def test_one_batched_step_equals_each_sequence_alone():
    model = create_policy(OUT, seed=3)
    batch = [sequence([5, 6, 7, 8, 9], temperature=0), sequence([5, 6], [16], temperature=0)]
    together = step(model, batch, "raw_logprobs")
    alone = [step(model, [s], "raw_logprobs")[0] for s in batch]
    for a, b in zip(together, alone):
        assert a["id"] == b["id"] and abs(a["logprob"] - b["logprob"]) < 1e-5


@pytest.fixture()
def engine(tmp_path):
    path = tmp_path / "policy.pt"
    save_checkpoint(create_policy(OUT, seed=4), path)
    state = EngineState(str(path), "raw_logprobs", 0)
    server = HTTPServer(("127.0.0.1", 0), handler_for(state))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", state, tmp_path
    server.shutdown()


def post(url, body):
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_refuses_a_missing_truncated_or_misshapen_checkpoint_and_keeps_serving_the_old_weights(engine):
    url, state, tmp = engine
    served = state.model
    truncated = tmp / "truncated.pt"
    truncated.write_bytes((tmp / "policy.pt").read_bytes()[:300])
    wider = tmp / "wider.pt"
    save_checkpoint(create_policy(OUT, seed=5, dim=32), wider)
    for path, reason in ((tmp / "none.pt", "no checkpoint"), (truncated, "not a readable checkpoint"), (wider, "another architecture")):
        status, body = post(f"{url}/weights/load", {"path": str(path), "weight_version": 1})
        assert status == 400 and reason in body["error"]
    assert state.model is served and state.weight_version == 0
    assert post(f"{url}/step", {"sequences": [sequence([1, 2])]})[1]["weight_version"] == 0


def test_loads_new_weights_whole_and_answers_with_their_version(engine):
    url, state, tmp = engine
    newer = tmp / "v1.pt"
    save_checkpoint(create_policy(OUT, seed=6), newer)
    before = post(f"{url}/step", {"sequences": [sequence([1, 2], temperature=0)]})[1]["tokens"][0]
    assert post(f"{url}/weights/load", {"path": str(newer), "weight_version": 1}) == (200, {"weight_version": 1})
    status, after = post(f"{url}/step", {"sequences": [sequence([1, 2], temperature=0)]})
    assert status == 200 and after["weight_version"] == 1
    assert after["tokens"][0]["logprob"] != before["logprob"]
    assert torch.equal(state.model.head.weight, load_checkpoint(newer).head.weight)


def test_names_the_field_of_a_malformed_step():
    model = create_policy(OUT, seed=7)
    state = type("S", (), {"model": model, "logprobs_mode": "raw_logprobs", "weight_version": 0, "generator": None})()
    server = HTTPServer(("127.0.0.1", 0), handler_for(state))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        status, body = post(f"http://127.0.0.1:{server.server_address[1]}/step",
                            {"sequences": [{"prompt_ids": [1, -2], "output_ids": [], "sampling": {}}]})
        assert status == 400 and "sequences.0.prompt_ids" in body["error"]
    finally:
        server.shutdown()


def test_load_checkpoint_refuses_a_non_finite_weight(tmp_path):
    model = create_policy(OUT, seed=8)
    with torch.no_grad():
        model.head.bias[0] = float("nan")
    save_checkpoint(model, tmp_path / "nan.pt")
    with pytest.raises(CheckpointError, match="non-finite"):
        load_checkpoint(tmp_path / "nan.pt")


def test_the_trainers_recompute_matches_the_engines_steps_token_by_token():
    from edge_rollout.learn.recompute import response_logprobs

    model = create_policy(OUT, seed=9)
    prompt, output, recorded = [151644, 872, 198, 42, 43], [], []
    for _ in range(6):
        [token] = step(model, [sequence(prompt, output, temperature=1.0, key="r:1")], "raw_logprobs")
        output.append(token["id"])
        recorded.append(token["logprob"])
    with torch.no_grad():
        again = response_logprobs(model, [prompt, [7]], [output, [15]])[0].tolist()
    assert max(abs(a - b) for a, b in zip(again, recorded)) < 1e-5


def test_each_token_is_checked_under_its_own_recorded_version_and_a_wrong_version_is_a_mismatch():
    import numpy as np

    from edge_rollout.learn.versions import agreement, token_versions

    non_tensor = {"policy_version_start": np.array([3, 3]),
                  "response_policy_versions": np.array([None, [3, 4, 4]], dtype=object)}
    versions = token_versions(non_tensor, 3)
    assert versions.tolist() == [[3, 3, 3], [3, 4, 4]]
    scored = {3: torch.tensor([[-1.0, -2.0, -3.0], [-1.0, -2.0, -3.0]], dtype=torch.float64),
              4: torch.tensor([[-1.5, -2.5, -3.5], [-1.5, -2.5, -3.5]], dtype=torch.float64)}
    mask = torch.ones(2, 3)
    recorded = torch.tensor([[-1.0, -2.0, -3.0], [-1.0, -2.5, -3.5]], dtype=torch.float64)
    assert agreement(recorded, scored, versions, mask) == {
        "agreement_max": 0.0, "agreement_mean": 0.0, "spanned": 1, "version_mismatches": 0}
    # The second response's last token recorded as version 4 but produced by version 3's weights.
    wrong = recorded.clone()
    wrong[1, 2] = -3.0
    checks = agreement(wrong, scored, versions, mask)
    assert checks["version_mismatches"] == 1 and checks["agreement_max"] == 0.5


def test_a_refused_reload_ends_the_sync_at_the_old_version_and_fails_the_step(server):
    from edge_rollout.learn.trainer import sync

    server.route("POST", "/update_weights_from_disk", lambda body: (400, {"success": False, "message": "truncated file"}, {}))
    calls = []

    class Trainer:
        def request(self, method, path, body):
            calls.append(path)

        def abort_sync(self):
            calls.append("abort")

        def end_sync(self, version):
            calls.append(f"end {version}")

    with pytest.raises(RuntimeError, match="truncated file"):
        sync(Trainer(), server.url, "/tmp/v2.pt", 2, "drain")
    assert calls == ["/v1/policy/sync/begin", "abort"]
