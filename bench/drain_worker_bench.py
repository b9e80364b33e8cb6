"""The Python half of ``npm run bench:drain -- --from-worker`` (run by bench/drain-worker.ts).

Drains one published batch from the real Worker with ``Client.pull`` (Arrow, then JSON; each
round re-leases the same groups once the previous round's leases lapse, nothing is acked) and
pads every pull with ``to_verl_batch``; then drains a bare Worker that answers the very bodies
the real one answered (stored in its local R2) the same way: the floor. Prints samples/s from
pull to padded arrays for each, and a per-pull breakdown: the Worker's own time (its
``Server-Timing``: feed lease, R2 reads, encoding), bytes, HTTP time, client decode and padding.
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
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients" / "python"))

from edge_rollout import Client, to_verl_batch  # noqa: E402


class TimedClient(Client):
    """A Client that keeps the last answer's bytes, headers and HTTP time (the bench's breakdown)."""

    last: dict[str, Any] = {}

    def _send(self, method: str, path: str, body: Any, accept: Optional[str] = None) -> tuple[str, bytes]:
        data = None if body is None else json.dumps(body).encode()
        headers = self._headers if accept is None else {**self._headers, "accept": accept}
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        start = time.perf_counter()
        with urllib.request.urlopen(req, timeout=self.timeout) as response:
            first = time.perf_counter()
            raw = response.read()
            self.last = {"http": time.perf_counter() - start, "wait": first - start, "bytes": len(raw), "raw": raw,
                         "timing": response.headers.get("server-timing", "")}
            return response.headers.get("content-type", ""), raw


def worker_ms(header: str) -> dict[str, float]:
    """``feed;dur=3, r2;dur=0;desc="12 reads", encode;dur=5`` as a dict (``reads``: the R2 reads of a streamed pull)."""
    out = {}
    for part in header.split(","):
        name, _, rest = part.strip().partition(";dur=")
        if rest:
            duration, _, desc = rest.partition(";desc=")
            out[name] = float(duration)
            if desc.strip('"').endswith(" reads"):
                out["reads"] = float(desc.strip('"').split()[0])
    return out


def drain(client: TimedClient, fmt: str, args, capture=None) -> dict[str, Any]:
    """Pulls until every sample of the batch has been padded once; returns timings per pull."""
    pulls, seen, samples = [], set(), 0
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        while samples < args.samples:
            t0 = time.perf_counter()
            pulled = client.pull(max_groups=args.groups_per_pull, batch_id=args.batch_id, format=fmt, lease_ms=args.lease_ms[fmt])
            t1 = time.perf_counter()
            leased_until = t1 + args.lease_ms[fmt] / 1000  # this pull's lease lapses no earlier than this
            info = client.last
            if capture:
                capture(fmt, len(pulls), info["raw"])
            if pulled["lease_id"] is None:
                timings = " | ".join(p["timing"] for p in pulls)
                raise SystemExit(f"the feed ran dry after {samples} of {args.samples} samples ({fmt}; earlier pulls' Server-Timing: {timings})")
            uids = {g["uid"] for g in pulled["groups"]}
            if uids & seen:
                raise SystemExit(f"a group came twice in one drain: lease_ms {args.lease_ms[fmt]} is too short for this machine")
            seen |= uids
            batch = to_verl_batch(pulled["groups"], args.prompt_length, args.response_length, pad_token_id=0)
            t2 = time.perf_counter()
            samples += len(batch)
            pulls.append({"http": info["http"], "wait": info["wait"], "decode": (t1 - t0) - info["http"], "pad": t2 - t1,
                          "bytes": info["bytes"], "samples": len(batch), "worker": worker_ms(info["timing"]), "timing": info["timing"]})
            del pulled, batch
        return {"total": time.perf_counter() - start, "pulls": pulls, "samples": samples, "leased_until": leased_until}
    finally:
        gc.enable()


def put(url: str, data: bytes) -> None:
    urllib.request.urlopen(urllib.request.Request(url, data=data, method="PUT"), timeout=120).read()


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("url", "floor-url", "batch-id"):
        parser.add_argument(f"--{name}", required=True)
    for name in ("samples", "groups-per-pull", "prompt-length", "response-length", "rounds", "arrow-lease-ms", "json-lease-ms"):
        parser.add_argument(f"--{name}", type=int, required=True)
    args = parser.parse_args()
    args.lease_ms = {"arrow": args.arrow_lease_ms, "json": args.json_lease_ms}
    worker, floor = TimedClient(args.url, timeout=300), TimedClient(args.floor_url, timeout=300)
    runs: dict[str, list] = {"arrow": [], "json": []}
    floors: dict[str, list] = {"arrow": [], "json": []}

    def store(fmt: str, index: int, raw: bytes) -> None:
        put(f"{args.floor_url}/bodies/{fmt}/{index}", raw)

    def reset_floor() -> None:
        urllib.request.urlopen(urllib.request.Request(f"{args.floor_url}/reset", method="POST"), timeout=10).read()

    def same_start(fmt: str) -> None:
        """An untimed drain of the floor's copies: every timed drain then meets the allocator as a
        drain of the same bytes leaves it (as a trainer's does at every step after its first).
        Without it the first of two back-to-back drains paid the page faults of its padded arrays
        (pad 373 ms after the Worker's pull against 111 ms after the floor's, same bytes)."""
        reset_floor()
        drain(floor, fmt, args)
        reset_floor()

    # Drain 0 warms up (imports, first-call code paths on both sides) and is not counted; it also
    # hands the floor the bodies (uploading them inside a timed drain would be timed as padding).
    for round_index in range(args.rounds + 1):
        for fmt in ("arrow", "json"):
            if round_index:
                same_start(fmt)
            run = drain(worker, fmt, args, capture=store if round_index == 0 else None)
            # Every lease of this drain (its last pull's too) must lapse before the next drain, or
            # that drain finds those groups still leased (exactly-once) and runs dry.
            lapsed = run["leased_until"] + 0.3
            if round_index:
                same_start(fmt)
            else:
                reset_floor()
            floor_run = drain(floor, fmt, args)
            if round_index:
                runs[fmt].append(run)
                floors[fmt].append(floor_run)
            time.sleep(max(0.0, lapsed - time.perf_counter()))

    med = statistics.median
    n = args.samples
    print(f"from the Worker (real local stack, Miniflare), {n} samples in pulls of up to {args.groups_per_pull} groups, padded to "
          f"{args.prompt_length} + {args.response_length}; median of {args.rounds} drains each after one to warm up, nothing acked (leases lapse between drains)")
    for fmt in ("arrow", "json"):
        rate, floor_rate = n / med([r["total"] for r in runs[fmt]]), n / med([r["total"] for r in floors[fmt]])
        print(f"from the Worker, pull -> padded arrays ({fmt}): {rate:,.0f} samples/s")
        print(f"floor (bare Worker, same bytes) ({fmt}): {floor_rate:,.0f} samples/s   -> the Worker reaches {rate / floor_rate:.0%} of its floor")
    print(f"{'per pull (median over drains)':34} {'samples':>8} {'MB':>7} {'worker ms':>10} {'(feed/r2/encode reads)':>24} {'http ms':>8} {'decode ms':>10} {'pad ms':>8}")
    for fmt in ("arrow", "json"):
        for label, source in ((f"{fmt}, Worker", runs[fmt]), (f"{fmt}, floor", floors[fmt])):
            for i in range(len(source[0]["pulls"])):
                cells = [r["pulls"][i] for r in source]
                worker_parts = [med([c["worker"].get(k, 0.0) for c in cells]) for k in ("feed", "r2", "encode")]
                served = f"{sum(worker_parts):.0f}" if label.endswith("Worker") else "-"
                reads = med([c["worker"].get("reads", 0.0) for c in cells])
                parts = "/".join(f"{p:.0f}" for p in worker_parts) + (f" {reads:.0f}r" if reads else "") if label.endswith("Worker") else "-"
                print(f"{label + ' #' + str(i + 1):34} {cells[0]['samples']:>8} {cells[0]['bytes'] / 1e6:>7.1f} {served:>10} {parts:>24} "
                      f"{med([c['http'] for c in cells]) * 1000:>8.0f} {med([c['decode'] for c in cells]) * 1000:>10.0f} {med([c['pad'] for c in cells]) * 1000:>8.0f}")
    arrow = n / med([r["total"] for r in runs["arrow"]])
    print(f"goal: >= 5,000 samples/s Arrow from the Worker: {'met' if arrow >= 5000 else 'NOT met'} ({arrow:,.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
