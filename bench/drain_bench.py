"""The Python half of ``npm run bench:drain`` (run by bench/drain.bench.ts, which serves the pull).

Times, per round, ``Client.pull`` (HTTP on loopback + JSON decode) and ``to_verl_batch`` on its
groups, against ``json.loads`` of the same response bytes, and prints medians, samples/s and
the ratio of the whole drain to the JSON floor.
"""
from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients" / "python"))

try:
    from edge_rollout import Client, to_verl_batch
except ImportError as error:  # numpy missing
    sys.exit(f"bench:drain needs numpy for edge_rollout.to_verl_batch: {error}")


def timed(fn):
    """Seconds ``fn`` takes, with the cyclic GC off (as timeit does): its full-heap passes over
    millions of fresh JSON objects would otherwise land on whichever phase happens to trigger them."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        result = fn()
        return time.perf_counter() - start, result
    finally:
        gc.enable()


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("url",):
        parser.add_argument(f"--{name}", required=True)
    for name in ("groups", "samples", "tokens", "prompt-length", "response-length", "rounds"):
        parser.add_argument(f"--{name}", type=int, required=True)
    args = parser.parse_args()
    client = Client(args.url, timeout=120)
    request = urllib.request.Request(args.url + "/v1/feed/pull", method="POST", headers={"content-type": "application/json"},
                                     data=json.dumps({"max_groups": args.groups, "inline": True}).encode())
    with urllib.request.urlopen(request) as response:
        raw = response.read()

    floor, pulls, pads = [], [], []
    for round_index in range(args.rounds + 1):  # round 0 warms up
        pulled = batch = None  # free the previous round's objects before timing
        decode_s, _ = timed(lambda: json.loads(raw))
        del _
        pull_s, pulled = timed(lambda: client.pull(max_groups=args.groups))
        pad_s, batch = timed(lambda: to_verl_batch(pulled["groups"], args.prompt_length, args.response_length, pad_token_id=0))
        client.ack(pulled["lease_id"])
        assert len(batch) == args.samples, f"expected {args.samples} samples, got {len(batch)}"
        if round_index:
            floor.append(decode_s), pulls.append(pull_s), pads.append(pad_s)

    med = statistics.median
    total = [p + q for p, q in zip(pulls, pads)]
    rate = lambda seconds: args.samples / seconds  # noqa: E731

    def line(label: str, seconds: float) -> str:
        return f"{label:44} {seconds * 1000:9.1f} ms  {rate(seconds):9.0f} samples/s"

    print(f"bench:drain — {args.groups} groups, {args.samples} samples of {args.tokens} tokens, pull body "
          f"{len(raw) / 1e6:.1f} MB, padded to {args.prompt_length} + {args.response_length}; median of {args.rounds} rounds, loopback")
    print(line("json.loads of the same bytes (the floor)", med(floor)))
    print(line("Client.pull (urllib on loopback + json)", med(pulls)))
    print(line("to_verl_batch (numpy padding)", med(pads)))
    print(line("pull -> padded arrays (total)", med(total)))
    print(f"ratio total / floor: {med(total) / med(floor):.2f}x   padded arrays: {batch.batch['input_ids'].shape}, "
          f"{sum(a.nbytes for a in batch.batch.values()) / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
