"""A loopback HTTP server for tests that answers every GET and POST with fixed bytes."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional


def serve_fixed(body: bytes, host: str = "127.0.0.1", paths: Optional[list[str]] = None) -> ThreadingHTTPServer:
    """Starts a server on ``host`` (a free port) answering ``body``; each request's path is appended to ``paths``.
    Stop it with ``shutdown()`` then ``server_close()``."""

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            if paths is not None:
                paths.append(self.path)
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = _answer
        do_POST = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer((host, 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return server
