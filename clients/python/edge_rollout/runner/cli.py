"""The command line every runner command shares (``python -m edge_rollout.runner`` and ``python -m edge_rollout.harness``)."""
from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any, Sequence

from .pool import Runner


def add_runner_arguments(parser: argparse.ArgumentParser, runners_default: int = 1) -> None:
    """The flags every runner command shares (this one's and ``python -m edge_rollout.harness``'s): deployment, leases, shutdown."""
    parser.add_argument("--url", default=os.environ.get("EDGE_ROLLOUT_URL", "http://127.0.0.1:8787"), help="the deployment (default $EDGE_ROLLOUT_URL or http://127.0.0.1:8787)")
    parser.add_argument("--token", default=os.environ.get("EDGE_ROLLOUT_TOKEN"), help="API_TOKEN of the deployment (default $EDGE_ROLLOUT_TOKEN)")
    parser.add_argument("--runners", type=int, default=runners_default, help=f"rollouts run at once in this process (default {runners_default})")
    parser.add_argument("--lease-ms", type=int, default=30_000, help="lease per claimed attempt, renewed every third of it (default 30000)")
    parser.add_argument("--grace", type=float, default=30.0, help="seconds running attempts may finish after SIGINT/SIGTERM before they are handed back (default 30)")
    parser.add_argument("--max-rollouts", type=int, default=None, help="stop after claiming this many")
    parser.add_argument("--exit-when-idle", type=float, default=None, metavar="SECONDS", help="stop after this long without work")
    parser.add_argument("--runner-id", default=None, help="id shown per batch (default host-pid-random)")
    parser.add_argument("--poll-interval", type=float, default=1.0, help="longest wait between idle claims (default 1 s)")
    parser.add_argument("-v", "--verbose", action="store_true")


def check_runner_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuses shared flags out of range (argparse's usage error, exit 2)."""
    if args.runners < 1:
        parser.error("--runners must be >= 1")


def serve(agent: Any, agents: Sequence[str], args: argparse.Namespace, label: str = "runner") -> int:
    """Runs ``agent`` for the runner agent names ``agents`` with the shared flags until stopped; prints the stats."""
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    runner = Runner(agent, args.url, list(agents), n_runners=args.runners, token=args.token, lease_ms=args.lease_ms,
                    runner_id=args.runner_id, poll_interval_s=args.poll_interval, max_rollouts=args.max_rollouts,
                    grace_s=args.grace, exit_when_idle_s=args.exit_when_idle)
    runner.install_signal_handlers()
    stats = runner.run()
    print(f"{label} {runner.runner_id}: claimed {stats.claimed}, finished {stats.finished}, crashed {stats.crashed}, "
          f"lost {stats.lost}, handed back {stats.handed_back}", file=sys.stderr)
    return 0
