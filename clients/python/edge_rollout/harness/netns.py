"""Running a harness CLI with no network but the gateway, where the machine allows it.

``unshare --user --map-root-user --net --mount --pid --fork --kill-child --mount-proc`` gives the
CLI its own network namespace (its own loopback, no route anywhere), its own mount namespace (the
tasks root covered by an empty tmpfs) and its own PID namespace (when its first process ends, or
is killed at the wall clock, the kernel kills everything the CLI started). The gateway, on the
host's 127.0.0.1:PORT, is reached through a forwarder: inside, ``ns_entry.py`` listens on
127.0.0.1:PORT and relays to a Unix socket in the rollout's temp area; outside, ``GatewayRelay``
connects that socket to the gateway. The CLI keeps the gateway's own base URL.

Where namespaces are not available (unprivileged user namespaces disabled by sysctl or AppArmor,
Docker's default seccomp profile, not Linux), or the gateway is not on loopback (no name resolution
inside the namespace), the CLI runs without isolation: in its own process group, with the same
limits, but with the host's network and filesystem. This is logged once per reason and recorded in
each run's ``isolation``.
"""
from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence
from urllib.parse import urlsplit

from . import ns_entry
from .forward import GatewayRelay
from .limits import Limits, RunResult, run_limited

log = logging.getLogger("edge_rollout.harness")

#: The unshare flags of a fully isolated run (see the module doc).
UNSHARE_FLAGS = ("--user", "--map-root-user", "--net", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class Isolation:
    """How a run was isolated: ``mode`` is ``namespace`` or ``none``; ``reason`` says why not, when none."""

    mode: str
    reason: str = ""


@dataclass(frozen=True)
class HarnessRun:
    """A finished harness run: the process outcome and the isolation it had."""

    result: RunResult
    isolation: Isolation


_probe_lock = threading.Lock()
_probed: Optional[Isolation] = None
_warned: set[str] = set()


def namespaces_available() -> Isolation:
    """Whether ``unshare`` can make the namespaces here: tried once per process, the answer cached."""
    global _probed
    with _probe_lock:
        if _probed is None:
            _probed = _probe()
        return _probed


def _probe() -> Isolation:
    if not sys.platform.startswith("linux"):
        return Isolation("none", f"namespaces are Linux only (this is {sys.platform})")
    unshare = shutil.which("unshare")
    if unshare is None:
        return Isolation("none", "no unshare binary (util-linux) on PATH")
    try:
        done = subprocess.run([unshare, *UNSHARE_FLAGS, "true"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Isolation("none", f"unshare failed: {error}")
    if done.returncode != 0:
        return Isolation("none", f"unshare failed: {done.stderr.strip()[:300] or f'exit code {done.returncode}'}")
    return Isolation("namespace")


def _without_isolation(reason: str) -> Isolation:
    if reason not in _warned:
        _warned.add(reason)
        log.warning("harness CLIs run WITHOUT network isolation: %s", reason)
    return Isolation("none", reason)


def gateway_address(base_url: str) -> tuple[str, int]:
    """``(host, port)`` of a base URL (default port by scheme)."""
    parts = urlsplit(base_url)
    if not parts.hostname:
        raise ValueError(f"base URL {base_url!r} has no host")
    return parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)


def run_harness(argv: Sequence[str], *, env: Mapping[str, str], cwd: str, limits: Limits, gateway_url: str, run_dir: str,
                hide: Sequence[str] = (), isolate: Optional[bool] = None,
                cancelled: Optional[threading.Event] = None) -> HarnessRun:
    """Runs ``argv`` under ``limits``, in the namespaces when possible, reaching only ``gateway_url``'s host:port.

    ``isolate`` None: isolated where available, else run without (warned once); True: raise when
    isolation is unavailable; False: never isolate. ``hide``: directories covered inside the
    namespace (skipped when one holds ``cwd`` or ``run_dir``). Raises ``FileNotFoundError`` when
    ``argv[0]`` is not found on the environment's PATH (a runner failure, not a policy outcome).

    Example::

        run = run_harness(["curl", "-s", f"{url}/health"], env=env, cwd=ws, limits=Limits(60), gateway_url=url, run_dir=run)
        run.result.exit_code, run.isolation.mode
    """
    if shutil.which(argv[0], path=env.get("PATH")) is None:
        raise FileNotFoundError(f"harness command {argv[0]!r} not found on PATH {env.get('PATH', '')!r}")
    isolation = _choose(gateway_url, isolate)
    if isolation.mode != "namespace":
        return HarnessRun(run_limited(argv, env=env, cwd=cwd, limits=limits, cancelled=cancelled), isolation)
    host, port = gateway_address(gateway_url)
    socket_path = str(Path(run_dir) / "gateway.sock")
    visible = [Path(cwd).resolve(), Path(run_dir).resolve()]
    hidden = [str(Path(p).resolve()) for p in hide
              if Path(p).is_dir() and not any(_inside(v, Path(p).resolve()) for v in visible)]
    spec_path = Path(run_dir) / "ns-spec.json"
    command = [shutil.which(argv[0], path=env.get("PATH")) or argv[0], *argv[1:]]
    spec_path.write_text(json.dumps({"argv": command, "cwd": cwd, "port": port, "socket": socket_path, "hide": hidden}))
    target = ("127.0.0.1" if host == "localhost" else host, port)
    with GatewayRelay(socket_path, target):
        # The probe found unshare on the runner's PATH; the harness env's PATH may differ.
        wrapped = [shutil.which("unshare") or "unshare", *UNSHARE_FLAGS, sys.executable, "-I", ns_entry.__file__, str(spec_path)]
        result = run_limited(wrapped, env=env, cwd=cwd, limits=limits, cancelled=cancelled)
    return HarnessRun(result, isolation)


def _choose(gateway_url: str, isolate: Optional[bool]) -> Isolation:
    if isolate is False:
        return Isolation("none", "isolation turned off")
    host, _port = gateway_address(gateway_url)
    available = namespaces_available()
    reason = ""
    if available.mode != "namespace":
        reason = available.reason
    elif host not in LOOPBACK_HOSTS:
        reason = f"the gateway host {host} is not loopback (nothing resolves names inside the namespace)"
    if not reason:
        return available
    if isolate:
        raise RuntimeError(f"network isolation was required but is unavailable: {reason}")
    return _without_isolation(reason)


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents
