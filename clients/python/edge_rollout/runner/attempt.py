"""Running one claimed attempt: resources in, agent code, spans out, then finish or release."""
from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from ..client import Client
from ..errors import EdgeRolloutError
from . import emitters
from .agents import LitAgent, RolloutInfo, build_resources
from .llm import LLM

log = logging.getLogger("edge_rollout.runner")


@dataclass
class ActiveAttempt:
    """A claimed attempt while it runs: what heartbeats renew and shutdown hands back."""

    claim: dict[str, Any]
    runner_id: str
    cancelled: threading.Event = field(default_factory=threading.Event)
    #: Set once the attempt was handed back or found lost: its outcome must not be reported.
    given_up: threading.Event = field(default_factory=threading.Event)

    @property
    def key(self) -> tuple[str, int]:
        return (self.claim["rollout_id"], self.claim["attempt"])

    @property
    def path(self) -> str:
        return f"/v1/rollouts/{self.claim['rollout_id']}/attempts/{self.claim['attempt']}"


def _outcome(result: Any) -> dict[str, Any]:
    """The finish body for what the agent returned: a number (reward), None, or a dict of finish fields."""
    if result is None:
        return {}
    if isinstance(result, bool):
        raise TypeError("a rollout returned a bool; return a float reward, None, or a dict")
    if isinstance(result, (int, float)):
        if not math.isfinite(result):
            raise ValueError(f"a rollout returned a reward that is not finite: {result!r}")
        return {"reward": float(result)}
    if isinstance(result, Mapping):
        unknown = set(result) - {"reward", "messages", "termination_reason", "error", "outcome"}
        if unknown:
            raise ValueError(f"a rollout returned unknown finish fields: {', '.join(sorted(unknown))}")
        return {key: value for key, value in result.items() if value is not None}
    raise TypeError(f"a rollout returned {type(result).__name__}; return a float reward, None, or a dict")


def run_attempt(client: Client, agent: LitAgent, active: ActiveAttempt, named_resources: Mapping[str, Any]) -> str:
    """Runs the agent on one attempt and reports how it ended: ``finished``, ``crashed`` or ``given_up``."""
    claim = active.claim
    rollout_id = claim["rollout_id"]
    llm = LLM(base_url=claim["llm"]["base_url"], api_key=claim["llm"]["api_key"], model=claim["llm"]["model"])
    info = RolloutInfo(rollout_id=rollout_id, attempt=claim["attempt"], attempt_id=claim["attempt_id"], runner_id=active.runner_id,
                       mode=claim["mode"], config=claim["config"], group=claim.get("group"), cancelled=active.cancelled,
                       agent=claim.get("agent", ""))
    buffer = emitters.SpanBuffer(claim["attempt"], lambda spans: _send_spans(client, rollout_id, spans, active))
    token = emitters.bind(buffer)
    error: Optional[BaseException] = None
    outcome: dict[str, Any] = {}
    try:
        outcome = _outcome(agent.run(claim["task"], build_resources(llm, {**named_resources, **claim.get("resources", {})}), info))
    except Exception as caught:  # noqa: BLE001 - agent code may raise anything; it is reported, not raised
        error = caught
        emitters.emit_exception(caught, name="attempt_crashed")
    finally:
        try:
            buffer.flush()
        finally:
            emitters.unbind(token)
    if active.given_up.is_set():
        return "given_up"
    if error is not None:
        log.warning("rollout %s attempt %s crashed: %r", rollout_id, claim["attempt"], error)
        _end(client, active, "release", {"runner_id": active.runner_id, "reason": "crashed", "error": f"{type(error).__name__}: {error}"[:4000]})
        return "crashed"
    _end(client, active, "finish", {"runner_id": active.runner_id, **outcome})
    return "finished"


def _send_spans(client: Client, rollout_id: str, spans: list[dict[str, Any]], active: ActiveAttempt) -> None:
    if active.given_up.is_set():
        return
    try:
        client.request("POST", f"/v1/rollouts/{rollout_id}/events", {"events": spans})
    except EdgeRolloutError as error:
        log.warning("spans of rollout %s not recorded: %s", rollout_id, error)


def _end(client: Client, active: ActiveAttempt, what: str, body: dict[str, Any]) -> None:
    try:
        client.request("POST", f"{active.path}/{what}", body)
    except EdgeRolloutError as error:
        # 409: the lease was lost meanwhile (another attempt runs, or the rollout ended); nothing to undo.
        log.warning("%s of rollout %s attempt %s refused: %s", what, active.claim["rollout_id"], active.claim["attempt"], error)
