"""A fresh workspace per rollout, removed when the rollout ends whatever happens, and the task's check run in it.

Layout of one rollout's temporary root (mirrors the paths of a Harbor trial container)::

    <root>/workspace/        the starting files (environment/workspace/); the harness's cwd (Harbor's /app)
    <root>/home/             a fresh HOME (the CLI's settings and session logs)
    <root>/tmp/              TMPDIR
    <root>/run/              Unix sockets of the gateway forwarder, the namespace spec
    <root>/tests/            tests/ of the task, copied in only after the harness finished (Harbor's /tests)
    <root>/logs/verifier/    where tests/test.sh writes reward.txt ($REWARD_FILE; Harbor's /logs/verifier)

The solution is never copied: the harness sees the instruction and the starting files only.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping, Optional

from .limits import Limits, RunResult, run_limited
from .tasks import HarnessTask

#: Kept of the check's output (it is for debugging; the reward is the exit code or the reward file).
CHECK_OUTPUT_CAP = 64 * 1024


@dataclass(frozen=True)
class Workspace:
    """The directories of one rollout (see the module doc)."""

    root: Path

    @property
    def workspace(self) -> Path:
        """The harness's cwd, holding the starting files."""
        return self.root / "workspace"

    @property
    def home(self) -> Path:
        """The fresh HOME (the CLI's settings and logs)."""
        return self.root / "home"

    @property
    def tmp(self) -> Path:
        """TMPDIR."""
        return self.root / "tmp"

    @property
    def run_dir(self) -> Path:
        """The forwarder's Unix socket and the namespace spec."""
        return self.root / "run"

    @property
    def tests(self) -> Path:
        """Where the check's tests/ is copied after the harness."""
        return self.root / "tests"

    @property
    def reward_file(self) -> Path:
        """$REWARD_FILE of the check."""
        return self.root / "logs" / "verifier" / "reward.txt"


@dataclass(frozen=True)
class CheckResult:
    """The check's verdict: ``reward`` (from the reward file, else 1.0/0.0 by exit code) and how it ran."""

    reward: float
    passed: bool
    exit_code: Optional[int]
    timed_out: bool
    reward_from_file: bool
    output: str


def base_env(ws: Workspace) -> dict[str, str]:
    """The environment a harness or check starts from: PATH and locale from the host, everything else fresh.

    Nothing else of the runner's environment is passed (its API token, proxies: a proxy would not
    be reachable inside the network namespace anyway).
    """
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(ws.home), "TMPDIR": str(ws.tmp),
           "LANG": os.environ.get("LANG", "C.UTF-8"), "TERM": "dumb", "SHELL": "/bin/bash"}
    for name in ("USER", "LOGNAME", "LC_ALL", "TZ"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def _remove(root: Path) -> None:
    """Removes ``root`` even where the harness took write permission away from its own files."""
    def retry(func, path, _exc):  # type: ignore[no-untyped-def]
        parent = os.path.dirname(path)
        for target in (parent, path):
            with contextlib.suppress(OSError):
                os.chmod(target, stat.S_IRWXU)
        with contextlib.suppress(FileNotFoundError):
            func(path)
    if sys.version_info >= (3, 12):
        shutil.rmtree(root, onexc=retry)
    else:
        shutil.rmtree(root, onerror=retry)


@contextlib.contextmanager
def open_workspace(task: HarnessTask, parent: Optional[str] = None) -> Iterator[Workspace]:
    """A fresh workspace with the task's starting files, removed on exit whatever happened inside.

    Example::

        with open_workspace(load_task("examples/harness-tasks/create-answer-file")) as ws:
            (ws.workspace / "answer.txt").write_text("42\\n")
            run_check(ws, task).reward  # 1.0
    """
    # A short path: the forwarder's Unix socket lives under it, and socket paths are limited to 107 bytes.
    root = Path(tempfile.mkdtemp(prefix="er-harness-", dir=parent))
    try:
        ws = Workspace(root)
        if task.workspace_dir.is_dir():
            shutil.copytree(task.workspace_dir, ws.workspace, symlinks=True)
        else:
            ws.workspace.mkdir()
        for directory in (ws.home, ws.tmp, ws.run_dir, ws.reward_file.parent):
            directory.mkdir(parents=True)
        yield ws
    finally:
        _remove(root)


def run_script(ws: Workspace, script: Path, *, timeout_s: float, env: Optional[Mapping[str, str]] = None) -> RunResult:
    """Runs a bash script in the workspace (cwd) with the fresh environment plus ``env``, output capped."""
    return run_limited(["bash", str(script)], env={**base_env(ws), **(env or {})}, cwd=str(ws.workspace),
                       limits=Limits(wall_clock_s=timeout_s, output_cap_bytes=CHECK_OUTPUT_CAP))


def run_check(ws: Workspace, task: HarnessTask, timeout_s: Optional[float] = None) -> CheckResult:
    """Copies the task's tests in (now, after the harness) and runs ``tests/test.sh`` in the workspace.

    The reward is the number in ``$REWARD_FILE`` when the script wrote one (Harbor's reward.txt),
    else 1.0 for exit code 0 and 0.0 otherwise; a check that runs past ``timeout_s`` (default the
    task's ``[verifier] timeout_sec``) gives 0.0.
    """
    if ws.tests.exists():
        _remove(ws.tests)
    shutil.copytree(task.tests_dir, ws.tests, symlinks=True)
    with contextlib.suppress(FileNotFoundError):
        ws.reward_file.unlink()
    result = run_script(ws, ws.tests / "test.sh", timeout_s=timeout_s or task.verifier_timeout_s,
                        env={"REWARD_FILE": str(ws.reward_file), "TESTS_DIR": str(ws.tests)})
    output = (result.text("stdout") + result.text("stderr"))[-4000:]
    if result.timed_out:
        return CheckResult(0.0, False, None, True, False, output)
    from_file = _reward_file(ws.reward_file)
    passed = result.exit_code == 0
    reward = from_file if from_file is not None else (1.0 if passed else 0.0)
    return CheckResult(reward, passed, result.exit_code, False, from_file is not None, output)


def _reward_file(path: Path) -> Optional[float]:
    try:
        value = float(path.read_text().strip())
    except (OSError, ValueError):
        return None
    return value if value == value and abs(value) != float("inf") else None
