"""Running one process tree under limits: a wall clock, an output cap, stdin closed.

The process starts in its own session (its own process group), so at the limit, on cancellation,
and after it exits, the whole group is killed: nothing it started outlives the call, except what
moved itself to another session (in the network namespace, ``netns.py``, the namespace's end kills
those too).
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import IO, Mapping, Optional, Sequence

#: Default bytes kept of each of stdout and stderr; the rest is read, dropped and counted.
DEFAULT_OUTPUT_CAP = 1 << 20
#: Seconds between SIGTERM and SIGKILL at the limit (a CLI may flush its log in that time).
KILL_GRACE_S = 1.0


@dataclass(frozen=True)
class Limits:
    """What one run may use: ``wall_clock_s`` seconds, ``output_cap_bytes`` kept per stream."""

    wall_clock_s: float
    output_cap_bytes: int = DEFAULT_OUTPUT_CAP
    kill_grace_s: float = KILL_GRACE_S

    def __post_init__(self) -> None:
        if not self.wall_clock_s > 0:
            raise ValueError("wall_clock_s must be > 0")
        if self.output_cap_bytes < 0:
            raise ValueError("output_cap_bytes must be >= 0")


@dataclass(frozen=True)
class RunResult:
    """How a run ended: exit code (None when killed at the limit or cancelled), output kept and dropped."""

    exit_code: Optional[int]
    timed_out: bool
    cancelled: bool
    stdout: bytes
    stderr: bytes
    stdout_dropped: int
    stderr_dropped: int
    wall_s: float

    def text(self, stream: str = "stdout") -> str:
        """The kept output of ``stream`` as text (undecodable bytes replaced)."""
        return (self.stdout if stream == "stdout" else self.stderr).decode("utf-8", "replace")


class _Capture:
    """Reads a pipe to its end on a thread, keeping the first ``cap`` bytes and counting the rest."""

    def __init__(self, pipe: IO[bytes], cap: int):
        self.kept = bytearray()
        self.dropped = 0
        self._pipe, self._cap = pipe, cap
        # A daemon thread: a grandchild that escaped the kill may hold the pipe open; that must not hang us.
        self.thread = threading.Thread(target=self._read, name="harness-output", daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while True:
            chunk = self._pipe.read1(65536) if hasattr(self._pipe, "read1") else self._pipe.read(65536)
            if not chunk:
                return
            room = self._cap - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]
            self.dropped += max(0, len(chunk) - max(room, 0))


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    """Signals a whole process group; a group already gone is fine."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run_limited(argv: Sequence[str], *, env: Mapping[str, str], cwd: str, limits: Limits,
                cancelled: Optional[threading.Event] = None) -> RunResult:
    """Runs ``argv`` with stdin closed, output capped, and its process group killed at the wall clock.

    A ``cancelled`` event that gets set stops the run the same way (a lost lease). Raises
    ``FileNotFoundError`` only when ``argv[0]`` cannot be started at all.

    Example::

        run_limited(["sleep", "100"], env={"PATH": "/usr/bin:/bin"}, cwd="/tmp", limits=Limits(1.0)).timed_out  # True
    """
    started = time.monotonic()
    proc = subprocess.Popen(list(argv), env=dict(env), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    out, err = _Capture(proc.stdout, limits.output_cap_bytes), _Capture(proc.stderr, limits.output_cap_bytes)  # type: ignore[arg-type]
    deadline = started + limits.wall_clock_s
    timed_out = was_cancelled = False
    while True:
        try:
            proc.wait(timeout=max(0.0, min(0.1, deadline - time.monotonic())))
            break
        except subprocess.TimeoutExpired:
            pass
        if cancelled is not None and cancelled.is_set():
            was_cancelled = True
        elif time.monotonic() >= deadline:
            timed_out = True
        else:
            continue
        _stop(proc, limits.kill_grace_s)
        break
    # Whatever the run left behind in its group goes now, so it cannot write into the workspace later.
    kill_group(proc.pid)
    for capture in (out, err):
        capture.thread.join(timeout=2.0)
    stopped = timed_out or was_cancelled
    return RunResult(exit_code=None if stopped else proc.returncode, timed_out=timed_out, cancelled=was_cancelled,
                     stdout=bytes(out.kept), stderr=bytes(err.kept), stdout_dropped=out.dropped, stderr_dropped=err.dropped,
                     wall_s=time.monotonic() - started)


def _stop(proc: subprocess.Popen, grace_s: float) -> None:
    """SIGTERM to the group, then SIGKILL after ``grace_s`` if it is still there."""
    kill_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        pass
    kill_group(proc.pid, signal.SIGKILL)
    proc.wait()
