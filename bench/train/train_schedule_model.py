"""What `npm run bench:train`'s async schedule costs by itself, with no stack: a discrete-event model.

The same rules as bench/train/train-loop.ts's async modes (per sample here, per group there), in
virtual time: at most (1 + k) × B samples outstanding (generating, or generated and not yet trained
on: AReaL's admission rule, verl fully_async's staleness threshold), each sample's duration drawn
from the bench's tail (pareto, median = the step's training time), the trainer taking the B oldest
fresh-enough samples, training for the median, syncing (interrupt: in-flight samples go on; those
more than k versions behind are aborted). Prints the trainer's idle share per staleness bound k and
admission cap, so a measured idle share can be told apart into what the schedule itself costs and
what the stack adds.

    python3 bench/train/train_schedule_model.py [--steps 400] [--seeds 5]
"""
from __future__ import annotations

import argparse
import heapq
import random
import statistics


def run(batch: int, k: int, cap: int, steps: int, seed: int, median_s: float = 5.0, alpha: float = 1.5,
        longest_s: float = 61.0, sync_s: float = 0.03) -> tuple[float, int]:
    """(trainer idle %, samples thrown away) of one run of `steps` steps after the first."""
    rnd = random.Random(seed)
    scale = median_s / 2 ** (1 / alpha)  # a pareto of this scale has median `median_s`
    duration = lambda: min(longest_s, scale * rnd.random() ** (-1 / alpha))  # noqa: E731
    version, now = 0, 0.0
    generating: list[tuple[float, int]] = []  # (finishes at, version it started under)
    ready: list[int] = []
    wasted = 0

    def admit(at: float) -> None:
        while len(generating) + len(ready) < cap:
            heapq.heappush(generating, (at + duration(), version))

    admit(0.0)
    idle, started = 0.0, None
    for _ in range(steps + 1):
        waited_from = now
        while True:
            fresh = [v for v in ready if version - v <= k]
            wasted += len(ready) - len(fresh)
            ready[:] = fresh
            if len(ready) >= batch:
                break
            at, v = heapq.heappop(generating)
            now = max(now, at)
            ready.append(v)
            admit(now)
        if started is None:
            started = now  # filling the pipeline once is start-up, as in the bench
        else:
            idle += now - waited_from
        ready.sort()
        del ready[:batch]  # oldest first
        admit(now)
        trained_until = now + median_s
        while generating and generating[0][0] <= trained_until:
            at, v = heapq.heappop(generating)
            ready.append(v)
            admit(at)
        now = trained_until + sync_s
        idle += sync_s
        version += 1
        alive = [(at, v) for at, v in generating if version - v <= k]
        wasted += len(generating) - len(alive)
        generating[:] = alive
        heapq.heapify(generating)
        admit(now)
    return 100 * idle / (now - started), wasted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=16, help="B × n samples per step (the bench: 4 × 4)")
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    print(f"model of bench:train's async schedule: B×n = {args.batch}, training = the median sample time, pareto α = 1.5, "
          f"{args.steps} steps × {args.seeds} seeds")
    for k in (1, 2, 3):
        for extra in (0.0, 0.5, 1.0):
            cap = round(args.batch * (1 + k + extra))
            runs = [run(args.batch, k, cap, args.steps, seed) for seed in range(args.seeds)]
            label = f"(1 + k) × B" if extra == 0 else f"(1 + k + {extra:g}) × B"
            print(f"k = {k}, outstanding cap {label:>16}: trainer idle {statistics.mean(r[0] for r in runs):5.1f}%, "
                  f"samples thrown away per step {statistics.mean(r[1] for r in runs) / args.steps:5.2f}")


if __name__ == "__main__":
    main()
