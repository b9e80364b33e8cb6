"""Getting a sandboxed rollout's task directory: baked into the image, or fetched as a .tar.gz for this rollout.

An archive holds one Harbor task directory's contents at its top level (``instruction.md``,
``task.toml``, ``environment/``, ``tests/``); it is unpacked into a fresh temporary tasks root as
``<root>/<task>/``. Members that would land outside it (absolute paths, ``..``, links, devices) are
refused, and a ``solution/`` directory is deleted on arrival: the oracle must never be where the
harness could read it (the simulator learns solutions out of band, never from a workspace).
"""
from __future__ import annotations

import contextlib
import shutil
import tarfile
import tempfile
import urllib.request
from pathlib import Path, PurePosixPath
from typing import Iterator, Optional

from .container_spec import ContainerSpec
from .tasks import TaskError

#: Largest task archive fetched (tasks are starting files and a check, not datasets).
MAX_ARCHIVE_BYTES = 64 << 20
FETCH_TIMEOUT_S = 60.0


@contextlib.contextmanager
def task_root(spec: ContainerSpec, parent: Optional[str] = None) -> Iterator[Path]:
    """The tasks root holding ``spec.task``: the baked one, or a temporary one with the fetched archive (removed after).

    Example::

        with task_root(spec) as root:
            HarnessAgent([spec.harness], root)
    """
    if not spec.task_archive_url:
        yield Path(spec.tasks_root)
        return
    root = Path(tempfile.mkdtemp(prefix="er-tasks-", dir=parent))
    try:
        archive = root / "task.tar.gz"
        fetch(spec.task_archive_url, archive)
        unpack(archive, root / spec.task)
        archive.unlink()
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def fetch(url: str, target: Path, limit: int = MAX_ARCHIVE_BYTES) -> None:
    """Downloads ``url`` to ``target``, refusing more than ``limit`` bytes."""
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"task_archive_url must be http(s), got {url!r}")
    with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as response, open(target, "wb") as out:  # noqa: S310 - checked above
        received = 0
        while chunk := response.read(1 << 16):
            received += len(chunk)
            if received > limit:
                raise ValueError(f"task archive {url} is larger than {limit} bytes")
            out.write(chunk)


def unpack(archive: Path, dest: Path) -> None:
    """Unpacks a task .tar.gz into ``dest`` (created), refusing unsafe members, then drops any ``solution/``."""
    dest.mkdir(parents=True)
    with tarfile.open(archive, "r:gz") as tar:
        members = tar.getmembers()
        for member in members:
            _check(member, archive)
        tar.extractall(dest, members=members, **_data_filter())  # noqa: S202 - every member checked above
    for solution in [p for p in dest.rglob("solution") if p.is_dir()]:
        shutil.rmtree(solution)
    if not (dest / "instruction.md").is_file():
        raise TaskError(archive, "the archive has no instruction.md at its top level")


def _check(member: tarfile.TarInfo, archive: Path) -> None:
    path = PurePosixPath(member.name)
    if path.is_absolute() or ".." in path.parts:
        raise TaskError(archive, f"member {member.name!r} would land outside the task directory")
    if not (member.isfile() or member.isdir()):
        raise TaskError(archive, f"member {member.name!r} is not a regular file or directory")


def _data_filter() -> dict[str, object]:
    # Python 3.12 (and 3.11.4+ backports) filters extraction itself; older ones rely on _check alone.
    return {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
