"""``HarnessAgent``: a runner agent that runs a harness CLI (Claude Code, Codex, opencode) on one task per rollout.

Per rollout: the task directory named by the rollout's task → a fresh workspace → the CLI's launch
(``clis.launch_for``) pointed at the attempt's gateway URL → run with no network but the gateway,
closed stdin, a wall clock and an output cap (``netns.run_harness``) → the harness's own count of
model calls (``clis.logged_calls``) → the task's check in the workspace → the reward. The workspace
is removed before the rollout reports.

Bad input is a policy outcome: a CLI that exits non-zero or writes nothing gets the reward the
check gives; one that runs past its wall clock ends with ``termination_reason`` TIMEOUT (and the
check's reward). Only runner failures raise (a missing CLI binary, a task the rollout names that is
not there): the runner releases the attempt as crashed.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from ..runner.agents import LitAgent, RolloutInfo
from ..runner.emitters import emit_object
from .limits import DEFAULT_OUTPUT_CAP, Limits
from .netns import run_harness
from .tasks import HarnessTask, TaskError, resolve_task
from .workspace import Workspace, base_env, open_workspace, run_check

log = logging.getLogger("edge_rollout.harness")

#: The span the agent emits per rollout (kind ``object``): logged calls, exit code, isolation, check.
RUN_SPAN = "harness_run"
EXTERNAL_PREFIX = "external:"


def gateway_base(llm_base_url: str) -> str:
    """The attempt's LLM base URL without its trailing ``/v1`` (each CLI appends its own API path)."""
    url = llm_base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def task_id_of(task: Mapping[str, Any]) -> str:
    """The task directory a rollout names: ``extra_args.task_dir`` (dataset rows), else ``problem`` (single rollouts)."""
    extra = task.get("extra_args") or {}
    named = extra.get("task_dir") if isinstance(extra, Mapping) else None
    if isinstance(named, str) and named:
        return named
    problem = task.get("problem")
    if isinstance(problem, str) and problem.strip():
        return problem.strip()
    raise TaskError(Path("."), "the rollout's task names no task directory (extra_args.task_dir or problem)")


