"""What one sandboxed harness rollout runs: the spec a container's entry reads from its environment (or flags).

The Durable Object that owns a rollout's container (``deploy/harness-sandbox/harness-sandbox.ts``)
starts it with the ``HARNESS_*`` variables below; each has a flag of the same meaning, so
``python -m edge_rollout.harness.container_entry --help`` documents them. Nothing secret has to be
passed: in production the container's egress intercept adds the rollout key to gateway calls, so
``HARNESS_LLM_API_KEY`` may be a placeholder (see docs/harness-sandbox.md, "Egress").
"""
from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass, replace
from typing import Mapping, Optional, Sequence

from .limits import DEFAULT_OUTPUT_CAP
from .tasks import TASK_ID

#: Where the image bakes the task directories (deploy/harness-sandbox/Dockerfile).
DEFAULT_TASKS_ROOT = "/opt/edge-rollout/tasks"
#: The port of the control server the owning Durable Object polls (``ctx.container.getTcpPort``).
DEFAULT_CONTROL_PORT = 8080
#: Sent as the CLI's API key when none is given: the egress intercept replaces it with the real one.
PLACEHOLDER_KEY = "injected-by-egress"
ISOLATION_MODES = ("auto", "require", "off")
# The server's RolloutId (src/schemas/rollout-id.ts).
_ROLLOUT_ID = re.compile(r"^[A-Za-z0-9._:-]{1,200}$")
_BASE_URL = re.compile(r"^https?://[^/\s]+/\S*$")


@dataclass(frozen=True)
class ContainerSpec:
    """One rollout attempt's harness run inside a sandbox (fields named after their ``HARNESS_*`` variables).

    ``llm_base_url`` is the attempt's gateway base as a claim gives it
    (``…/v1/rollouts/<id>/attempts/<n>/llm/v1``); ``task`` names a directory under ``tasks_root``,
    or the directory an archive at ``task_archive_url`` unpacks to. ``isolation``: ``auto`` uses
    namespaces where the container allows them, ``require`` fails the attempt without them, ``off``
    never uses them.
    """

    rollout_id: str
    attempt: int
    harness: str
    llm_base_url: str
    task: str
    api_key: str = PLACEHOLDER_KEY
    model: Optional[str] = None
    mode: str = "train"
    runner_id: str = "harness-sandbox"
    task_archive_url: Optional[str] = None
    tasks_root: str = DEFAULT_TASKS_ROOT
    wall_clock_s: Optional[float] = None
    output_cap_bytes: int = DEFAULT_OUTPUT_CAP
    isolation: str = "auto"
    control_port: int = DEFAULT_CONTROL_PORT

    def __post_init__(self) -> None:
        if not _ROLLOUT_ID.match(self.rollout_id) or self.rollout_id in (".", ".."):
            raise ValueError(f"rollout_id must be 1-200 characters of [A-Za-z0-9._:-], got {self.rollout_id!r}")
        if self.attempt < 1:
            raise ValueError("attempt must be >= 1")
        if not self.harness or "/" in self.harness:
            raise ValueError(f"harness must be a harness name without '/', got {self.harness!r}")
        if not _BASE_URL.match(self.llm_base_url):
            raise ValueError(f"llm_base_url must be an http(s) URL with a path, got {self.llm_base_url!r}")
        if not TASK_ID.match(self.task):
            raise ValueError(f"task must be a task directory name ([A-Za-z0-9._-], no '/'), got {self.task!r}")
        if self.mode not in ("train", "val"):
            raise ValueError(f"mode must be train or val, got {self.mode!r}")
        if self.wall_clock_s is not None and not self.wall_clock_s > 0:
            raise ValueError("wall_clock_s must be > 0")
        if self.output_cap_bytes < 0:
            raise ValueError("output_cap_bytes must be >= 0")
        if self.isolation not in ISOLATION_MODES:
            raise ValueError(f"isolation must be one of {', '.join(ISOLATION_MODES)}, got {self.isolation!r}")
        if not 0 <= self.control_port <= 65535:
            raise ValueError("control_port must be 0..65535")

    @property
    def isolate(self) -> Optional[bool]:
        """``HarnessAgent``'s ``isolate``: None (auto), True (require) or False (off)."""
        return {"auto": None, "require": True, "off": False}[self.isolation]

    def redacted(self) -> dict[str, object]:
        """The spec as a dict with the API key hidden (for logs and ``--dry-run``)."""
        shown = replace(self, api_key="<placeholder>" if self.api_key == PLACEHOLDER_KEY else "<redacted>")
        return dict(shown.__dict__)


