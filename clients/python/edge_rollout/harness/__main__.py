"""``python -m edge_rollout.harness --url … --tasks DIR --agent claude-code --agent codex --runners 6``."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Optional, Sequence

from ..runner.cli import add_runner_arguments, check_runner_arguments, serve
from .agent import HarnessAgent
from .limits import DEFAULT_OUTPUT_CAP


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The command line (flags shared with ``python -m edge_rollout.runner`` keep its names and defaults)."""
    parser = argparse.ArgumentParser(prog="python -m edge_rollout.harness",
                                     description="Claim external:<harness> rollouts and run the harness CLI on each task.")
    parser.add_argument("--tasks", required=True, metavar="DIR", help="directory of task directories (Harbor layout)")
    parser.add_argument("--agent", dest="agents", action="append", metavar="HARNESS",
                        help="harness served (rollouts of external:HARNESS); repeat for several; default all known harnesses")
    parser.add_argument("--wall-clock", type=float, default=None, metavar="SECONDS", help="limit per harness run (default each task's [agent] timeout_sec)")
    parser.add_argument("--output-cap", type=int, default=DEFAULT_OUTPUT_CAP, metavar="BYTES", help=f"bytes of stdout and of stderr kept per run (default {DEFAULT_OUTPUT_CAP})")
    isolation = parser.add_mutually_exclusive_group()
    isolation.add_argument("--require-isolation", action="store_const", const=True, dest="isolate", help="fail rollouts where namespaces are unavailable")
    isolation.add_argument("--no-isolation", action="store_const", const=False, dest="isolate", help="never use namespaces (the CLI gets the host's network)")
    add_runner_arguments(parser, runners_default=4)
    args = parser.parse_args(argv)
    check_runner_arguments(parser, args)
    if not os.path.isdir(args.tasks):
        parser.error(f"--tasks {args.tasks} is not a directory")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Serves the harnesses until stopped; prints the runner's stats."""
    args = parse_args(argv)
    from .clis import HARNESSES  # noqa: PLC0415 - imported late so --help works without it
    agents = args.agents or list(HARNESSES)
    unknown = [name for name in agents if name not in HARNESSES]
    if unknown:
        print(f"unknown harness {', '.join(unknown)}; known: {', '.join(HARNESSES)}", file=sys.stderr)
        return 2
    agent = HarnessAgent(agents, args.tasks, wall_clock_s=args.wall_clock, output_cap_bytes=args.output_cap, isolate=args.isolate)
    return serve(agent, agents, args, label="harness runner")


if __name__ == "__main__":
    sys.exit(main())
