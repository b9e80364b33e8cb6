"""@module The agent-harness CLIs a rollout can run (Claude Code, Codex CLI, opencode): how to start each against a gateway.

``launch_for`` gives the command line, environment and config files that run a CLI offline,
non-interactively, as root, without telemetry or update checks, in a fresh HOME, pointed at one
rollout attempt's gateway base URL; ``logged_calls`` reads back how many model calls the CLI
itself logged (to compare with what the gateway recorded). The CLIs are installed, pinned, by
``scripts/install-harness-clis.sh`` under ``.tmp/harness-clis/<harness>/``.

Adding a CLI: write a module like ``cli_opencode.py`` (a ``launch(LaunchRequest) -> Launch`` and a
``count_calls(home, workspace, stdout) -> int``), call ``register("name", HarnessSpec(...))`` (or
add it to ``REGISTRY`` here), and add its npm package to the install script.

Example::

    launch = launch_for("codex", instruction="create answer.txt containing 42",
                        base_url="http://127.0.0.1:8787/v1/rollouts/r1/attempts/0/llm",
                        api_key=key, headers={}, workspace=ws, home=home)
    # write launch.files under home, then run launch.argv with cwd=ws, stdin closed,
    # env = {"PATH": ..., "HOME": home, "LANG": "C.UTF-8", **launch.env}
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict, Mapping, Optional

from . import cli_claude_code, cli_codex, cli_opencode
from .cli_spec import HarnessSpec, Launch, LaunchRequest

__all__ = ["HARNESSES", "REGISTRY", "Launch", "HarnessSpec", "LaunchRequest", "cli_path", "installed", "launch_for",
           "logged_calls", "register"]

#: name -> spec of every known harness CLI; ``register`` adds more.
REGISTRY: Dict[str, HarnessSpec] = {
    "claude-code": cli_claude_code.SPEC,
    "codex": cli_codex.SPEC,
    "opencode": cli_opencode.SPEC,
}
#: The harnesses shipped with edge-rollout (agents ``external:<name>``).
HARNESSES = ("claude-code", "codex", "opencode")

#: Overrides where the CLIs are installed (default: ``<repo>/.tmp/harness-clis``).
ROOT_VARIABLE = "EDGE_ROLLOUT_HARNESS_CLIS"
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def register(name: str, spec: HarnessSpec) -> None:
    """Adds (or replaces) a harness CLI, so ``launch_for(name, ...)`` and agent ``external:<name>`` can use it."""
    if not name or "/" in name:
        raise ValueError(f"harness name must be non-empty without '/', got {name!r}")
    REGISTRY[name] = spec


def _spec(harness: str) -> HarnessSpec:
    try:
        return REGISTRY[harness]
    except KeyError:
        raise ValueError(f"harness must be one of {sorted(REGISTRY)}, got {harness!r}") from None


def _default_root() -> Path:
    # clients/python/edge_rollout/harness/clis.py -> the repository root, four levels up.
    return Path(__file__).resolve().parents[4] / ".tmp" / "harness-clis"


def cli_path(harness: str, root: Optional[str] = None) -> str:
    """The installed binary of ``harness``: ``<root>/<harness>/bin/<binary>`` (not checked to exist).

    ``root`` defaults to ``$EDGE_ROLLOUT_HARNESS_CLIS``, else ``<repo>/.tmp/harness-clis``.
    """
    spec = _spec(harness)
    base = Path(root or os.environ.get(ROOT_VARIABLE) or _default_root())
    return str(base / harness / "bin" / spec.binary)


def installed(harness: str, root: Optional[str] = None) -> bool:
    """Whether ``harness`` is installed at its pinned version (the install script's marker file says so)."""
    binary = Path(cli_path(harness, root))
    marker = binary.parent.parent / ".installed"
    try:
        return binary.exists() and marker.read_text().strip() == _spec(harness).package
    except OSError:
        return False


def launch_for(harness: str, *, instruction: str, base_url: str, api_key: str, headers: Mapping[str, str],
               workspace: str, home: str, model: str = "policy", root: Optional[str] = None) -> Launch:
    """How to run ``harness`` on ``instruction`` against one attempt's gateway.

    ``base_url`` is the attempt's LLM base without ``/v1``
    (``http://127.0.0.1:PORT/v1/rollouts/ID/attempts/N/llm``); each CLI appends what it needs.
    ``headers`` are sent on every model call. Run ``argv`` with cwd = ``workspace``, stdin closed,
    ``HOME`` = ``home`` (fresh per rollout) and ``env`` added; write ``files`` under ``home`` first.
    """
    if not instruction.strip():
        raise ValueError("instruction must not be empty")
    if not re.match(r"^https?://", base_url) or base_url.endswith("/v1") or base_url.endswith("/"):
        raise ValueError(f"base_url must be http(s)://... without a trailing / or /v1, got {base_url!r}")
    if not model or any(c.isspace() or c == "/" for c in model):
        raise ValueError(f"model must be a name without spaces or '/', got {model!r}")
    for name, value in headers.items():
        if not _HEADER_NAME.match(name) or any(c in value for c in "\r\n\0"):
            raise ValueError(f"headers[{name!r}] is not a valid header line")
    spec = _spec(harness)
    request = LaunchRequest(binary=cli_path(harness, root), instruction=instruction, base_url=base_url, api_key=api_key,
                            headers=dict(headers), workspace=workspace, home=home, model=model)
    return spec.launch(request)


def logged_calls(harness: str, *, home: str, workspace: str, stdout: str) -> int:
    """How many model calls ``harness`` itself logged for one run (see each CLI's ``count_calls`` for what counts).

    claude-code: ``api-request`` entries of ``~/.claude/projects/**/*.jsonl`` (main and side calls);
    codex: distinct ``response_id`` of ``token_usage_record`` entries in ``~/.codex/sessions/**/*.jsonl``
    (completed calls); opencode: ``step_start`` events of its ``--format json`` stdout (main-loop
    calls; the title call is not logged).
    """
    return _spec(harness).count_calls(home, workspace, stdout)
