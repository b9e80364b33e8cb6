"""The Python half of ``npm run bench:drain`` (run by drain.bench.ts, which serves the pull).

For each format, JSON and Arrow, in one run on the same samples: times, per round,
``Client.pull`` (HTTP on loopback + decode) and ``to_verl_batch`` on its groups, against decoding
the same response bytes from memory (``json.loads`` / ``decode_arrow_pull``: the floor of that
format), and prints medians, samples/s from pull to padded arrays, body bytes per sample against
the raw arrays (token ids as int32, mask as one byte, logprobs as float32, unpadded), and the ratio
of the whole drain to its floor.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))

try:
    from edge_rollout import Client, to_verl_batch
    from edge_rollout.arrow_feed import ARROW_MEDIA_TYPE, arrow_available, decode_arrow_pull
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


def fetch(url: str, groups: int, accept: str) -> bytes:
    request = urllib.request.Request(url + "/v1/feed/pull", method="POST", headers={"content-type": "application/json", "accept": accept},
                                     data=json.dumps({"max_groups": groups, "inline": True}).encode())
    with urllib.request.urlopen(request) as response:
        return response.read()


def raw_array_bytes(groups) -> int:
    """The samples' arrays at their natural widths, unpadded: ids int32, mask 1 byte, logprobs float32."""
    total = 0
    for group in groups:
        for member in group["members"]:
            for s in member["samples"]:
                total += 4 * (len(s["prompt_ids"]) + len(s["response_ids"])) + len(s["response_mask"]) + 4 * len(s["response_logprobs"])
    return total


def run(client: Client, args, fmt: str, decode, raw: bytes) -> dict:
    floor, pulls, pads = [], [], []
    batch = None
    for round_index in range(args.rounds + 1):  # round 0 warms up
        pulled = batch = None  # free the previous round's objects before timing
        decode_s, _ = timed(lambda: decode(raw))
        del _
        pull_s, pulled = timed(lambda: client.pull(max_groups=args.groups, format=fmt))
        pad_s, batch = timed(lambda: to_verl_batch(pulled["groups"], args.prompt_length, args.response_length, pad_token_id=0))
        client.ack(pulled["lease_id"])
        assert len(batch) == args.samples, f"expected {args.samples} samples, got {len(batch)}"
        if round_index:
            floor.append(decode_s), pulls.append(pull_s), pads.append(pad_s)
    med = statistics.median
    totals = [p + q for p, q in zip(pulls, pads)]
    return {"floor": med(floor), "pull": med(pulls), "pad": med(pads), "total": med(totals),
            "totals": (min(totals), max(totals)), "body": len(raw), "batch": batch}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    for name in ("groups", "samples", "tokens", "prompt-length", "response-length", "rounds"):
        parser.add_argument(f"--{name}", type=int, required=True)
    args = parser.parse_args()
    if not arrow_available(warn=False):
        sys.exit("bench:drain needs pyarrow for the Arrow half (python3 -m pip install pyarrow)")
    client = Client(args.url, timeout=120)
    raw_json = fetch(args.url, args.groups, "application/json")
    raw_arrow = fetch(args.url, args.groups, ARROW_MEDIA_TYPE)
    raw_arrays = raw_array_bytes(json.loads(raw_json)["groups"])
    results = {"json": run(client, args, "json", json.loads, raw_json), "arrow": run(client, args, "arrow", decode_arrow_pull, raw_arrow)}

    n = args.samples
    rate = lambda seconds: n / seconds  # noqa: E731
    print(f"bench:drain — {args.groups} groups, {n} samples of {args.tokens} tokens, padded to {args.prompt_length} + "
          f"{args.response_length}; median of {args.rounds} rounds after one to warm up, loopback, a canned server (the same body every pull); raw arrays {raw_arrays / n:,.0f} B/sample "
          f"(ids int32, mask 1 B, logprobs float32, unpadded)")
    print(f"{'':44} {'json':>22} {'arrow':>22}")

    def row(label: str, key: str) -> None:
        cells = [f"{results[f][key] * 1000:7.1f} ms {rate(results[f][key]):7.0f}/s" for f in ("json", "arrow")]
        print(f"{label:44} {cells[0]:>22} {cells[1]:>22}")

    row("decode the body from memory (the floor)", "floor")
    row("Client.pull (urllib on loopback + decode)", "pull")
    row("to_verl_batch (numpy padding)", "pad")
    row("pull -> padded arrays (total)", "total")
    spread = [f"{rate(results[f]['totals'][1]):,.0f}–{rate(results[f]['totals'][0]):,.0f}/s" for f in ("json", "arrow")]
    print(f"{'  its range over the rounds':44} {spread[0]:>22} {spread[1]:>22}")
    bodies = [f"{results[f]['body'] / n:,.0f} B ({results[f]['body'] / raw_arrays:.2f}x raw)" for f in ("json", "arrow")]
    print(f"{'body bytes per sample (vs raw arrays)':44} {bodies[0]:>22} {bodies[1]:>22}")
    ratios = [f"{results[f]['total'] / results[f]['floor']:.2f}x" for f in ("json", "arrow")]
    print(f"{'ratio total / floor':44} {ratios[0]:>22} {ratios[1]:>22}")
    batch = results["arrow"]["batch"]
    print(f"arrow vs json, pull -> padded arrays: {results['json']['total'] / results['arrow']['total']:.1f}x faster; "
          f"padded arrays {batch.batch['input_ids'].shape}, {sum(a.nbytes for a in batch.batch.values()) / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
