"""The HTTP client: batches, the trainer feed (pull / ack / stream) and the weight-sync handshake.

Standard library only (urllib + json), so it imports anywhere a trainer runs.
"""
from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence, Union

from .arrow_feed import ARROW_MEDIA_TYPE, arrow_available, decode_arrow_pull
from .errors import TransportError, problem_error
from .stream import stream_groups

#: Formats ``Client.pull`` asks for: Arrow when pyarrow is installed (``"auto"``), or as named.
PULL_FORMATS = ("auto", "arrow", "json")

#: Lease the server grants when a pull does not say: 5 minutes.
DEFAULT_LEASE_MS = 300_000


def _to_json(value: Any) -> Any:
    """JSON fallback for numpy values found in verl rows (arrays, scalars) without importing numpy."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _drop_none(body: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if value is not None}


def _batch_ids(batch_id: Union[str, Sequence[str], None]) -> Optional[list[str]]:
    """One batch id or several, as the list the feed takes (None: no batch filter)."""
    if batch_id is None:
        return None
    ids = [batch_id] if isinstance(batch_id, str) else list(batch_id)
    if not ids:
        raise ValueError("batch_id must name at least one batch")
    return ids


class Client:
    """Talks to one edge-rollout deployment.

    ``url`` is its origin (``http://127.0.0.1:8787``); ``token`` is the deployment's ``API_TOKEN``
    (sent as ``Authorization: Bearer``), None when it has none; ``timeout`` (default 60 s) bounds
    each HTTP request. Every method returns the server's JSON answer as a dict and raises a
    ``ProblemError`` subclass on a 4xx/5xx (with the problem's ``detail`` and field ``path``) or a
    ``TransportError`` when the server cannot be reached.

    Example::

        client = Client("http://127.0.0.1:8787")
        client.submit_batch(rows, agent="calculator", n=4, batch_id="step-1")
        for group in client.stream_groups(max_groups=8, limit=len(rows)):
            ...
    """

    def __init__(self, url: str, token: Optional[str] = None, timeout: float = 60.0):
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https://, got {url!r}")
        self.url = url.rstrip("/")
        self.timeout = timeout
        self._headers = {"content-type": "application/json", "accept": "application/json"}
        if token:
            self._headers["authorization"] = f"Bearer {token}"

    def request(self, method: str, path: str, body: Any = None) -> Any:
        """Sends one request to ``path`` (``/v1/...``) and returns the decoded JSON answer."""
        _, raw = self._send(method, path, body)
        return self._json(method, path, raw)

    def _send(self, method: str, path: str, body: Any, accept: Optional[str] = None) -> tuple[str, bytes]:
        """One request; returns the answer's content type and body bytes."""
        data = None if body is None else json.dumps(body, default=_to_json).encode()
        headers = self._headers if accept is None else {**self._headers, "accept": accept}
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as response:
                return response.headers.get("content-type", ""), response.read()
        except urllib.error.HTTPError as error:
            raise self._problem(error) from None
        except (urllib.error.URLError, OSError) as error:
            raise TransportError(f"{method} {self.url}{path} failed: {getattr(error, 'reason', error)}") from error

    @staticmethod
    def _json(method: str, path: str, raw: bytes) -> Any:
        try:
            return json.loads(raw)
        except ValueError as error:
            raise TransportError(f"{method} {path} answered something that is not JSON: {raw[:200]!r}") from error

    @staticmethod
    def _problem(error: urllib.error.HTTPError):
        raw = error.read()
        try:
            problem = json.loads(raw)
            if not isinstance(problem, dict):
                raise ValueError("not an object")
        except ValueError:
            problem = {"title": error.reason, "detail": raw[:500].decode("utf-8", "replace")}
        retry_after = error.headers.get("retry-after") if error.headers else None
        try:
            seconds = float(retry_after) if retry_after is not None else None
        except ValueError:
            seconds = None
        return problem_error(error.code, problem, seconds)

    # --- batches -------------------------------------------------------------------------------

    def submit_batch(self, rows: Optional[Sequence[Mapping[str, Any]]], agent: str, n: int, mode: str = "train",
                     batch_id: Optional[str] = None, config: Optional[Mapping[str, Any]] = None,
                     max_concurrent: Optional[int] = None, training_mode: Optional[str] = None,
                     data_manager: Optional[str] = None, dataset_key: Optional[str] = None,
                     limit: Optional[int] = None, target_groups: Optional[int] = None,
                     filter: Optional[Mapping[str, Any]] = None, max_member_retries: Optional[int] = None,
                     on_infra_failure: Optional[str] = None, series: Optional[str] = None,
                     tree: Optional[Mapping[str, Any]] = None, on_stale: Optional[str] = None,
                     refill_budget: Optional[int] = None) -> dict[str, Any]:
        """``POST /v1/batches``: runs every row ``n`` times (GRPO groups ``<batch_id>:<row>``).

        ``rows`` are verl RL dataset rows (``prompt``, ``data_source``, ``ability``,
        ``reward_model.ground_truth``, ``extra_info``); pass ``rows=None`` and ``dataset_key`` for
        a dataset stored in R2. Omitted options take the server's defaults: ``max_concurrent``
        256, ``training_mode`` ``"verl/hybrid"``, ``data_manager`` ``"train"`` for ``mode="train"``
        (``"infer"`` for ``"val"``), a generated ``batch_id``. Idempotent by ``batch_id``: the same
        body again returns the current progress, a different one raises ``ConflictError``.
        Signal options (docs/verl.md): ``target_groups`` ends the batch once that many groups with
        signal are complete (the rest is cut), ``filter`` (``{"metric": "reward", "min_std": 0}``)
        drops groups without reward spread, ``max_member_retries`` (default 2) re-runs
        infrastructure failures, ``on_infra_failure`` (``"withhold"`` or ``"deliver_valid"``).
        ``series`` names the training run the batch belongs to (the run view ``/runs/<series>``;
        default: the batch id without its trailing number). ``tree`` (``{"branch_at": [1, 3], "width": 2}``)
        forks each root at those steps into ``width`` children per node, one GRPO group per node
        (docs/api.md, *Tree sampling*); samples carry ``extra_fields["tree"]``. ``on_stale``
        (``"drop"`` or ``"wait"``) and ``refill_budget`` (default 16): what the batch does with a group
        lost to the staleness rule (docs/api.md, *Staleness while rollouts run*). Returns ``{batch_id, rollouts, status, created, progress, links}``.
        """
        if (rows is None) == (dataset_key is None):
            raise ValueError("exactly one of rows and dataset_key is required")
        body = _drop_none({"agent": agent, "n": n, "mode": mode, "batch_id": batch_id, "config": config,
                           "max_concurrent": max_concurrent, "training_mode": training_mode,
                           "data_manager": data_manager, "dataset_key": dataset_key, "limit": limit,
                           "target_groups": target_groups, "filter": filter, "max_member_retries": max_member_retries,
                           "on_infra_failure": on_infra_failure, "series": series, "tree": tree,
                           "on_stale": on_stale, "refill_budget": refill_budget})
        if rows is not None:
            body["rows"] = list(rows)
        return self.request("POST", "/v1/batches", body)

    def batch_status(self, batch_id: str) -> dict[str, Any]:
        """``GET /v1/batches/:id``: progress (``status``, ``done``, ``counts``, ``reward``, …)."""
        return self.request("GET", f"/v1/batches/{batch_id}")

    def cancel_batch(self, batch_id: str) -> dict[str, Any]:
        """``POST /v1/batches/:id/cancel``: stops releasing rollouts and cancels running ones."""
        return self.request("POST", f"/v1/batches/{batch_id}/cancel", {})

    # --- the trainer feed ----------------------------------------------------------------------

    def report_trainer(self, batch_id: str, logprob_max_abs: float, logprob_mean_abs: float, tokens: int,
                       spanned_responses: int = 0, version_mismatches: int = 0,
                       loss: Optional[float] = None) -> dict[str, Any]:
        """``PUT /v1/batches/<id>/trainer-report``: what the trainer measured of a batch it trained on
        (the recorded vs recomputed log-prob gap, responses spanning two policy versions, version
        mismatches, the loss), shown on the run page beside the batch's own numbers."""
        report = {"logprob_agreement": {"max_abs": logprob_max_abs, "mean_abs": logprob_mean_abs, "tokens": tokens},
                  "spanned_responses": spanned_responses, "version_mismatches": version_mismatches, "loss": loss}
        return self.request("PUT", f"/v1/batches/{urllib.parse.quote(batch_id, safe='')}/trainer-report", report)

    def pull(self, max_groups: Optional[int] = None, max_samples: Optional[int] = None,
             lease_ms: Optional[int] = DEFAULT_LEASE_MS, inline: bool = True,
             min_policy_version: Optional[int] = None, training_mode: Optional[str] = None,
             batch_id: Union[str, Sequence[str], None] = None, batch_prefix: Optional[str] = None,
             uid_prefix: Optional[str] = None, format: str = "auto", max_bytes: Optional[int] = None) -> dict[str, Any]:
        """``POST /v1/feed/pull``: leases the oldest ready GRPO groups.

        At least one of ``max_groups`` / ``max_samples`` is required. ``lease_ms`` defaults to
        300000 (5 min); ``inline=True`` (default here) returns each member's training samples
        rather than their R2 keys. ``batch_id`` (one id or a list) and ``batch_prefix`` (e.g.
        ``"<id>.chunk"``) take only groups of those batches, ``uid_prefix`` only groups whose uid
        starts with it; every other group stays in the feed for its own consumer. Returns
        ``{lease_id, lease_expires_at, policy_version, dropped_stale, dropped_groups, groups}``
        (``dropped_groups``: the named batches' groups the feed dropped, never delivered); ``lease_id`` is
        None when nothing was ready. Ack the lease with ``ack`` once the groups are consumed, or
        they are delivered again after ``lease_ms``.

        ``format`` (default ``"auto"``): with ``inline=True`` and pyarrow installed, the samples
        travel as an Arrow IPC stream (``"arrow"``; see ``edge_rollout.arrow_feed``): the answer
        has the same keys, each sample is a ``SampleRef`` mapping whose token ids / mask /
        logprobs are numpy views of the body, and ``columns`` holds them all as flat arrays.
        Without pyarrow ``"auto"`` pulls JSON and warns once; ``"json"`` always pulls JSON.

        ``max_bytes`` caps an inline pull's sample bytes below the server's own budget (64 MiB
        streamed Arrow, 24 MiB otherwise): the first group always comes, groups past the cap go
        back to the feed first in line (``returned_groups`` counts them).
        """
        if max_groups is None and max_samples is None:
            raise ValueError("max_groups or max_samples is required")
        if format not in PULL_FORMATS:
            raise ValueError(f"format must be one of {', '.join(PULL_FORMATS)}, got {format!r}")
        body = _drop_none({"max_groups": max_groups, "max_samples": max_samples, "lease_ms": lease_ms,
                           "inline": inline, "min_policy_version": min_policy_version,
                           "training_mode": training_mode, "batch_id": _batch_ids(batch_id),
                           "batch_prefix": batch_prefix, "uid_prefix": uid_prefix, "max_bytes": max_bytes})
        use_arrow = inline and (format == "arrow" or (format == "auto" and arrow_available()))
        if format == "arrow" and not arrow_available(warn=False):
            raise ImportError("format='arrow' needs pyarrow (python3 -m pip install pyarrow)")
        if not use_arrow:
            return self.request("POST", "/v1/feed/pull", body)
        # JSON stays acceptable: a server older than the Arrow format answers it, and is read as such.
        content_type, raw = self._send("POST", "/v1/feed/pull", body, accept=f"{ARROW_MEDIA_TYPE}, application/json;q=0.5")
        if content_type.split(";")[0].strip() == ARROW_MEDIA_TYPE:
            return decode_arrow_pull(raw)
        return self._json("POST", "/v1/feed/pull", raw)

    def ack(self, lease_id: str) -> dict[str, Any]:
        """``POST /v1/feed/ack``: deletes the lease's groups (acking twice is fine).

        Raises ``ConflictError`` for an unknown or expired lease (its groups will be delivered again).
        """
        return self.request("POST", "/v1/feed/ack", {"lease_id": lease_id})

    def feed_stats(self, batch_id: Union[str, Sequence[str], None] = None, batch_prefix: Optional[str] = None) -> dict[str, Any]:
        """``GET /v1/feed/stats``: ingested / ready / leased / acked counts, per training mode and
        per batch (``by_batch``: pending / ready / leased groups held now, and ``dropped_groups``); ``batch_id`` /
        ``batch_prefix`` narrow ``by_batch`` to those batches (a named empty batch shows zeros)."""
        query = [("batch_id", b) for b in (_batch_ids(batch_id) or [])]
        if batch_prefix is not None:
            query.append(("batch_prefix", batch_prefix))
        return self.request("GET", "/v1/feed/stats" + (f"?{urllib.parse.urlencode(query)}" if query else ""))

    def stream_groups(self, max_groups: Optional[int] = 64, max_samples: Optional[int] = None,
                      lease_ms: Optional[int] = DEFAULT_LEASE_MS, min_policy_version: Optional[int] = None,
                      training_mode: Optional[str] = None, limit: Optional[int] = None,
                      timeout: Optional[float] = None, poll_interval: float = 0.5,
                      batch_id: Union[str, Sequence[str], None] = None, batch_prefix: Optional[str] = None,
                      uid_prefix: Optional[str] = None,
                      on_dropped: Optional[Callable[[Mapping[str, Any]], None]] = None) -> Iterator[dict[str, Any]]:
        """Yields pulled groups one by one (inline samples) and acks each pull's lease.

        See ``edge_rollout.stream.stream_groups`` for exactly when the ack happens: after the
        consumer asks for the group that follows a pull's last one. A consumer that raises,
        breaks or closes the iterator acks nothing still open: those groups come back after
        ``lease_ms``. ``limit`` ends the stream cleanly after that many groups; ``timeout``
        raises ``StreamTimeout`` after that many seconds without a group. ``batch_id`` /
        ``batch_prefix`` / ``uid_prefix`` pull only those groups (see ``pull``); the named
        batches' dropped groups go to ``on_dropped`` (default: a warning) and count toward ``limit``.
        """
        return stream_groups(self, max_groups=max_groups, max_samples=max_samples, lease_ms=lease_ms,
                             min_policy_version=min_policy_version, training_mode=training_mode,
                             limit=limit, timeout=timeout, poll_interval=poll_interval,
                             batch_id=batch_id, batch_prefix=batch_prefix, uid_prefix=uid_prefix, on_dropped=on_dropped)

    # --- the policy and the weight-sync handshake ---------------------------------------------

    def policy(self) -> dict[str, Any]:
        """``GET /v1/policy``: ``{policy_version, model, backend, sampling, syncing, in_flight, …}``."""
        return self.request("GET", "/v1/policy")

    def begin_sync(self, wait_ms: Optional[int] = None, policy_version: Optional[int] = None) -> dict[str, Any]:
        """``POST /v1/policy/sync/begin``: new model calls are refused (429) until ``end_sync``.

        With ``wait_ms`` (0..600000) the answer comes once in-flight calls drained or the wait ran
        out; check ``in_flight`` in the answer before loading weights.
        """
        return self.request("POST", "/v1/policy/sync/begin", _drop_none({"wait_ms": wait_ms, "policy_version": policy_version}))

    def abort_sync(self) -> dict[str, Any]:
        """``POST /v1/policy/sync/abort``: ends the sync keeping the version it began under (the new
        weights failed to load); calls are admitted again. Raises ``ConflictError`` when no sync is under way."""
        return self.request("POST", "/v1/policy/sync/abort", {})

    def end_sync(self, version: int) -> dict[str, Any]:
        """``POST /v1/policy/sync/end``: the new weights are live as ``version`` (must be newer).

        Raises ``ConflictError`` when no sync is under way or ``version`` is not newer.
        """
        return self.request("POST", "/v1/policy/sync/end", {"policy_version": version})

    def health(self) -> bool:
        """True when ``GET /health`` answers 2xx."""
        try:
            req = urllib.request.Request(self.url + "/health", headers=self._headers)
            with urllib.request.urlopen(req, timeout=self.timeout) as response:
                return 200 <= response.status < 300
        except (urllib.error.URLError, OSError):
            return False
