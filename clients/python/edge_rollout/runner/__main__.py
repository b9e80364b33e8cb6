"""``python -m edge_rollout.runner module:agent --url … --agent NAME --runners 8``."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Optional, Sequence

from .agents import load_agent
from .cli import add_runner_arguments, check_runner_arguments, serve


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m edge_rollout.runner", description="Claim external rollouts and run a Python agent on them.")
    parser.add_argument("agent_spec", metavar="module:agent", help="the agent: a @rollout function, a LitAgent subclass or instance")
    parser.add_argument("--agent", dest="agents", action="append", metavar="NAME", help="runner agent served (rollouts of external:NAME); repeat for several; default external")
    add_runner_arguments(parser)
    args = parser.parse_args(argv)
    check_runner_arguments(parser, args)
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    sys.path.insert(0, os.getcwd())
    return serve(load_agent(args.agent_spec), args.agents or ["external"], args)


if __name__ == "__main__":
    sys.exit(main())
