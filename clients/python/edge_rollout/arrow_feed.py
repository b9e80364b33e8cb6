"""The binary feed: ``POST /v1/feed/pull`` answered as an Arrow IPC stream, decoded without copies.

The server sends the pulled samples (one row each, group → member → segment order) as one or
more record batches (a group read from its pack comes as the batch stored for it); token ids, mask and logprobs are ragged list columns, i.e. one flat little-endian buffer
plus offsets each. ``decode_arrow_pull`` views those buffers as numpy arrays in place
(``to_numpy`` on pyarrow's buffers, no copy; only the 1-bit mask is unpacked) and returns the
pull in the JSON pull's shape: each member's ``samples`` are ``SampleRef`` mappings whose list
fields are numpy slices of the flat buffers, so ``to_verl_batch`` pads straight from them.

pyarrow is optional: without it the client pulls JSON and says so once (``arrow_available``).
"""
from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from typing import Any, Iterator, Optional

#: The IANA media type of an Arrow IPC stream.
ARROW_MEDIA_TYPE = "application/vnd.apache.arrow.stream"
#: Schema metadata key of the pull's JSON part (lease, groups, members with ``first_sample``).
PULL_METADATA_KEY = b"edge_rollout.pull"

_warned = False


def arrow_available(warn: bool = True) -> bool:
    """Whether pyarrow is importable; without it (and ``warn``) warns once per process that pulls use JSON."""
    global _warned
    try:
        import pyarrow  # noqa: F401
        return True
    except ImportError:
        if warn and not _warned:
            _warned = True
            warnings.warn("pyarrow is not installed: edge_rollout pulls the feed as JSON, several times slower to decode "
                          "(python3 -m pip install pyarrow for the Arrow format)", RuntimeWarning, stacklevel=3)
        return False


class SampleColumns:
    """Every sample of one Arrow pull as flat numpy arrays (views of the response body).

    List fields are ``<name>_offsets`` (int32, len + 1) into ``<name>`` (the flat values):
    ``prompt_ids``, ``response_ids``, ``response_mask`` (uint8 0/1), ``response_logprobs``
    (float32, or float64 if a value needed it); the response fields share ``response_offsets``.
    Scalars are one array each (``sample_index``, ``segment_index``, ``reward_score``,
    ``num_turns``, ``policy_version_start`` / ``_end``); strings are lists (``uid``,
    ``rollout_id``, ``termination_reason``); ``extra_fields`` are parsed on first use.
    """

    def __init__(self, batch: Any):
        import numpy as np  # imported here: the client itself runs on the standard library alone

        def ragged(name: str) -> tuple[np.ndarray, np.ndarray]:
            column = batch.column(name)
            return column.offsets.to_numpy(), column.values.to_numpy(zero_copy_only=False)

        self.length = batch.num_rows
        self.prompt_offsets, self.prompt_ids = ragged("prompt_ids")
        self.response_offsets, self.response_ids = ragged("response_ids")
        mask_offsets, mask = ragged("response_mask")
        logprob_offsets, self.response_logprobs = ragged("response_logprobs")
        if not (np.array_equal(mask_offsets, self.response_offsets) and np.array_equal(logprob_offsets, self.response_offsets)):
            raise ValueError("response_mask / response_logprobs are not as long as response_ids in every row")
        self.response_mask = mask.view(np.uint8)
        for name in ("sample_index", "segment_index", "reward_score", "num_turns", "policy_version_start", "policy_version_end"):
            setattr(self, name, batch.column(name).to_numpy())
        self.uid = batch.column("uid").to_pylist()
        self.rollout_id = batch.column("rollout_id").to_pylist()
        self.termination_reason = batch.column("termination_reason").to_pylist()
        self._extra_text = batch.column("extra_fields").to_pylist()
        metadata = batch.schema.metadata or {}
        #: The TrainingSample version the table was written as (1 before the key existed).
        self.sample_version = int(metadata.get(b"edge_rollout.training_sample.schema_version", b"1"))
        self._extra: Optional[list[dict[str, Any]]] = None

    def __len__(self) -> int:
        return self.length

    @property
    def extra_fields(self) -> list[dict[str, Any]]:
        if self._extra is None:
            self._extra = [json.loads(text) for text in self._extra_text]
        return self._extra

    def row(self, i: int) -> "SampleRef":
        """Sample ``i`` as a read-only mapping over these arrays."""
        return SampleRef(self, i)


_SAMPLE_KEYS = ("schema_version", "uid", "sample_index", "rollout_id", "segment_index", "prompt_ids", "response_ids",
                "response_mask", "response_logprobs", "reward_score", "num_turns", "termination_reason",
                "policy_version", "extra_fields")


class SampleRef(Mapping):
    """One training sample of an Arrow pull: the TrainingSample's keys, list fields as numpy views.

    ``to_dict()`` gives the plain-Python sample, equal to what the JSON pull returns.
    """

    __slots__ = ("_columns", "_row")

    def __init__(self, columns: SampleColumns, row: int):
        self._columns, self._row = columns, row

    def __getitem__(self, key: str) -> Any:
        c, i = self._columns, self._row
        if key in ("prompt_ids",):
            return c.prompt_ids[c.prompt_offsets[i]:c.prompt_offsets[i + 1]]
        if key in ("response_ids", "response_mask", "response_logprobs"):
            return getattr(c, key)[c.response_offsets[i]:c.response_offsets[i + 1]]
        if key in ("sample_index", "segment_index", "num_turns"):
            return int(getattr(c, key)[i])
        if key == "reward_score":
            return float(c.reward_score[i])
        if key in ("uid", "rollout_id", "termination_reason"):
            return getattr(c, key)[i]
        if key == "policy_version":
            return {"start": int(c.policy_version_start[i]), "end": int(c.policy_version_end[i])}
        if key == "extra_fields":
            return c.extra_fields[i]
        if key == "schema_version":
            return c.sample_version
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(_SAMPLE_KEYS)

    def __len__(self) -> int:
        return len(_SAMPLE_KEYS)

    @property
    def columns(self) -> SampleColumns:
        """The pull's arrays this sample is a row of."""
        return self._columns

    @property
    def row_index(self) -> int:
        """This sample's row in ``columns``."""
        return self._row

    def to_dict(self) -> dict[str, Any]:
        """The sample as plain Python values (lists, ints, floats), as the JSON pull has it."""
        return {key: value.tolist() if hasattr(value, "tolist") else value for key, value in self.items()}

    def __repr__(self) -> str:
        return f"SampleRef(rollout_id={self['rollout_id']!r}, segment_index={self['segment_index']})"


def decode_arrow_pull(raw: bytes) -> dict[str, Any]:
    """An Arrow pull body as the JSON pull's dict (``lease_id``, ``groups`` with members'
    ``samples`` as ``SampleRef`` lists, ``returned_groups``, …) plus ``columns``: the
    ``SampleColumns`` of every sample (one combined record batch: several batches are joined
    once, a single one is viewed without a copy)."""
    import pyarrow as pa

    reader = pa.ipc.open_stream(pa.py_buffer(raw))
    table = reader.read_all()
    meta = json.loads(table.schema.metadata[PULL_METADATA_KEY])
    batches = table.combine_chunks().to_batches()
    empty = pa.record_batch([pa.array([], type=field.type) for field in table.schema], schema=table.schema)
    columns = SampleColumns(batches[0] if batches else empty)
    for group in meta["groups"]:
        for member in group["members"]:
            first = member.pop("first_sample")
            member["samples"] = [SampleRef(columns, row) for row in range(first, first + member["samples"])]
    meta.pop("samples", None)
    meta["columns"] = columns
    return meta
