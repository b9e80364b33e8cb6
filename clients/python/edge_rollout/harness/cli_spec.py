"""The shapes shared by every harness CLI spec: what to start (``Launch``) and how to describe a CLI (``HarnessSpec``).

Kept apart from ``clis.py`` so each CLI's module (``cli_claude_code.py``, ``cli_codex.py``,
``cli_opencode.py``) can import them without importing the registry that imports it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping


@dataclass(frozen=True)
class Launch:
    """One harness run, ready to start: run ``argv`` with cwd = the workspace, stdin closed.

    ``env`` is added to a minimal environment (``PATH``, ``HOME`` = the rollout's fresh home,
    ``LANG``); ``files`` are written before the start, paths relative to that home.
    """

    argv: List[str]
    env: Dict[str, str]
    files: Dict[str, str]


@dataclass(frozen=True)
class LaunchRequest:
    """What a spec needs to build a ``Launch`` (the arguments of ``clis.launch_for``, checked)."""

    binary: str
    instruction: str
    base_url: str
    api_key: str
    headers: Mapping[str, str]
    workspace: str
    home: str
    model: str


@dataclass(frozen=True)
class HarnessSpec:
    """A harness CLI: its pinned npm package, its binary, how to launch it and how to count its logged calls.

    ``launch`` builds the ``Launch`` of one rollout; ``count_calls(home, workspace, stdout)`` reads
    the CLI's own log of that run (its JSON output, its transcript files under ``home``) and
    returns how many model calls it recorded. To add a CLI, write these two functions and register
    a spec in ``clis.REGISTRY`` (see ``clis.register``), and add its package to
    ``scripts/install-harness-clis.sh``.
    """

    package: str
    binary: str
    launch: Callable[[LaunchRequest], Launch]
    count_calls: Callable[[str, str, str], int]

    @property
    def version(self) -> str:
        """The pinned version (the part of ``package`` after its last ``@``)."""
        return self.package.rsplit("@", 1)[1]
