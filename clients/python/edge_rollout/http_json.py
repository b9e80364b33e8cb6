"""Answering JSON from the package's small stdlib HTTP servers (the learning engine, the harness container's control port)."""
from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any


def send_json(handler: BaseHTTPRequestHandler, status: int, body: Any) -> None:
    """Writes ``body`` as the JSON answer with ``status`` and its length."""
    data = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)
