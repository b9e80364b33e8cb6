"""Harness tasks in Harbor's task layout, and datasets that list them.

A task is a directory (Harbor's ``TaskPaths``; https://harborframework.com/docs/tasks)::

    <task-id>/
      instruction.md            what the harness is told (required, not empty)
      task.toml                 metadata and timeouts: [metadata] difficulty, [agent] timeout_sec,
                                [verifier] timeout_sec (required)
      environment/              the starting state (required). Harbor builds its Dockerfile; here,
        Dockerfile              without Docker, ``environment/workspace/`` holds the starting files,
        workspace/              copied into each rollout's fresh workspace (the image's /app)
      solution/solve.sh         the oracle (optional; never shown to the harness)
      tests/test.sh             the check, copied in only after the harness finished (required)

A dataset is a directory of such tasks, or a ``dataset.jsonl`` of batch rows (``POST /v1/batches``)
whose ``task_dir`` column names the task directory.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

try:  # Python >= 3.11
    import tomllib as _toml
except ModuleNotFoundError:  # pragma: no cover - Python 3.9/3.10 need `pip install tomli`
    try:
        import tomli as _toml  # type: ignore[no-redef]
    except ModuleNotFoundError:
        _toml = None  # type: ignore[assignment]

#: Timeouts when task.toml does not set them (Harbor's own defaults are larger; these tasks are small).
DEFAULT_AGENT_TIMEOUT_S = 600.0
DEFAULT_VERIFIER_TIMEOUT_S = 120.0

#: Task ids are directory names a dataset row can carry: no separators, no `..`.
TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class TaskError(ValueError):
    """A task directory or dataset that does not follow the layout; the message names the file and field."""

    def __init__(self, path: Union[str, Path], message: str):
        super().__init__(f"{path}: {message}")
        self.path = Path(path)


@dataclass(frozen=True)
class HarnessTask:
    """One loaded, validated task directory."""

    task_id: str
    path: Path
    instruction: str
    agent_timeout_s: float = DEFAULT_AGENT_TIMEOUT_S
    verifier_timeout_s: float = DEFAULT_VERIFIER_TIMEOUT_S
    difficulty: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def workspace_dir(self) -> Path:
        """The starting files (may be absent: an empty workspace)."""
        return self.path / "environment" / "workspace"

    @property
    def tests_dir(self) -> Path:
        """tests/ (the check); copied into a workspace only after the harness."""
        return self.path / "tests"

    @property
    def solution_dir(self) -> Path:
        """solution/ (the oracle); never copied into a workspace."""
        return self.path / "solution"


def _timeout(config: dict[str, Any], section: str, default: float, path: Path) -> float:
    table = config.get(section, {})
    if not isinstance(table, dict):
        raise TaskError(path, f"[{section}] must be a table")
    value = table.get("timeout_sec", default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise TaskError(path, f"{section}.timeout_sec must be a number > 0, got {value!r}")
    return float(value)


def _read_toml(path: Path) -> dict[str, Any]:
    if _toml is None:  # pragma: no cover
        raise TaskError(path, "reading task.toml needs Python >= 3.11 or `pip install tomli`")
    try:
        return _toml.loads(path.read_text())
    except _toml.TOMLDecodeError as error:
        raise TaskError(path, f"not valid TOML: {error}") from None


def load_task(path: Union[str, Path]) -> HarnessTask:
    """Loads and validates the task directory at ``path``; raises ``TaskError`` naming the first problem.

    Example::

        task = load_task("examples/harness-tasks/create-answer-file")
        task.instruction, task.agent_timeout_s
    """
    root = Path(path).resolve()
    if not root.is_dir():
        raise TaskError(root, "no task directory here")
    if not TASK_ID.match(root.name):
        raise TaskError(root, "the directory name (task id) must be 1-100 characters of A-Z a-z 0-9 . _ - ")
    instruction_path = root / "instruction.md"
    if not instruction_path.is_file():
        raise TaskError(instruction_path, "missing: a task needs instruction.md (what the harness is told)")
    instruction = instruction_path.read_text().strip()
    if not instruction:
        raise TaskError(instruction_path, "is empty")
    config_path = root / "task.toml"
    if not config_path.is_file():
        raise TaskError(config_path, "missing: a task needs task.toml (metadata and timeouts)")
    config = _read_toml(config_path)
    if not (root / "environment").is_dir():
        raise TaskError(root / "environment", "missing: a task needs environment/ (its starting state)")
    workspace = root / "environment" / "workspace"
    if workspace.exists() and not workspace.is_dir():
        raise TaskError(workspace, "must be a directory of starting files")
    if not (root / "tests" / "test.sh").is_file():
        raise TaskError(root / "tests" / "test.sh", "missing: a task needs tests/test.sh (its check)")
    metadata = config.get("metadata", {})
    if not isinstance(metadata, dict):
        raise TaskError(config_path, "[metadata] must be a table")
    return HarnessTask(task_id=root.name, path=root, instruction=instruction,
                       agent_timeout_s=_timeout(config, "agent", DEFAULT_AGENT_TIMEOUT_S, config_path),
                       verifier_timeout_s=_timeout(config, "verifier", DEFAULT_VERIFIER_TIMEOUT_S, config_path),
                       difficulty=str(metadata.get("difficulty", "")), metadata=metadata)


def resolve_task(tasks_root: Union[str, Path], task_id: str) -> HarnessTask:
    """The task named ``task_id`` under ``tasks_root``; the id can never reach outside it."""
    if not isinstance(task_id, str) or not TASK_ID.match(task_id) or task_id in (".", ".."):
        raise TaskError(Path(tasks_root), f"task id {task_id!r} is not a task directory name (A-Z a-z 0-9 . _ -)")
    return load_task(Path(tasks_root) / task_id)


def list_dataset(source: Union[str, Path]) -> list[str]:
    """The task ids of a dataset: a ``.jsonl`` of batch rows (their ``task_dir``), or a directory of tasks (sorted).

    A directory that holds a ``dataset.jsonl`` lists what that file lists.
    """
    path = Path(source)
    if path.is_dir() and (path / "dataset.jsonl").is_file():
        path = path / "dataset.jsonl"
    if path.is_dir():
        return sorted(child.name for child in path.iterdir() if (child / "task.toml").is_file())
    if not path.is_file():
        raise TaskError(path, "no dataset here (a directory of tasks or a .jsonl of rows)")
    ids: list[str] = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as error:
            raise TaskError(path, f"line {number}: not JSON ({error})") from None
        task_dir = row.get("task_dir") if isinstance(row, dict) else None
        if not isinstance(task_dir, str) or not TASK_ID.match(task_dir):
            raise TaskError(path, f"line {number}: task_dir must name a task directory, got {task_dir!r}")
        ids.append(task_dir)
    return ids
