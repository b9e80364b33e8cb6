"""``Runner``: ``n_runners`` workers in one process claim rollouts, run the agent, keep leases alive, shut down cleanly."""
from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from ..client import Client
from ..errors import EdgeRolloutError
from .agents import LitAgent
from .attempt import ActiveAttempt, run_attempt

log = logging.getLogger("edge_rollout.runner")


@dataclass
class RunnerStats:
    """What a runner process did."""

    claimed: int = 0
    finished: int = 0
    crashed: int = 0
    lost: int = 0
    handed_back: int = 0


class Runner:
    """Claims rollouts of ``agents`` from the deployment at ``url`` and runs ``agent`` on them.

    ``n_runners`` worker threads each run one attempt at a time (agent code that waits on the model or
    a subprocess releases the GIL); one heartbeat thread renews every lease of the process every
    ``lease_ms / 3`` and tells a worker whose lease was lost to stop. ``stop()`` (or SIGINT/SIGTERM
    after ``install_signal_handlers()``) stops claiming, lets running attempts finish for up to
    ``grace_s`` seconds, then hands the rest back (offered again without using up an attempt); a
    second signal hands back at once. ``max_rollouts`` and ``exit_when_idle_s`` end the run early.

    Example::

        Runner(solve, "http://127.0.0.1:8787", agents=["calc"], n_runners=8).run()
    """

    def __init__(self, agent: LitAgent, url: str, agents: Sequence[str], n_runners: int = 1, token: Optional[str] = None,
                 lease_ms: int = 30_000, runner_id: Optional[str] = None, poll_interval_s: float = 1.0,
                 max_rollouts: Optional[int] = None, grace_s: float = 30.0, exit_when_idle_s: Optional[float] = None):
        if n_runners < 1:
            raise ValueError("n_runners must be >= 1")
        if not agents:
            raise ValueError("agents must name at least one runner agent")
        self.agent = agent
        self.client = Client(url, token=token, timeout=max(30.0, lease_ms / 1000))
        self.agents = list(agents)
        self.n_runners = n_runners
        self.lease_ms = lease_ms
        self.runner_id = runner_id or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.poll_interval_s = poll_interval_s
        self.max_rollouts = max_rollouts
        self.grace_s = grace_s
        self.exit_when_idle_s = exit_when_idle_s
        self.stats = RunnerStats()
        self._active: dict[tuple[str, int], ActiveAttempt] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._hand_back_now = threading.Event()
        self._last_work = time.monotonic()

    # --- lifecycle -------------------------------------------------------------------------------

    def run(self) -> RunnerStats:
        """Runs until stopped (or the rollout limit or idle limit is reached); returns the stats."""
        log.info("runner %s: %d workers for %s at %s", self.runner_id, self.n_runners, ", ".join(self.agents), self.client.url)
        workers = [threading.Thread(target=self._work, name=f"runner-worker-{i}", daemon=True) for i in range(self.n_runners)]
        beat = threading.Thread(target=self._heartbeat_loop, name="runner-heartbeat", daemon=True)
        beat.start()
        for worker in workers:
            worker.start()
        while any(worker.is_alive() for worker in workers):
            if self._stopping.is_set():
                self._drain(workers)
                break
            for worker in workers:
                worker.join(timeout=0.2)
        self._stopping.set()
        log.info("runner %s stopped: %s", self.runner_id, self.stats)
        return self.stats

    def stop(self, hand_back: bool = False) -> None:
        """Stops claiming; with ``hand_back`` (or on a second call) hands running attempts back at once."""
        if self._stopping.is_set() or hand_back:
            self._hand_back_now.set()
        self._stopping.set()

    def install_signal_handlers(self) -> None:
        """SIGINT/SIGTERM → ``stop()``; a second one → hand back at once. Call from the main thread."""
        def handler(signum: int, _frame: Any) -> None:
            log.info("runner %s: %s, %s", self.runner_id, signal.Signals(signum).name,
                     "handing back now" if self._stopping.is_set() else f"finishing running attempts (up to {self.grace_s} s)")
            self.stop()
        signal.signal(signal.SIGINT, handler)
        signal.signal(signal.SIGTERM, handler)

    def _drain(self, workers: list[threading.Thread]) -> None:
        deadline = time.monotonic() + self.grace_s
        while any(worker.is_alive() for worker in workers) and time.monotonic() < deadline and not self._hand_back_now.is_set():
            time.sleep(0.1)
        with self._lock:
            remaining = list(self._active.values())
        for active in remaining:
            self._hand_back(active)

    # --- workers ---------------------------------------------------------------------------------

    def _work(self) -> None:
        idle_delay = self.poll_interval_s / 4
        while not self._stopping.is_set():
            if self.max_rollouts is not None and self._count_claim() is None:
                self._stopping.set()
                return
            claims = self._claim()
            if not claims:
                if self.max_rollouts is not None:
                    self._uncount_claim()
                if self.exit_when_idle_s is not None and time.monotonic() - self._last_work > self.exit_when_idle_s and not self._active:
                    self._stopping.set()
                    return
                # Idle polls back off to poll_interval_s: an empty claim visits every shard of the queue.
                self._stopping.wait(idle_delay)
                idle_delay = min(self.poll_interval_s, idle_delay * 2)
                continue
            idle_delay = self.poll_interval_s / 4
            self._run(ActiveAttempt(claim=claims[0], runner_id=self.runner_id))

    def _count_claim(self) -> Optional[int]:
        with self._lock:
            if self.stats.claimed >= (self.max_rollouts or 0):
                return None
            self.stats.claimed += 1
            return self.stats.claimed

    def _uncount_claim(self) -> None:
        with self._lock:
            self.stats.claimed -= 1

    def _claim(self) -> list[dict[str, Any]]:
        body = {"runner_id": self.runner_id, "agents": self.agents, "max": 1, "lease_ms": self.lease_ms,
                "resources": list(getattr(self.agent, "resources", ()))}
        try:
            claimed = self.client.request("POST", "/v1/runners/claim", body)["claimed"]
        except EdgeRolloutError as error:
            log.warning("claim failed: %s", error)
            return []
        if claimed and self.max_rollouts is None:
            with self._lock:
                self.stats.claimed += len(claimed)
        return claimed

    def _run(self, active: ActiveAttempt) -> None:
        with self._lock:
            self._active[active.key] = active
        self._last_work = time.monotonic()
        log.info("rollout %s attempt %s claimed", *active.key)
        try:
            ended = run_attempt(self.client, self.agent, active, {})
        finally:
            with self._lock:
                self._active.pop(active.key, None)
            self._last_work = time.monotonic()
        with self._lock:
            if ended == "finished":
                self.stats.finished += 1
            elif ended == "crashed":
                self.stats.crashed += 1

    # --- leases ----------------------------------------------------------------------------------

    def _heartbeat_loop(self) -> None:
        interval = self.lease_ms / 3000
        while True:
            if self._stopping.is_set():
                # Attempts still finishing within the grace period keep their leases.
                if not self._active:
                    return
                time.sleep(interval)
            else:
                self._stopping.wait(interval)
            with self._lock:
                held = [active for active in self._active.values() if not active.given_up.is_set()]
            if not held:
                continue
            body = {"runner_id": self.runner_id, "lease_ms": self.lease_ms,
                    "leases": [{"rollout_id": a.claim["rollout_id"], "attempt": a.claim["attempt"]} for a in held]}
            try:
                outcomes = self.client.request("POST", "/v1/runners/heartbeat", body)["leases"]
            except EdgeRolloutError as error:
                log.warning("heartbeat failed (leases live until they expire): %s", error)
                continue
            for outcome in outcomes:
                if outcome["ok"]:
                    continue
                active = self._active.get((outcome["rollout_id"], outcome["attempt"]))
                if active is not None and not active.given_up.is_set():
                    log.warning("rollout %s attempt %s: lease %s; stopping it", outcome["rollout_id"], outcome["attempt"], outcome["reason"])
                    active.given_up.set()
                    active.cancelled.set()
                    with self._lock:
                        self.stats.lost += 1

    def _hand_back(self, active: ActiveAttempt) -> None:
        if active.given_up.is_set():
            return
        active.given_up.set()
        active.cancelled.set()
        try:
            self.client.request("POST", f"{active.path}/release", {"runner_id": self.runner_id, "reason": "shutdown"})
            with self._lock:
                self.stats.handed_back += 1
            log.info("rollout %s attempt %s handed back", *active.key)
        except EdgeRolloutError as error:
            log.warning("hand-back of rollout %s refused: %s", active.key[0], error)
