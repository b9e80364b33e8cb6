"""Shared fixtures: a fake HTTP server on loopback, its feed routes, and a client for it."""
from __future__ import annotations

from typing import Iterator

import pytest

from edge_rollout import Client
from fake_server import FakeFeed, FakeServer


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
