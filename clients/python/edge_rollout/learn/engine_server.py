"""The policy as the simulator's external token source (docs/vllm.md, "The external token source protocol").

    python3 -m edge_rollout.learn.engine_server --checkpoint policy.pt [--port 8100]
        [--logprobs-mode raw_logprobs|processed_logprobs] [--weight-version 0]

then ``npm run simulator -- --token-source-url http://127.0.0.1:8100``: the simulator keeps vLLM's
wire (tokenizer, template, parsers, streaming, errors) and asks this process for each step's tokens.
``POST /weights/load`` swaps in new weights atomically: the server handles one request at a time, so
a load lands between two steps, and a refused file (missing, truncated, another shape) leaves the
served weights as they were.
"""
from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import torch

from ..http_json import send_json
from .checkpoint import CheckpointError, load_checkpoint
from .policy import set_one_thread
from .sampling import LOGPROBS_MODES, step


class EngineState:
    """The served weights, their version and the log-prob mode."""

    def __init__(self, checkpoint: str, logprobs_mode: str, weight_version: int):
        self.model = load_checkpoint(checkpoint)
        self.logprobs_mode = logprobs_mode
        self.weight_version = weight_version
        self.generator = torch.Generator().manual_seed(weight_version)

    def load(self, path: str, version: int) -> None:
        model = load_checkpoint(path, expected=self.model.config)  # raises before anything changes
        self.model, self.weight_version = model, version


class BadRequest(ValueError):
    """A request the protocol does not allow; the message names the field."""


def _sequences(body: Any) -> list[dict[str, Any]]:
    if not isinstance(body, dict) or not isinstance(body.get("sequences"), list):
        raise BadRequest("sequences: expected a list")
    for i, sequence in enumerate(body["sequences"]):
        for name in ("prompt_ids", "output_ids"):
            ids = sequence.get(name) if isinstance(sequence, dict) else None
            if not isinstance(ids, list) or not all(isinstance(t, int) and t >= 0 for t in ids):
                raise BadRequest(f"sequences.{i}.{name}: expected a list of token ids")
        if not isinstance(sequence.get("sampling"), dict):
            raise BadRequest(f"sequences.{i}.sampling: expected an object")
        if not sequence["prompt_ids"] and not sequence["output_ids"]:
            raise BadRequest(f"sequences.{i}.prompt_ids: must not be empty")
    return body["sequences"]


def handler_for(state: EngineState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet: the simulator logs requests
            pass

        def _send(self, status: int, body: dict[str, Any]) -> None:
            send_json(self, status, body)

        def _body(self) -> Any:
            length = int(self.headers.get("content-length") or 0)
            try:
                return json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError as error:
                raise BadRequest(f"body: not JSON ({error})") from error

        def do_GET(self) -> None:
            if self.path == "/weights":
                return self._send(200, {"weight_version": state.weight_version})
            if self.path == "/health":
                return self._send(200, {"ok": True})
            self._send(404, {"error": f"no route GET {self.path}"})

        def do_POST(self) -> None:
            try:
                if self.path == "/step":
                    sequences = _sequences(self._body())
                    tokens = step(state.model, sequences, state.logprobs_mode, state.generator) if sequences else []
                    return self._send(200, {"tokens": tokens, "weight_version": state.weight_version})
                if self.path == "/weights/load":
                    body = self._body()
                    path, version = body.get("path"), body.get("weight_version")
                    if not isinstance(path, str) or not path:
                        raise BadRequest("path: expected the checkpoint's path")
                    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
                        raise BadRequest("weight_version: expected an integer >= 0")
                    state.load(path, version)
                    return self._send(200, {"weight_version": state.weight_version})
                self._send(404, {"error": f"no route POST {self.path}"})
            except (BadRequest, CheckpointError) as error:
                self._send(400, {"error": str(error)})

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8100)
    parser.add_argument("--logprobs-mode", choices=LOGPROBS_MODES, default="raw_logprobs")
    parser.add_argument("--weight-version", type=int, default=0)
    args = parser.parse_args(argv)
    set_one_thread()
    try:
        state = EngineState(args.checkpoint, args.logprobs_mode, args.weight_version)
    except CheckpointError as error:
        print(f"engine: {error}", file=sys.stderr)
        return 2
    server = HTTPServer((args.host, args.port), handler_for(state))
    print(f"edge-rollout policy engine: http://{args.host}:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
