"""``stream_groups``: pull, yield each group, ack the lease once the pull's groups were consumed.

When the ack happens, exactly:

* each pull's lease is acked inside the ``next()`` call that follows the pull's **last** group,
  i.e. after the consumer's loop body for that group returned and it asked for more; the
  stream then pulls again (or, with ``limit`` reached, stops: the ``for`` loop's final ``next()``
  acks and ends the iteration);
* a group counts as consumed when the consumer comes back for the next one, so a consumer that
  **raises** in its loop body, ``break``s, or closes the iterator (including ``islice``, which
  stops without asking again) acks nothing still open: every group of that pull, even those
  already processed, is delivered again once ``lease_ms`` runs out (``deliveries`` > 1);
* an ack refused because the lease expired meanwhile raises ``ConflictError`` from ``next()``:
  the groups are already being delivered again, so train with a ``lease_ms`` longer than the
  time one pull takes to consume.

Groups the feed dropped instead of delivering (too stale for their training mode) are reported by
every pull that names their batch (``batch_id`` / ``batch_prefix``): each is handed once to
``on_dropped`` (default: a warning) and counts toward ``limit``, since it will never arrive.
"""
from __future__ import annotations

import time
import warnings
from typing import Any, Callable, Iterator, Mapping, Optional, Protocol, Sequence, Union

from .errors import StreamTimeout


class FeedClient(Protocol):
    """What the stream needs of ``edge_rollout.Client`` (named here so this module never imports
    the client, which imports it)."""

    def pull(self, *args: Any, **kwargs: Any) -> dict[str, Any]: ...

    def ack(self, lease_id: str) -> dict[str, Any]: ...

    def feed_stats(self) -> dict[str, Any]: ...


def stream_groups(client: FeedClient, *, max_groups: Optional[int] = 64, max_samples: Optional[int] = None,
                  lease_ms: Optional[int] = 300_000, min_policy_version: Optional[int] = None,
                  training_mode: Optional[str] = None, limit: Optional[int] = None,
                  timeout: Optional[float] = None, poll_interval: float = 0.5,
                  batch_id: Union[str, Sequence[str], None] = None, batch_prefix: Optional[str] = None,
                  uid_prefix: Optional[str] = None,
                  on_dropped: Optional[Callable[[Mapping[str, Any]], None]] = None) -> Iterator[dict[str, Any]]:
    """Yields GRPO groups (with inline samples) from ``client``'s feed; see the module doc for acks.

    ``training_mode``, ``batch_id`` (one id or a list), ``batch_prefix`` and ``uid_prefix`` make
    the feed lease only matching groups: the stream never takes (so never acks) anyone else's.

    ``max_groups`` (default 64) / ``max_samples`` bound each pull; ``limit`` stops the stream
    cleanly after that many groups (pulls never ask for more than remain); ``timeout`` raises
    ``StreamTimeout`` after that many seconds without a new group (None: wait forever);
    ``poll_interval`` (default 0.5 s) is the pause between empty pulls. ``on_dropped`` is called
    once per dropped group of a named batch (see the module doc). Options are checked when
    called, before any request.

    Example::

        for group in stream_groups(client, max_groups=8, limit=16, timeout=600):
            train_on(group)          # acked when the loop asks for the group after a pull's last
    """
    if max_groups is None and max_samples is None:
        raise ValueError("max_groups or max_samples is required")
    if limit is not None and limit < 1:
        raise ValueError("limit must be >= 1")
    if poll_interval <= 0:
        raise ValueError("poll_interval must be > 0")
    if timeout is not None and timeout < 0:
        raise ValueError("timeout must be >= 0")
    selector = {"training_mode": training_mode, "batch_id": batch_id, "batch_prefix": batch_prefix, "uid_prefix": uid_prefix}
    return _groups(client, max_groups, max_samples, lease_ms, min_policy_version, selector, limit, timeout, poll_interval,
                   on_dropped or _warn_dropped)


