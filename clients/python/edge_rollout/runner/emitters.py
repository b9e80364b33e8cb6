"""Emitters (Agent-lightning's ``emit_reward`` / ``emit_message`` / ``emit_object`` / ``emit_exception``).

Each worker thread runs one attempt at a time and binds that attempt's span buffer in a
``contextvars.ContextVar``, so concurrent attempts in one process never mix their spans. Spans are
tagged with the attempt number (the server keeps every attempt's spans; a finish takes the reward
of its own attempt only) and sent in order, in batches, through ``POST /v1/rollouts/:id/events``.
"""
from __future__ import annotations

import contextvars
import math
import threading
import time
import traceback
from typing import Any, Callable, Optional

#: Spans buffered before an emitter flushes on its own (the rest go at the end of the attempt).
FLUSH_EVERY = 32


class SpanBuffer:
    """The spans of one attempt, flushed in emission order by ``send`` (a list of span dicts)."""

    def __init__(self, attempt: int, send: Callable[[list[dict[str, Any]]], None]):
        self.attempt = attempt
        self._send = send
        self._pending: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.last_reward: Optional[float] = None

    def add(self, kind: str, name: str, value: Any, attributes: Optional[dict[str, Any]] = None) -> dict[str, Any]:
        now = time.time() * 1000
        span = {"kind": kind, "name": name, "value": value, "attributes": {**(attributes or {}), "attempt": self.attempt},
                "start_time": now, "end_time": now}
        with self._lock:
            self._pending.append(span)
            full = len(self._pending) >= FLUSH_EVERY
        if full:
            self.flush()
        return span

    def flush(self) -> None:
        # Under the lock for the whole send, so two flushes can never reorder spans.
        with self._lock:
            if not self._pending:
                return
            batch, self._pending = self._pending, []
            self._send(batch)


_current: contextvars.ContextVar[Optional[SpanBuffer]] = contextvars.ContextVar("edge_rollout_span_buffer", default=None)


def bind(buffer: Optional[SpanBuffer]) -> contextvars.Token:
    """Makes ``buffer`` the current attempt's (the runner does this around each attempt)."""
    return _current.set(buffer)


def unbind(token: contextvars.Token) -> None:
    _current.reset(token)


def _buffer(emitter: str) -> SpanBuffer:
    buffer = _current.get()
    if buffer is None:
        raise RuntimeError(f"{emitter}() was called outside a rollout run by edge_rollout.runner")
    return buffer


def emit_reward(reward: float | dict[str, float], primary_key: Optional[str] = None, name: str = "reward") -> dict[str, Any]:
    """Records a reward: one finite number, or named numbers with ``primary_key`` naming the one that trains.

    The last reward of the attempt is its reward unless the rollout function returns one.
    """
    values = reward.values() if isinstance(reward, dict) else [reward]
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"reward must be a finite number (or a dict of them), got {value!r}")
    if isinstance(reward, dict) and (primary_key is None or primary_key not in reward):
        raise ValueError("a dict reward needs primary_key naming one of its keys")
    buffer = _buffer("emit_reward")
    buffer.last_reward = float(reward[primary_key] if isinstance(reward, dict) else reward)  # type: ignore[index]
    attributes = {"primary_key": primary_key} if primary_key else {}
    return buffer.add("reward", name, reward, attributes)


def emit_message(message: str, name: str = "message", **attributes: Any) -> dict[str, Any]:
    """Records a free-text message (a log line worth keeping with the rollout)."""
    return _buffer("emit_message").add("message", name, str(message), attributes)


def emit_object(value: Any, name: str = "object", **attributes: Any) -> dict[str, Any]:
    """Records any JSON-serializable value (a tool result, a parsed answer, a metric dict)."""
    return _buffer("emit_object").add("object", name, value, attributes)


def emit_exception(error: BaseException, name: str = "exception", **attributes: Any) -> dict[str, Any]:
    """Records an exception with its type and traceback (the attempt goes on unless it re-raises)."""
    value = {"type": type(error).__name__, "message": str(error),
             "traceback": "".join(traceback.format_exception(type(error), error, error.__traceback__))[-4000:]}
    return _buffer("emit_exception").add("exception", name, value, attributes)
