"""The Python half of ``npm run bench:drain -- --from-worker`` (driven by drain-python.ts).

Round by round, as its stdin names them (``{"round": r, "arrow": <batch id>, "json": <batch id>}``,
published just before), drains each batch from the real Worker with ``Client.pull`` (Arrow from
one, JSON from the other) and pads every pull with ``to_verl_batch``; checks that every group was
leased for the first time (``deliveries`` 1, its drain's batch, a uid no earlier drain saw) and
acks the drain's leases once its clock has stopped; then drains a bare Worker that answers the
very bodies the real one answered (stored in its local R2) the same way: the floor. Answers
``@drained r`` on stdout. Round 0 warms up and is not counted. At the end of its input prints
samples/s from pull to padded arrays for each (median and range over the rounds), and a per-pull
breakdown: the Worker's own time (its ``Server-Timing``: feed lease, R2 reads, encoding), bytes,
HTTP time, client decode and padding.
"""
from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))

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


def drain(client: TimedClient, fmt: str, args, wanted: int, batch_id: Optional[str] = None) -> dict[str, Any]:
    """Pulls until ``wanted`` samples have been padded; returns timings per pull, the bodies
    (for the floor) and every pulled group (checked once the clock has stopped)."""
    pulls, bodies, groups, leases, seen, samples = [], [], [], [], set(), 0
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        while samples < wanted:
            t0 = time.perf_counter()
            pulled = client.pull(max_groups=args.groups_per_pull, batch_id=batch_id, format=fmt, lease_ms=args.lease_ms[fmt])
            t1 = time.perf_counter()
            info = client.last
            bodies.append(info["raw"])
            if pulled["lease_id"] is None:
                timings = " | ".join(p["timing"] for p in pulls)
                raise SystemExit(f"the feed ran dry after {samples} of {wanted} samples ({fmt}; earlier pulls' Server-Timing: {timings})")
            uids = {g["uid"] for g in pulled["groups"]}
            if uids & seen:
                raise SystemExit(f"a group came twice in one drain: lease_ms {args.lease_ms[fmt]} is too short for this machine")
            seen |= uids
            leases.append(pulled["lease_id"])
            groups.extend({"uid": g["uid"], "batch_id": g.get("batch_id"), "deliveries": g.get("deliveries")} for g in pulled["groups"])
            batch = to_verl_batch(pulled["groups"], args.prompt_length, args.response_length, pad_token_id=0)
            t2 = time.perf_counter()
            samples += len(batch)
            pulls.append({"http": info["http"], "wait": info["wait"], "decode": (t1 - t0) - info["http"], "pad": t2 - t1,
                          "bytes": info["bytes"], "samples": len(batch), "worker": worker_ms(info["timing"]), "timing": info["timing"]})
            del pulled, batch
        return {"total": time.perf_counter() - start, "pulls": pulls, "samples": samples, "bodies": bodies, "groups": groups, "leases": leases}
    finally:
        gc.enable()


def put(url: str, data: bytes) -> None:
    urllib.request.urlopen(urllib.request.Request(url, data=data, method="PUT"), timeout=120).read()


