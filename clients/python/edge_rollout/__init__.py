"""Python client for edge-rollout: submit batches, pull GRPO groups, pad them for verl.

The wire client needs only the standard library; ``to_verl_batch`` needs numpy; torch is used
when installed and asked for; ``edge_rollout.verl`` works with or without verl installed.
"""
from .batching import VerlBatch, samples_of, to_verl_batch
from .client import DEFAULT_LEASE_MS, Client
from .errors import (ConflictError, EdgeRolloutError, GroupsDropped, InvalidInputError, NotFoundError, ProblemError,
                     StreamTimeout, SyncingError, TransportError, UnauthorizedError)

__version__ = "0.1.0"

__all__ = ["Client", "DEFAULT_LEASE_MS", "VerlBatch", "samples_of", "to_verl_batch", "EdgeRolloutError", "ProblemError",
           "InvalidInputError", "UnauthorizedError", "NotFoundError", "ConflictError", "SyncingError", "TransportError",
           "StreamTimeout", "GroupsDropped"]