class HarnessAgent(LitAgent):
    """Runs the harness the rollout is for on the task it names; serves one or several harnesses.

    ``harnesses``: the runner agent names served (``claude-code`` serves ``external:claude-code``
    rollouts); the claim's agent picks among them. ``tasks_root``: the directory holding the task
    directories. ``wall_clock_s`` overrides each task's ``[agent] timeout_sec``. ``isolate``: None
    isolates where the machine allows, True requires it, False never. ``launch_for`` and
    ``logged_calls`` default to ``edge_rollout.harness.clis`` (tests pass fakes).

    Example::

        Runner(HarnessAgent(["claude-code", "codex"], "examples/harness-tasks"), url, ["claude-code", "codex"], n_runners=6).run()
    """

    def __init__(self, harnesses: Union[str, Sequence[str]], tasks_root: Union[str, Path], *,
                 wall_clock_s: Optional[float] = None, output_cap_bytes: int = DEFAULT_OUTPUT_CAP,
                 isolate: Optional[bool] = None, headers: Optional[Mapping[str, str]] = None, model: Optional[str] = None,
                 launch_for: Optional[Callable[..., Any]] = None, logged_calls: Optional[Callable[..., int]] = None):
        self.harnesses = (harnesses,) if isinstance(harnesses, str) else tuple(harnesses)
        if not self.harnesses:
            raise ValueError("harnesses must name at least one harness")
        if wall_clock_s is not None and not wall_clock_s > 0:
            raise ValueError("wall_clock_s must be > 0")
        self.tasks_root = Path(tasks_root).resolve()
        if not self.tasks_root.is_dir():
            raise ValueError(f"tasks_root {self.tasks_root} is not a directory")
        self.wall_clock_s = wall_clock_s
        self.output_cap_bytes = output_cap_bytes
        self.isolate = isolate
        self.headers = dict(headers or {})
        self.model = model
        if launch_for is None or logged_calls is None:
            from . import clis  # noqa: PLC0415 - the real CLIs only when no fakes are given
            launch_for = launch_for or clis.launch_for
            logged_calls = logged_calls or clis.logged_calls
        self._launch_for = launch_for
        self._logged_calls = logged_calls

    def harness_for(self, task: Mapping[str, Any], rollout: RolloutInfo) -> str:
        """The harness of this rollout: the claim's agent, else the task's ``agent_name``, else the only one served."""
        for name in (getattr(rollout, "agent", ""), str(task.get("agent_name") or "")):
            name = name[len(EXTERNAL_PREFIX):] if name.startswith(EXTERNAL_PREFIX) else name
            if name in self.harnesses:
                return name
        if len(self.harnesses) == 1:
            return self.harnesses[0]
        raise ValueError(f"rollout {rollout.rollout_id} is for agent {getattr(rollout, 'agent', '')!r}, "
                         f"not one of the harnesses served ({', '.join(self.harnesses)})")

    def rollout(self, task: dict[str, Any], resources: Mapping[str, Any], rollout: RolloutInfo) -> Any:
        """One harness rollout (see the module doc); returns the finish fields, or None when cancelled."""
        harness = self.harness_for(task, rollout)
        spec = resolve_task(self.tasks_root, task_id_of(task))
        llm = resources["llm"]
        limits = Limits(wall_clock_s=self.wall_clock_s or spec.agent_timeout_s, output_cap_bytes=self.output_cap_bytes)
        with open_workspace(spec) as ws:
            launch = self._launch(harness, spec, ws, llm)
            run = run_harness(launch.argv, env={**base_env(ws), **launch.env}, cwd=str(ws.workspace), limits=limits,
                              gateway_url=llm.base_url, run_dir=str(ws.run_dir), hide=[str(self.tasks_root)],
                              isolate=self.isolate, cancelled=rollout.cancelled)
            if run.result.cancelled:
                return None  # the lease is gone or the runner hands the attempt back: no outcome is reported
            logged = self._count_calls(harness, ws, run.result.text("stdout"))
            check = run_check(ws, spec)
        result = run.result
        _emit({"harness": harness, "task": spec.task_id, "logged_calls": logged, "exit_code": result.exit_code,
               "timed_out": result.timed_out, "wall_s": round(result.wall_s, 3), "isolation": run.isolation.mode,
               "isolation_reason": run.isolation.reason, "stdout_bytes": len(result.stdout), "stdout_dropped": result.stdout_dropped,
               "stderr_dropped": result.stderr_dropped, "stderr_tail": result.text("stderr")[-2000:],
               "check": {"reward": check.reward, "exit_code": check.exit_code, "timed_out": check.timed_out}})
        if result.timed_out:
            # The policy's doing (it ran too long), not the infrastructure's: the batch keeps it, scored.
            return {"reward": check.reward, "termination_reason": "TIMEOUT", "outcome": "policy",
                    "error": f"{harness} ran past its {limits.wall_clock_s:g} s wall clock"}
        return {"reward": check.reward}

    def _launch(self, harness: str, spec: HarnessTask, ws: Workspace, llm: Any) -> Any:
        kwargs: dict[str, Any] = {"instruction": spec.instruction, "base_url": gateway_base(llm.base_url), "api_key": llm.api_key,
                                  "headers": dict(self.headers), "workspace": str(ws.workspace), "home": str(ws.home)}
        if self.model is not None:
            kwargs["model"] = self.model
        launch = self._launch_for(harness, **kwargs)
        for relative, text in launch.files.items():
            target = (ws.home / relative).resolve()
            if ws.home.resolve() not in target.parents:
                raise ValueError(f"{harness}: launch file {relative!r} is not inside HOME")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        return launch

    def _count_calls(self, harness: str, ws: Workspace, stdout: str) -> Optional[int]:
        # A harness that crashed may leave a log its parser cannot read: the reward still stands.
        try:
            return int(self._logged_calls(harness, home=str(ws.home), workspace=str(ws.workspace), stdout=stdout))
        except Exception as error:  # noqa: BLE001 - see above
            log.warning("%s: its log of model calls could not be read: %r", harness, error)
            return None


def _emit(value: dict[str, Any]) -> None:
    # The agent also runs outside a runner (a local evaluation, tests), where no span buffer is bound.
    try:
        emit_object(value, name=RUN_SPAN)
    except RuntimeError:
        log.info("%s: %s", RUN_SPAN, value)