def why_dropped(group: Mapping[str, Any]) -> str:
    """Why the feed dropped ``group`` (one of a pull's ``dropped_groups``), in words."""
    reason = group.get("reason")
    if reason in ("infra_failure", "cut", "cancelled"):
        failed = group.get("failed_members") or []
        ends = ", ".join(f"sample {m.get('sample_index')} {m.get('termination_reason') or m.get('outcome')}" for m in failed[:4])
        what = {"infra_failure": "an infrastructure failure after its retries", "cut": "a cancelled member (cut)",
                "cancelled": "a member ended STALE while it ran (too far behind the policy to be trained)"}[reason]
        return f"{reason}: {what}" + (f" ({ends})" if ends else "")
    if reason == "no_signal":
        return f"no_signal: every member scored alike on {group.get('metric')} (std {group.get('metric_std')})"
    return (f"{reason}: sampled at policy version {group.get('policy_version_start')}, "
            f"{group.get('training_mode')} allows {group.get('max_staleness')} behind version {group.get('policy_version')}")


def _warn_dropped(group: Mapping[str, Any]) -> None:
    warnings.warn(f"the feed dropped group {group.get('uid')} of batch {group.get('batch_id')} ({why_dropped(group)}); "
                  "it will not be delivered", RuntimeWarning, stacklevel=3)


def _groups(client: FeedClient, max_groups: Optional[int], max_samples: Optional[int], lease_ms: Optional[int],
            min_policy_version: Optional[int], selector: Mapping[str, Any], limit: Optional[int],
            timeout: Optional[float], poll_interval: float,
            on_dropped: Callable[[Mapping[str, Any]], None]) -> Iterator[dict[str, Any]]:
    delivered = 0
    dropped: set[str] = set()  # uids reported dropped: ended, so they count toward limit
    waiting_since = time.monotonic()
    while limit is None or delivered + len(dropped) < limit:
        want = max_groups
        if limit is not None:
            left = limit - delivered - len(dropped)
            want = min(max_groups, left) if max_groups is not None else left
        pulled = client.pull(max_groups=want, max_samples=max_samples, lease_ms=lease_ms, inline=True,
                             min_policy_version=min_policy_version, **selector)
        for group in pulled.get("dropped_groups") or []:
            if group["uid"] not in dropped:
                dropped.add(group["uid"])
                waiting_since = time.monotonic()
                on_dropped(group)
        lease_id, groups = pulled.get("lease_id"), pulled.get("groups") or []
        if lease_id is None or not groups:
            if limit is not None and delivered + len(dropped) >= limit:
                break
            waited = time.monotonic() - waiting_since
            if timeout is not None and waited >= timeout:
                raise StreamTimeout(f"no group arrived within {timeout:g} s ({delivered} delivered so far)"
                                    + _why_nothing_arrives(client))
            time.sleep(poll_interval if timeout is None else max(0.0, min(poll_interval, timeout - waited)))
            continue
        for group in groups:
            yield group
            delivered += 1
        # Reached only when the consumer asked for the group after this pull's last one.
        client.ack(lease_id)
        waiting_since = time.monotonic()


def _why_nothing_arrives(client: FeedClient) -> str:
    """The feed's counts, to tell an empty feed (e.g. a re-submitted, already consumed batch) from a slow one."""
    try:
        stats = client.feed_stats()
    except Exception:  # the timeout is the error to report; the stats only explain it
        return ""
    pending, ready, leased = stats.get("pending_groups", 0), stats.get("ready_groups", 0), stats.get("leased_groups", 0)
    if pending or ready or leased:
        return f"; the feed has {pending} incomplete, {ready} ready and {leased} leased groups"
    return ("; the feed has no incomplete, ready or leased group"
            f" ({stats.get('acked', 0)} acked so far): a batch submitted again under the same batch_id"
            " is not run again, and its groups were already consumed; use a new batch_id")
