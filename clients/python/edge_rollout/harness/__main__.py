"""``python -m edge_rollout.harness --url … --tasks DIR --agent claude-code --agent codex --runners 6``."""
from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Optional, Sequence

from ..runner.pool import Runner
from .agent import HarnessAgent
from .limits import DEFAULT_OUTPUT_CAP
from .tasks import list_dataset


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The command line (flags shared with ``python -m edge_rollout.runner`` keep its names and defaults)."""
    parser = argparse.ArgumentParser(prog="python -m edge_rollout.harness",
                                     description="Claim external:<harness> rollouts and run the harness CLI on each task.")
    parser.add_argument("--url", default=os.environ.get("EDGE_ROLLOUT_URL", "http://127.0.0.1:8787"), help="the deployment (default $EDGE_ROLLOUT_URL or http://127.0.0.1:8787)")
    parser.add_argument("--token", default=os.environ.get("EDGE_ROLLOUT_TOKEN"), help="API_TOKEN of the deployment (default $EDGE_ROLLOUT_TOKEN)")
    parser.add_argument("--tasks", required=True, metavar="DIR", help="directory of task directories (Harbor layout)")
    parser.add_argument("--agent", dest="agents", action="append", metavar="HARNESS",
                        help="harness served (rollouts of external:HARNESS); repeat for several; default all known harnesses")
    parser.add_argument("--runners", type=int, default=4, help="rollouts run at once in this process (default 4)")
    parser.add_argument("--wall-clock", type=float, default=None, metavar="SECONDS", help="limit per harness run (default each task's [agent] timeout_sec)")
    parser.add_argument("--output-cap", type=int, default=DEFAULT_OUTPUT_CAP, metavar="BYTES", help=f"bytes of stdout and of stderr kept per run (default {DEFAULT_OUTPUT_CAP})")
    isolation = parser.add_mutually_exclusive_group()
    isolation.add_argument("--require-isolation", action="store_const", const=True, dest="isolate", help="fail rollouts where namespaces are unavailable")
    isolation.add_argument("--no-isolation", action="store_const", const=False, dest="isolate", help="never use namespaces (the CLI gets the host's network)")
    parser.add_argument("--lease-ms", type=int, default=30_000, help="lease per claimed attempt, renewed every third of it (default 30000)")
    parser.add_argument("--grace", type=float, default=30.0, help="seconds running attempts may finish after SIGINT/SIGTERM (default 30)")
    parser.add_argument("--max-rollouts", type=int, default=None, help="stop after claiming this many")
    parser.add_argument("--exit-when-idle", type=float, default=None, metavar="SECONDS", help="stop after this long without work")
    parser.add_argument("--runner-id", default=None, help="id shown per batch (default host-pid-random)")
    parser.add_argument("--poll-interval", type=float, default=1.0, help="longest wait between idle claims (default 1 s)")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    if args.runners < 1:
        parser.error("--runners must be >= 1")
    if not os.path.isdir(args.tasks):
        parser.error(f"--tasks {args.tasks} is not a directory")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Serves the harnesses until stopped; prints the runner's stats."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    from .clis import HARNESSES  # noqa: PLC0415 - imported late so --help works without it
    agents = args.agents or list(HARNESSES)
    unknown = [name for name in agents if name not in HARNESSES]
    if unknown:
        print(f"unknown harness {', '.join(unknown)}; known: {', '.join(HARNESSES)}", file=sys.stderr)
        return 2
    agent = HarnessAgent(agents, args.tasks, wall_clock_s=args.wall_clock, output_cap_bytes=args.output_cap, isolate=args.isolate)
    logging.getLogger("edge_rollout.harness").info("%d tasks under %s", len(list_dataset(args.tasks)), args.tasks)
    runner = Runner(agent, args.url, agents, n_runners=args.runners, token=args.token, lease_ms=args.lease_ms, runner_id=args.runner_id,
                    poll_interval_s=args.poll_interval, max_rollouts=args.max_rollouts, grace_s=args.grace, exit_when_idle_s=args.exit_when_idle)
    runner.install_signal_handlers()
    stats = runner.run()
    print(f"harness runner {runner.runner_id}: claimed {stats.claimed}, finished {stats.finished}, crashed {stats.crashed}, "
          f"lost {stats.lost}, handed back {stats.handed_back}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