#: field -> (environment variable, flag help). The flag is ``--`` + the field with ``-`` for ``_``.
FIELDS = {
    "rollout_id": ("HARNESS_ROLLOUT_ID", "the rollout id (required)"),
    "attempt": ("HARNESS_ATTEMPT", "the attempt number, >= 1 (required)"),
    "harness": ("HARNESS_NAME", "the harness CLI: claude-code, codex, opencode, or a registered one (required)"),
    "llm_base_url": ("HARNESS_LLM_BASE_URL", "the attempt's gateway base, …/v1/rollouts/ID/attempts/N/llm/v1 (required)"),
    "task": ("HARNESS_TASK", "the task directory name (required)"),
    "api_key": ("HARNESS_LLM_API_KEY", "the rollout key (default: a placeholder the egress intercept replaces)"),
    "model": ("HARNESS_MODEL", "model name the CLI asks for (default: the CLI module's own, 'policy')"),
    "mode": ("HARNESS_MODE", "train or val (default train)"),
    "runner_id": ("HARNESS_RUNNER_ID", "the runner id holding the lease, for the record (default harness-sandbox)"),
    "task_archive_url": ("HARNESS_TASK_ARCHIVE_URL", "a .tar.gz of the task directory to fetch instead of the baked one"),
    "tasks_root": ("HARNESS_TASKS_ROOT", f"directory of baked task directories (default {DEFAULT_TASKS_ROOT})"),
    "wall_clock_s": ("HARNESS_WALL_CLOCK_S", "limit of the harness run in seconds (default the task's [agent] timeout_sec)"),
    "output_cap_bytes": ("HARNESS_OUTPUT_CAP", f"bytes kept of the CLI's stdout and of its stderr (default {DEFAULT_OUTPUT_CAP})"),
    "isolation": ("HARNESS_ISOLATION", "auto, require or off: namespaces inside the container (default auto)"),
    "control_port": ("HARNESS_CONTROL_PORT", f"port of the control server (default {DEFAULT_CONTROL_PORT})"),
}
_TYPES = {"attempt": int, "wall_clock_s": float, "output_cap_bytes": int, "control_port": int}
_REQUIRED = ("rollout_id", "attempt", "harness", "llm_base_url", "task")


def add_spec_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds one flag per spec field (``--rollout-id`` …), each defaulting to its ``HARNESS_*`` variable."""
    group = parser.add_argument_group("rollout spec (each flag defaults to its environment variable)")
    for name, (variable, text) in FIELDS.items():
        group.add_argument(f"--{name.replace('_', '-')}", dest=name, metavar=variable, help=f"{text}; ${variable}")


def spec_from(args: argparse.Namespace, environ: Mapping[str, str] = os.environ) -> ContainerSpec:
    """The spec from parsed flags, falling back to the environment; raises ``ValueError`` naming the variable."""
    values: dict[str, object] = {}
    for name, (variable, _text) in FIELDS.items():
        raw = getattr(args, name, None)
        raw = raw if raw not in (None, "") else environ.get(variable) or None
        if raw is None:
            if name in _REQUIRED:
                raise ValueError(f"{variable} (or --{name.replace('_', '-')}) is required")
            continue
        try:
            values[name] = _TYPES.get(name, str)(raw)
        except ValueError:
            raise ValueError(f"{variable} must be a {_TYPES[name].__name__}, got {raw!r}") from None
    return ContainerSpec(**values)  # type: ignore[arg-type]


def parse_spec(argv: Sequence[str], environ: Mapping[str, str] = os.environ) -> ContainerSpec:
    """``spec_from`` over a bare parser (tests, and callers without other flags)."""
    parser = argparse.ArgumentParser(add_help=False)
    add_spec_arguments(parser)
    return spec_from(parser.parse_args(list(argv)), environ)
