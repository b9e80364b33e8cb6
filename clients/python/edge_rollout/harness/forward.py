"""The host end of the gateway forwarder: a Unix socket whose connections are relayed to the gateway's TCP address.

Its other end is the listener ``ns_entry.py`` starts inside the namespace on the gateway's own
port. A Unix socket is a file, so it crosses the network namespace boundary where TCP cannot; and
it reaches exactly one address, the gateway's.
"""
from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from typing import Optional

from .ns_entry import relay

log = logging.getLogger("edge_rollout.harness")


class GatewayRelay:
    """Accepts on the Unix socket ``path`` and connects each connection to ``(host, port)``.

    Example::

        with GatewayRelay("/tmp/er-harness-x/run/gateway.sock", ("127.0.0.1", 8787)):
            ...  # processes in the namespace reach the gateway through the socket
    """

    def __init__(self, path: str, target: tuple[str, int]):
        self.path = path
        self.target = target
        self.connections = 0
        self._server: Optional[socket.socket] = None
        self._thread: Optional[threading.Thread] = None

    def __enter__(self) -> "GatewayRelay":
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(self.path)
        os.chmod(self.path, 0o600)
        server.listen(64)
        self._server = server
        self._thread = threading.Thread(target=self._accept, name="harness-gateway-relay", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stops accepting and removes the socket file (open connections end with their peers)."""
        server, self._server = self._server, None
        if server is not None:
            # shutdown() wakes the accept() blocked on another thread; close() alone does not on Linux.
            with contextlib.suppress(OSError):
                server.shutdown(socket.SHUT_RDWR)
            server.close()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    def _accept(self) -> None:
        while True:
            server = self._server
            if server is None:
                return
            try:
                client, _ = server.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._connect, args=(client,), daemon=True).start()

    def _connect(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self.target, timeout=30)
        except OSError as error:
            log.warning("gateway %s:%s unreachable from the forwarder: %s", *self.target, error)
            client.close()
            return
        upstream.settimeout(None)
        relay(client, upstream)