def check_fresh(run: dict[str, Any], batch_id: str, leased_before: set[str], groups: int) -> None:
    """Every group of a drain: its batch's, leased for the first time, never pulled by an earlier drain."""
    uids = [g["uid"] for g in run["groups"]]
    problems = []
    if len(uids) != groups:
        problems.append(f"{len(uids)} groups where {groups} were published")
    if any(g["deliveries"] is None for g in run["groups"]):
        problems.append("a pulled group carries no deliveries count")
    elif any(g["deliveries"] != 1 for g in run["groups"]):
        problems.append(f"deliveries {sorted({g['deliveries'] for g in run['groups']})}: a group was leased before")
    if any(g["batch_id"] != batch_id for g in run["groups"]):
        problems.append(f"groups of batches {sorted({str(g['batch_id']) for g in run['groups']} - {batch_id})}")
    if leased_before & set(uids):
        problems.append(f"{len(leased_before & set(uids))} uids an earlier drain leased")
    if problems:
        raise SystemExit(f"drain of {batch_id} did not lease fresh groups: {'; '.join(problems)}")
    leased_before.update(uids)


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("url", "floor-url"):
        parser.add_argument(f"--{name}", required=True)
    for name in ("groups", "n", "warm-up-groups", "groups-per-pull", "prompt-length", "response-length", "rounds", "arrow-lease-ms", "json-lease-ms"):
        parser.add_argument(f"--{name}", type=int, required=True)
    args = parser.parse_args()
    args.lease_ms = {"arrow": args.arrow_lease_ms, "json": args.json_lease_ms}
    worker, floor = TimedClient(args.url, timeout=300), TimedClient(args.floor_url, timeout=300)
    runs: dict[str, list] = {"arrow": [], "json": []}
    floors: dict[str, list] = {"arrow": [], "json": []}
    leased_before: set[str] = set()
    acked = 0

    def reset_floor() -> None:
        urllib.request.urlopen(urllib.request.Request(f"{args.floor_url}/reset", method="POST"), timeout=10).read()

    def same_start(fmt: str, wanted: int) -> None:
        """An untimed drain of the floor's copies: every timed drain then meets the allocator as a
        drain of the same bytes leaves it (as a trainer's does at every step after its first).
        Without it the first of two back-to-back drains paid the page faults of its padded arrays
        (pad 373 ms after the Worker's pull against 111 ms after the floor's, same bytes).
        ``wanted`` samples are padded, the stored bodies replayed from the first again when they
        run out (after the warm-up round they hold fewer samples than a timed drain)."""
        reset_floor()
        padded, fresh = 0, True
        while padded < wanted:
            try:
                pulled = floor.pull(max_groups=args.groups_per_pull, format=fmt, lease_ms=args.lease_ms[fmt])
            except urllib.error.HTTPError as error:
                if error.code != 404 or fresh:
                    raise
                reset_floor()
                fresh = True
                continue
            fresh = False
            padded += len(to_verl_batch(pulled["groups"], args.prompt_length, args.response_length, pad_token_id=0))
            del pulled
        reset_floor()

    # Round 0 warms up (imports, first-call code paths on both sides, on --warm-up-groups groups a
    # drain) and is not counted.
    rounds_seen = 0
    for line in sys.stdin:
        command = json.loads(line)
        round_index = command["round"]
        groups = args.groups if round_index else args.warm_up_groups
        wanted = groups * args.n
        for fmt in ("arrow", "json"):
            if round_index:
                same_start(fmt, wanted)
            run = drain(worker, fmt, args, wanted, batch_id=command[fmt])
            # Past the clock: what a trainer does once the step has its arrays.
            check_fresh(run, command[fmt], leased_before, groups)
            for lease_id in run["leases"]:
                acked += worker.ack(lease_id)["acked_groups"]
            # The floor answers this drain's very bodies, in the order the Worker answered them.
            for index, raw in enumerate(run.pop("bodies")):
                put(f"{args.floor_url}/bodies/{fmt}/{index}", raw)
            if round_index:
                same_start(fmt, wanted)
            else:
                reset_floor()
            floor_run = drain(floor, fmt, args, wanted)
            floor_run.pop("bodies")
            if round_index:
                runs[fmt].append(run)
                floors[fmt].append(floor_run)
        rounds_seen += 1
        print(f"@drained {round_index}", flush=True)
    if rounds_seen != args.rounds + 1 or not runs["arrow"]:
        raise SystemExit(f"expected {args.rounds + 1} rounds on stdin (one to warm up), got {rounds_seen}")

    med = statistics.median
    n = args.groups * args.n
    drains = 2 * (args.rounds + 1)
    print(f"from the Worker (real local stack, Miniflare), {n} samples ({args.groups} groups) per drain in pulls of up to {args.groups_per_pull} groups, padded to "
          f"{args.prompt_length} + {args.response_length}; median of {args.rounds} rounds after one to warm up, each drain on a batch published for it")
    print(f"fresh leases: all {drains} drains (the 2 warm-up ones on {args.warm_up_groups} groups) leased every group of their own batch for the first time (deliveries 1, no uid seen by an "
          f"earlier drain: {len(leased_before)} distinct); {acked} groups acked, each drain's after its clock stopped")
    for fmt in ("arrow", "json"):
        rates = [n / r["total"] for r in runs[fmt]]
        floor_rates = [n / r["total"] for r in floors[fmt]]
        rate, floor_rate = n / med([r["total"] for r in runs[fmt]]), n / med([r["total"] for r in floors[fmt]])
        print(f"from the Worker, pull -> padded arrays ({fmt}): {rate:,.0f} samples/s (rounds {min(rates):,.0f}–{max(rates):,.0f})")
        print(f"floor (bare Worker, same bytes) ({fmt}): {floor_rate:,.0f} samples/s (rounds {min(floor_rates):,.0f}–{max(floor_rates):,.0f})"
              f"   -> the Worker reaches {rate / floor_rate:.0%} of its floor")
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
