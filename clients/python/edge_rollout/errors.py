"""Errors the client raises: one base class, HTTP problems by status, transport and timeouts."""
from __future__ import annotations

from typing import Any, Optional


class EdgeRolloutError(Exception):
    """Base of every error this package raises on purpose."""


class ProblemError(EdgeRolloutError):
    """The server answered an RFC 9457 problem (4xx/5xx).

    Carries the problem's fields: ``status``, ``code`` (the ``urn:edge-rollout:problem:<code>``
    suffix of ``type``), ``title``, ``detail``, ``instance``, ``errors`` (a list of
    ``{"path", "message"}`` naming each bad field) and ``retry_after`` (seconds, from the
    ``Retry-After`` header, e.g. while a weight sync is under way). ``path`` is the first field
    path, or None when the problem names no field.
    """

    def __init__(self, status: int, problem: dict[str, Any], retry_after: Optional[float] = None):
        self.status = status
        self.problem = problem
        self.type: str = str(problem.get("type", ""))
        self.code: str = self.type.rsplit(":", 1)[-1] if self.type else "unknown"
        self.title: str = str(problem.get("title", ""))
        self.detail: str = str(problem.get("detail", ""))
        self.instance: Optional[str] = problem.get("instance")
        errors = problem.get("errors")
        self.errors: list[dict[str, str]] = [e for e in errors if isinstance(e, dict)] if isinstance(errors, list) else []
        self.retry_after = retry_after
        super().__init__(f"{status} {self.title or self.code}: {self.detail}")

    @property
    def path(self) -> Optional[str]:
        """The first field path the problem names (e.g. ``"rows.0.prompt"``), or None."""
        return self.errors[0].get("path") if self.errors else None

    @property
    def paths(self) -> list[str]:
        """Every field path the problem names, in order."""
        return [str(e.get("path")) for e in self.errors if e.get("path") is not None]


class InvalidInputError(ProblemError):
    """400/422: the request was malformed or named a bad field (see ``path`` / ``errors``)."""


class UnauthorizedError(ProblemError):
    """401/403: missing or wrong ``Authorization: Bearer`` token."""


class NotFoundError(ProblemError):
    """404: the batch, rollout or resource does not exist."""


class ConflictError(ProblemError):
    """409: e.g. acking an expired or unknown lease, ending a sync that was not begun."""


class SyncingError(ProblemError):
    """429: the policy is syncing weights; retry after ``retry_after`` seconds."""


_BY_STATUS = {400: InvalidInputError, 422: InvalidInputError, 401: UnauthorizedError, 403: UnauthorizedError,
              404: NotFoundError, 409: ConflictError, 429: SyncingError}


def problem_error(status: int, problem: dict[str, Any], retry_after: Optional[float] = None) -> ProblemError:
    """Builds the ProblemError subclass for ``status`` (ProblemError itself for other statuses)."""
    return _BY_STATUS.get(status, ProblemError)(status, problem, retry_after)


class TransportError(EdgeRolloutError):
    """The server could not be reached, or answered something that is not JSON."""


class StreamTimeout(EdgeRolloutError, TimeoutError):
    """No group arrived within the stream's ``timeout``."""


class GroupsDropped(EdgeRolloutError):
    """The feed dropped groups a caller waited for (e.g. too stale for their training mode);
    ``groups`` holds the feed's report of each (``uid``, ``reason``, versions, …)."""

    def __init__(self, message: str, groups: list):
        super().__init__(message)
        self.groups = groups
