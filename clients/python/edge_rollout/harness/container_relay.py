"""A loopback TCP relay to the gateway, so the harness can run in a network namespace inside a sandbox too.

In a sandbox the gateway is reached at a name the egress intercept serves (``http://gateway.internal``),
not on loopback, and ``netns.run_harness`` only isolates a CLI whose gateway is on loopback (nothing
resolves names inside the namespace). This relay listens on ``127.0.0.1:<free port>`` and copies
each connection's bytes to the gateway's address, so the CLI gets a loopback base URL and the
namespace path works unchanged. The intercept routes on the request path, not the Host header
(deploy/harness-sandbox/harness-egress.ts), so the relayed requests reach the same gateway.
"""
from __future__ import annotations

import logging
import socket
import threading
from typing import Optional
from urllib.parse import urlsplit, urlunsplit

from .netns import LOOPBACK_HOSTS, gateway_address
from .ns_entry import relay

log = logging.getLogger("edge_rollout.harness")
CONNECT_TIMEOUT_S = 10.0


def needs_relay(base_url: str) -> bool:
    """Whether ``base_url`` is a plain-HTTP gateway off loopback (HTTPS cannot be relayed: its certificate names the host)."""
    parts = urlsplit(base_url)
    return parts.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS


def relayed_url(base_url: str, port: int) -> str:
    """``base_url`` with its origin replaced by ``http://127.0.0.1:<port>`` (path and query kept)."""
    parts = urlsplit(base_url)
    return urlunsplit(("http", f"127.0.0.1:{port}", parts.path, parts.query, parts.fragment))


class LoopbackRelay:
    """Listens on 127.0.0.1 (``port`` after ``__enter__``) and relays each connection to ``target``.

    Example::

        with LoopbackRelay(("gateway.internal", 80)) as r:
            url = relayed_url("http://gateway.internal/v1/rollouts/r1/attempts/1/llm/v1", r.port)
    """

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.port = 0
        self._server: Optional[socket.socket] = None

    @classmethod
    def for_url(cls, base_url: str) -> "LoopbackRelay":
        """A relay to ``base_url``'s host and port."""
        return cls(gateway_address(base_url))

    def __enter__(self) -> "LoopbackRelay":
        server = socket.create_server(("127.0.0.1", 0))
        self.port = server.getsockname()[1]
        self._server = server
        threading.Thread(target=self._accept, name="gateway-loopback-relay", daemon=True).start()
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    def reachable(self) -> bool:
        """Whether the target accepts a TCP connection now (checked before the harness is pointed here)."""
        try:
            socket.create_connection(self.target, timeout=CONNECT_TIMEOUT_S).close()
            return True
        except OSError as error:
            log.warning("gateway %s:%s is not reachable for the loopback relay: %s", *self.target, error)
            return False

    def _accept(self) -> None:
        server = self._server
        while server is not None:
            try:
                client, _addr = server.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._connect, args=(client,), daemon=True).start()

    def _connect(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self.target, timeout=CONNECT_TIMEOUT_S)
        except OSError as error:
            log.warning("loopback relay could not reach %s:%s: %s", *self.target, error)
            client.close()
            return
        upstream.settimeout(None)  # model calls stream for minutes; the harness's own wall clock bounds them
        relay(client, upstream)
