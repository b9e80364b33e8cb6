"""@module The entry of a harness sandbox: ONE rollout attempt's harness run, its outcome served to the owning Durable Object.

``python -m edge_rollout.harness.container_entry`` (the image's entrypoint) reads the rollout spec
(``HARNESS_*`` variables, ``container_spec.py``), runs ``HarnessAgent`` on it exactly as the local
runner does (fresh workspace, the CLI under its wall clock and output cap, namespaces where the
container allows them, the task's check), and serves the outcome on a small control server:

    GET  /outcome   202 {"state": "running"} until done, then 200 {"finish" | "release", "spans", ...}
    POST /cancel    stops the run (the lease was lost); the outcome then has neither finish nor release
    GET  /health    200 {"state": ...}

The container never calls the edge-rollout API itself: the Durable Object holds the lease, polls
``/outcome`` and reports it (deploy/harness-sandbox/harness-sandbox.ts), so the sandbox needs no
API token and its egress reaches only this attempt's gateway. ``--once`` prints the outcome as JSON
instead of serving it; ``--dry-run`` prints the resolved spec, isolation and CLI command, runs nothing.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

from ..runner import emitters
from ..http_json import send_json
from ..runner.agents import RolloutInfo
from ..runner.llm import LLM
from .agent import HarnessAgent, gateway_base
from .container_relay import LoopbackRelay, needs_relay, relayed_url
from .container_spec import ContainerSpec, add_spec_arguments, spec_from
from .container_task import task_root

log = logging.getLogger("edge_rollout.harness")
#: Seconds the outcome stays served after the run when nobody collects it; then the process exits.
DEFAULT_LINGER_S = 600.0


def run_rollout(spec: ContainerSpec, cancelled: threading.Event, *, launch_for: Optional[Callable[..., Any]] = None,
                logged_calls: Optional[Callable[..., int]] = None) -> dict[str, Any]:
    """Runs the harness on the spec's task and returns the outcome the Durable Object reports.

    ``finish`` holds the finish fields (``reward``, ``termination_reason``, ``error``) when the run
    ended as a policy outcome; ``release`` (``reason: crashed``) when the runner side failed (a
    missing CLI, a task that is not there); neither when ``cancelled`` was set. ``spans`` are what
    the agent emitted (its ``harness_run`` object), for ``POST /v1/rollouts/:id/events``.
    """
    spans: list[dict[str, Any]] = []
    buffer = emitters.SpanBuffer(spec.attempt, spans.extend)
    token = emitters.bind(buffer)
    finish: Optional[dict[str, Any]] = None
    release: Optional[dict[str, Any]] = None
    try:
        with _gateway_url(spec) as base_url, task_root(spec) as root:
            agent = HarnessAgent([spec.harness], root, wall_clock_s=spec.wall_clock_s, output_cap_bytes=spec.output_cap_bytes,
                                 isolate=spec.isolate, model=spec.model, launch_for=launch_for, logged_calls=logged_calls)
            llm = LLM(base_url=base_url, api_key=spec.api_key, model=spec.model or "policy")
            result = agent.run({"extra_args": {"task_dir": spec.task}}, {"llm": llm}, _info(spec, cancelled))
        if result is not None and not cancelled.is_set():
            finish = {key: value for key, value in dict(result).items() if value is not None}
    except Exception as error:  # noqa: BLE001 - a runner failure is reported (release), never raised
        log.exception("rollout %s attempt %s: the harness sandbox failed", spec.rollout_id, spec.attempt)
        emitters.emit_exception(error, name="attempt_crashed")
        release = {"reason": "crashed", "error": f"{type(error).__name__}: {error}"[:4000]}
    finally:
        buffer.flush()
        emitters.unbind(token)
    return {"rollout_id": spec.rollout_id, "attempt": spec.attempt, "runner_id": spec.runner_id,
            "finish": finish, "release": release, "cancelled": cancelled.is_set(), "spans": spans}


def _info(spec: ContainerSpec, cancelled: threading.Event) -> RolloutInfo:
    return RolloutInfo(rollout_id=spec.rollout_id, attempt=spec.attempt, attempt_id=f"{spec.rollout_id}/attempt/{spec.attempt}",
                       runner_id=spec.runner_id, mode=spec.mode, config={}, group=None, cancelled=cancelled,
                       agent=f"external:{spec.harness}")


@contextlib.contextmanager
def _gateway_url(spec: ContainerSpec) -> Iterator[str]:
    """The base URL the CLI gets: relayed onto loopback when namespaces may be used and the gateway is off loopback."""
    if spec.isolation == "off" or not needs_relay(spec.llm_base_url):
        yield spec.llm_base_url
        return
    with LoopbackRelay.for_url(spec.llm_base_url) as relay:
        # An unreachable gateway is not hidden behind the relay: the CLI then fails against the real URL.
        yield relayed_url(spec.llm_base_url, relay.port) if relay.reachable() else spec.llm_base_url


class _Run:
    """The one run this process serves: its state and, once done, its outcome."""

    def __init__(self) -> None:
        self.cancelled = threading.Event()
        self.done = threading.Event()
        self.collected = threading.Event()
        self.outcome: Optional[dict[str, Any]] = None

    @property
    def state(self) -> str:
        return "done" if self.done.is_set() else "cancelling" if self.cancelled.is_set() else "running"


def control_server(run: _Run, port: int, host: str = "0.0.0.0") -> ThreadingHTTPServer:
    """The control server of ``run`` (see the module doc), bound but not yet serving."""
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.path == "/outcome" and run.done.is_set():
                self._reply(200, run.outcome)
                run.collected.set()
            elif self.path in ("/outcome", "/health"):
                self._reply(202 if self.path == "/outcome" else 200, {"state": run.state})
            else:
                self._reply(404, {"error": f"no route GET {self.path}"})

        def do_POST(self) -> None:  # noqa: N802
            if self.path != "/cancel":
                self._reply(404, {"error": f"no route POST {self.path}"})
                return
            run.cancelled.set()
            self._reply(202, {"state": run.state})

        def _reply(self, status: int, body: Any) -> None:
            send_json(self, status, body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's signature
            log.debug("control: " + format, *args)

    return ThreadingHTTPServer((host, port), Handler)


def serve(spec: ContainerSpec, linger_s: float = DEFAULT_LINGER_S, **fakes: Any) -> int:
    """Runs the rollout while serving its state; after it, serves the outcome until collected or ``linger_s`` passes."""
    run = _Run()
    server = control_server(run, spec.control_port)
    threading.Thread(target=server.serve_forever, name="harness-control", daemon=True).start()
    if threading.current_thread() is threading.main_thread():  # signal handlers can only be set there (tests serve on a thread)
        # SIGTERM (the platform stopping the container, a rollout of a new image) stops the run like a lost lease.
        signal.signal(signal.SIGTERM, lambda _signum, _frame: run.cancelled.set())
    try:
        run.outcome = run_rollout(spec, run.cancelled, **fakes)
        run.done.set()
        run.collected.wait(timeout=linger_s)
        time.sleep(0.2)  # the collecting response is still being written
    finally:
        server.shutdown()
        server.server_close()
    return 0


def dry_run(spec: ContainerSpec) -> dict[str, Any]:
    """What would run, resolved without running it: the spec, the isolation available, the CLI command."""
    from . import clis  # noqa: PLC0415 - the CLI registry only where it is used
    from .netns import namespaces_available  # noqa: PLC0415

    isolation = namespaces_available()
    plan: dict[str, Any] = {"spec": spec.redacted(), "isolation": {"mode": isolation.mode, "reason": isolation.reason},
                            "loopback_relay": spec.isolation != "off" and needs_relay(spec.llm_base_url)}
    if spec.task_archive_url:
        instruction = "<instruction.md of the fetched archive>"
        plan["task"] = {"archive": spec.task_archive_url}
    else:
        from .tasks import resolve_task  # noqa: PLC0415
        task = resolve_task(spec.tasks_root, spec.task)
        instruction = task.instruction
        plan["task"] = {"dir": str(task.path), "agent_timeout_s": task.agent_timeout_s}
    launch = clis.launch_for(spec.harness, instruction=instruction, base_url=gateway_base(spec.llm_base_url), api_key="<redacted>",
                             headers={}, workspace="<workspace>", home="<home>", **({"model": spec.model} if spec.model else {}))
    plan["command"] = {"argv": launch.argv, "env": sorted(launch.env), "files": sorted(launch.files),
                       "installed": clis.installed(spec.harness), "binary": Path(launch.argv[0]).as_posix()}
    return plan


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The image's entrypoint: serve (default), ``--once`` or ``--dry-run``."""
    parser = argparse.ArgumentParser(prog="python -m edge_rollout.harness.container_entry",
                                     description="Run ONE rollout attempt's harness in this sandbox and serve its outcome.")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="print the resolved spec, isolation and CLI command; run nothing")
    mode.add_argument("--once", action="store_true", help="run and print the outcome JSON to stdout instead of serving it")
    parser.add_argument("--linger", type=float, default=DEFAULT_LINGER_S, metavar="SECONDS",
                        help=f"serve the outcome this long after the run if nobody collects it (default {DEFAULT_LINGER_S:g})")
    parser.add_argument("-v", "--verbose", action="store_true")
    add_spec_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(asctime)s %(name)s %(message)s",
                        stream=sys.stderr)
    try:
        spec = spec_from(args)
    except ValueError as error:
        parser.error(str(error))
    if args.dry_run:
        print(json.dumps(dry_run(spec), indent=2))
        return 0
    if args.once:
        print(json.dumps(run_rollout(spec, threading.Event())))
        return 0
    return serve(spec, linger_s=args.linger)


if __name__ == "__main__":
    sys.exit(main())
