"""The two authoring shapes a runner runs, as in Agent-lightning: ``@rollout`` functions and ``LitAgent`` classes.

An agent receives the task (the rollout's ``AgentTask`` as a dict: ``problem``, ``ground_truth``,
``extra_args`` …), its resources (``llm`` bound to the attempt plus the named resources it
declares) and a ``RolloutInfo``. It returns a float (the reward), or None (the last
``emit_reward`` is the reward, else none).
"""
from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import sys
import threading
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

from .llm import LLM


@dataclass
class RolloutInfo:
    """Agent-lightning's ``AttemptedRollout`` as an agent sees it."""

    rollout_id: str
    attempt: int
    attempt_id: str
    runner_id: str
    mode: str
    config: dict[str, Any]
    group: Optional[dict[str, Any]]
    #: Set when the attempt must stop: its lease was lost, or the runner is shutting down past its grace period.
    cancelled: threading.Event
    #: The runner agent name the rollout was claimed for (``calc`` for ``external:calc``); lets one agent object serve several names.
    agent: str = ""

    @property
    def is_training(self) -> bool:
        return self.mode == "train"


class LitAgent:
    """Base class of class-style agents (Agent-lightning's ``LitAgent``).

    Override ``training_rollout`` (and ``validation_rollout``, which defaults to it), or just
    ``rollout``; async versions (``async def``) are awaited. ``resources`` lists the named resources
    (``PUT /v1/resources/:name``) the runner fetches, latest version, at each claim.

    Example::

        class Solver(LitAgent):
            def training_rollout(self, task, resources, rollout):
                reply = resources["llm"].chat([{"role": "user", "content": task["problem"]}])
                return 1.0 if task["ground_truth"] in text_of(reply) else 0.0
    """

    resources: Sequence[str] = ()

    def rollout(self, task: dict[str, Any], resources: Mapping[str, Any], rollout: RolloutInfo) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must override training_rollout or rollout")

    def training_rollout(self, task: dict[str, Any], resources: Mapping[str, Any], rollout: RolloutInfo) -> Any:
        return self.rollout(task, resources, rollout)

    def validation_rollout(self, task: dict[str, Any], resources: Mapping[str, Any], rollout: RolloutInfo) -> Any:
        return self.training_rollout(task, resources, rollout)

    def run(self, task: dict[str, Any], resources: Mapping[str, Any], rollout: RolloutInfo) -> Any:
        """What the runner calls: the training or validation rollout by the rollout's mode."""
        method = self.training_rollout if rollout.is_training else self.validation_rollout
        result = method(task, resources, rollout)
        return asyncio.run(result) if inspect.isawaitable(result) else result


class FunctionAgent(LitAgent):
    """A ``@rollout`` function as an agent: its parameters say what it is given.

    ``task`` (first parameter, any name) always; ``llm`` the attempt's LLM; ``rollout`` the
    RolloutInfo; ``resources`` the whole mapping; any other parameter name is a named resource.
    """

    def __init__(self, fn: Callable[..., Any], resources: Sequence[str] = ()):
        self.fn = fn
        params = list(inspect.signature(fn).parameters)
        if not params:
            raise TypeError(f"@rollout function {fn.__name__} must take the task as its first parameter")
        self._wanted = params[1:]
        injected = {"llm", "rollout", "resources"}
        self.resources = tuple(dict.fromkeys([*resources, *(name for name in self._wanted if name not in injected)]))
        self.__name__ = getattr(fn, "__name__", "rollout")

    def rollout(self, task: dict[str, Any], resources: Mapping[str, Any], rollout: RolloutInfo) -> Any:
        available = {**resources, "rollout": rollout, "resources": resources}
        missing = [name for name in self._wanted if name not in available]
        if missing:
            raise KeyError(f"{self.__name__} asks for {', '.join(missing)}, which no resource provides (PUT /v1/resources/<name>)")
        return self.fn(task, **{name: available[name] for name in self._wanted})

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)


def rollout(fn: Optional[Callable[..., Any]] = None, *, resources: Sequence[str] = ()) -> Any:
    """Makes a function an agent (Agent-lightning's ``@rollout``); usable bare or as ``@rollout(resources=[...])``.

    Example::

        @rollout
        def solve(task, llm):
            reply = llm.chat([{"role": "user", "content": task["problem"]}])
            emit_reward(1.0 if task["ground_truth"] in text_of(reply) else 0.0)
    """
    if fn is None:
        return lambda inner: FunctionAgent(inner, resources)
    return FunctionAgent(fn, resources)


def as_agent(value: Any) -> LitAgent:
    """A LitAgent from what ``module:attr`` names: an instance, a LitAgent subclass, or a plain function."""
    if isinstance(value, LitAgent):
        return value
    if isinstance(value, type) and issubclass(value, LitAgent):
        return value()
    if callable(value):
        return FunctionAgent(value)
    raise TypeError(f"{value!r} is not an agent: expected a LitAgent, a LitAgent subclass or a @rollout function")


def _import(module_name: str) -> Any:
    """A dotted module, or a ``.py`` file by path (``examples/python-sandbox/agent.py``)."""
    if not module_name.endswith(".py"):
        return importlib.import_module(module_name)
    path = Path(module_name).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"no agent file {path}")
    spec = importlib.util.spec_from_file_location(f"edge_rollout_agent_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def load_agent(spec: str) -> LitAgent:
    """Imports ``module:attr`` or ``path/to/file.py:attr`` and returns it as a LitAgent."""
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"agent must be given as module:attr or file.py:attr, got {spec!r}")
    value: Any = _import(module_name)
    for part in attr.split("."):
        value = getattr(value, part)
    return as_agent(value)


def build_resources(llm: LLM, named: Mapping[str, Any]) -> dict[str, Any]:
    """The resources an attempt gets: the named ones fetched at claim, and ``llm``."""
    return {**named, "llm": llm}
