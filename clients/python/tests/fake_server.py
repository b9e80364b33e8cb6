"""A scripted HTTP server on 127.0.0.1 for unit tests of the wire client (http.server, a thread)."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional

#: A route answers (status, JSON body or raw bytes, extra headers).
Reply = tuple[int, Any, dict[str, str]]
Route = Callable[[Any], Reply]


class FakeServer:
    """Routes ``(METHOD, path)`` to functions of the decoded JSON body; records every request."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], Route] = {}
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                server.requests.append({"method": self.command, "path": self.path, "body": body, "headers": {k.lower(): v for k, v in self.headers.items()}})
                route = server.routes.get((self.command, self.path))
                status, payload, headers = route(body) if route else (404, {"title": "NotFound", "detail": self.path}, {})
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                kind = "application/json" if status < 400 else "application/problem+json"
                self.send_header("content-type", headers.pop("content-type", kind))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = _serve

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()

    def route(self, method: str, path: str, handler: Route) -> None:
        """Answers ``method path`` with ``handler(body)``."""
        self.routes[(method, path)] = handler

    def bodies(self, method: str, path: str) -> list[Any]:
        """The JSON bodies of the requests to ``method path``, in order."""
        return [r["body"] for r in self.requests if r["method"] == method and r["path"] == path]

    def close(self) -> None:
        """Stops serving (idempotent)."""
        if self._thread.is_alive():
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join()


class FakeFeed:
    """The feed routes of a FakeServer: scripted pulls, recorded acks, optional refused leases."""

    def __init__(self, server: FakeServer, pulls: Optional[list[dict[str, Any]]] = None) -> None:
        self.pulls = list(pulls or [])
        self.acked: list[str] = []
        self.refuse: set[str] = set()
        server.route("POST", "/v1/feed/pull", self._pull)
        server.route("POST", "/v1/feed/ack", self._ack)

    def _pull(self, body: Any) -> Reply:
        if not self.pulls:
            return 200, {"lease_id": None, "lease_expires_at": None, "policy_version": 0, "dropped_stale": 0, "groups": []}, {}
        nxt = self.pulls.pop(0)
        return 200, nxt(body) if callable(nxt) else nxt, {}

    def _ack(self, body: Any) -> Reply:
        lease = body["lease_id"]
        if lease in self.refuse:
            detail = f"lease {lease} expired; its groups will be delivered again"
            return 409, {"type": "urn:edge-rollout:problem:conflict", "title": "ConflictError", "status": 409,
                         "detail": detail, "errors": [{"path": "lease_id", "message": detail}]}, {}
        self.acked.append(lease)
        return 200, {"lease_id": lease, "acked_groups": 1, "already": False}, {}


def pulled(lease_id: str, *groups: dict[str, Any]) -> dict[str, Any]:
    """A pull answer holding ``groups`` under ``lease_id``."""
    return {"lease_id": lease_id, "lease_expires_at": 0, "policy_version": 0, "dropped_stale": 0, "groups": list(groups)}


def sample(uid: str, index: int, prompt: list[int], response: list[int], reward: float = 1.0, **extra: Any) -> dict[str, Any]:
    """A TrainingSample dict (mask all 1, logprob -0.5 per response token) with ``extra`` fields."""
    return {"schema_version": 1, "uid": uid, "sample_index": index, "rollout_id": f"{uid}:{index}", "segment_index": 0,
            "prompt_ids": prompt, "response_ids": response, "response_mask": [1] * len(response),
            "response_logprobs": [-0.5] * len(response), "reward_score": reward, "num_turns": 2,
            "termination_reason": "ENV_DONE", "policy_version": {"start": 0, "end": 0}, "extra_fields": dict(extra)}


def group(uid: str, samples: list[dict[str, Any]], size: Optional[int] = None) -> dict[str, Any]:
    """A pulled group whose members each hold one of ``samples`` (by their sample_index)."""
    members = [{"rollout_id": s["rollout_id"], "sample_index": s["sample_index"], "status": "succeeded",
                "termination_reason": "ENV_DONE", "reward": s["reward_score"], "policy_version_start": 0,
                "policy_version_end": 0, "key": f"rollouts/{s['rollout_id']}/record.json", "samples": [s]} for s in samples]
    return {"uid": uid, "training_mode": "verl/hybrid", "group_size": size or len(samples), "policy_version_start": 0,
            "policy_version_end": 0, "partial": False, "deliveries": 1, "members": members}
