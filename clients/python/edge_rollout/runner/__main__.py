"""``python -m edge_rollout.runner module:agent --url … --agent NAME --runners 8``."""
from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Optional, Sequence

from .agents import load_agent
from .pool import Runner


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m edge_rollout.runner", description="Claim external rollouts and run a Python agent on them.")
    parser.add_argument("agent_spec", metavar="module:agent", help="the agent: a @rollout function, a LitAgent subclass or instance")
    parser.add_argument("--url", default=os.environ.get("EDGE_ROLLOUT_URL", "http://127.0.0.1:8787"), help="the deployment (default $EDGE_ROLLOUT_URL or http://127.0.0.1:8787)")
    parser.add_argument("--token", default=os.environ.get("EDGE_ROLLOUT_TOKEN"), help="API_TOKEN of the deployment (default $EDGE_ROLLOUT_TOKEN)")
    parser.add_argument("--agent", dest="agents", action="append", metavar="NAME", help="runner agent served (rollouts of external:NAME); repeat for several; default external")
    parser.add_argument("--runners", type=int, default=1, help="concurrent workers in this process (default 1)")
    parser.add_argument("--lease-ms", type=int, default=30_000, help="lease per claimed attempt, renewed every third of it (default 30000)")
    parser.add_argument("--grace", type=float, default=30.0, help="seconds running attempts may finish after SIGINT/SIGTERM before they are handed back (default 30)")
    parser.add_argument("--max-rollouts", type=int, default=None, help="stop after claiming this many")
    parser.add_argument("--exit-when-idle", type=float, default=None, metavar="SECONDS", help="stop after this long without work")
    parser.add_argument("--runner-id", default=None, help="id shown per batch (default host-pid-random)")
    parser.add_argument("--poll-interval", type=float, default=1.0, help="longest wait between idle claims (default 1 s)")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    if args.runners < 1:
        parser.error("--runners must be >= 1")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    sys.path.insert(0, os.getcwd())
    runner = Runner(load_agent(args.agent_spec), args.url, args.agents or ["external"], n_runners=args.runners, token=args.token,
                    lease_ms=args.lease_ms, runner_id=args.runner_id, poll_interval_s=args.poll_interval, max_rollouts=args.max_rollouts,
                    grace_s=args.grace, exit_when_idle_s=args.exit_when_idle)
    runner.install_signal_handlers()
    stats = runner.run()
    print(f"runner {runner.runner_id}: claimed {stats.claimed}, finished {stats.finished}, crashed {stats.crashed}, "
          f"lost {stats.lost}, handed back {stats.handed_back}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
