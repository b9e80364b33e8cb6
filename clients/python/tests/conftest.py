"""Shared fixtures: a fake HTTP server on loopback, its feed routes, a client for it, and the real local stack."""
from __future__ import annotations

from typing import Iterator

import pytest

from edge_rollout import Client
from fake_server import FakeFeed, FakeServer
from live_stack import run_stack


@pytest.fixture(scope="session")
def stack() -> Iterator[str]:
    """The URL of a local stack started once for the session (skipped, with the reason, when node or node_modules is missing)."""
    yield from run_stack()


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    yield fake
    fake.close()


@pytest.fixture
def feed(server: FakeServer) -> FakeFeed:
    return FakeFeed(server)


@pytest.fixture
def client(server: FakeServer) -> Client:
    return Client(server.url, timeout=5.0)
