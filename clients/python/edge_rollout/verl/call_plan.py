"""How one ``generate_sequences`` call of verl's trainer maps onto an edge-rollout batch.

Read from verl's source at the commit pinned in ``docs/verl.md``:

* a train step passes the batch repeated ``rollout.n`` times, interleaved, so copies of one prompt
  are adjacent and share its ``uid`` (ray_trainer.py:1374-1385);
* REMAX's baseline call passes the **un-repeated** batch with ``do_sample=False`` (1404-1416);
* validation repeats by ``val_kwargs.n`` and then pads the batch to a multiple of
  ``rollout.agent.num_workers`` by appending copies of its first rows (ray_trainer.py:597-604,
  protocol.py:73-98), and ``unpad_dataproto`` drops them again after the call;
* ``uid`` is always set before the call (1374 for training, 568-571 for validation).

So the group size is read from the input itself: the length of each run of equal ``uid`` s; a run
whose uid was already seen is a padding row (answered by copying the row it duplicates, never
rolled out). Without a uid column every ``n`` consecutive rows form a group and trailing rows
equal to the leading ones are padding.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence


@dataclass
class CallPlan:
    """``groups`` distinct prompts (the input row of each) × ``n`` samples, then ``padding`` copied rows."""

    first_rows: list[int]
    n: int
    padding: int

    @property
    def rolled_out(self) -> int:
        """Rows answered by a rollout."""
        return len(self.first_rows) * self.n


def plan_call(uids: Optional[Sequence[Any]], rows: Sequence[Mapping[str, Any]], default_n: int) -> CallPlan:
    """The plan of one call (see the module doc). Raises ValueError for an input verl would never
    pass: runs of unequal length, or a row count that no padding explains."""
    total = len(rows)
    if total == 0:
        return CallPlan([], default_n, 0)
    if uids is not None and len(uids) == total:
        keys = [str(uid) for uid in uids]
        return _plan_by_hint(keys, default_n) or _plan_by_uid(keys)
    for padding in range(0, total):
        body = total - padding
        if body % default_n == 0 and list(rows[body:]) == list(rows[:padding]):
            return CallPlan(list(range(0, body, default_n)), default_n, padding)
    raise ValueError(f"prompts has {total} rows, not a multiple of n={default_n} plus padding rows")


def _plan_by_hint(uids: list[str], n: int) -> Optional[CallPlan]:
    """Groups of ``n`` equal uids, each new, then copies of the first rows; None when the uids say otherwise.
    Needed when padding copies continue the last group's run (one prompt, val_n 3, 8 workers)."""
    firsts: list[int] = []
    seen: set[str] = set()
    i = 0
    while i + n <= len(uids) and uids[i] not in seen and len(set(uids[i:i + n])) == 1:
        seen.add(uids[i])
        firsts.append(i)
        i += n
    padding = len(uids) - i
    if not firsts or uids[i:] != uids[:padding] or padding >= len(uids):
        return None
    return CallPlan(firsts, n, padding)


def _plan_by_uid(uids: list[str]) -> CallPlan:
    runs: list[tuple[int, int]] = []  # (first row, length)
    seen: set[str] = set()
    i = 0
    while i < len(uids):
        j = i
        while j < len(uids) and uids[j] == uids[i]:
            j += 1
        if uids[i] in seen:
            break  # padding starts here: copies of the first rows
        seen.add(uids[i])
        runs.append((i, j - i))
        i = j
    lengths = {length for _, length in runs}
    if len(lengths) != 1:
        raise ValueError(f"prompts has uid runs of lengths {sorted(lengths)}; verl repeats every prompt n times, interleaved")
    n = lengths.pop()
    padding = len(uids) - i
    if uids[i:] != uids[:padding]:
        raise ValueError("rows after the last group are not copies of the first rows (verl's validation padding)")
    return CallPlan([first for first, _ in runs], n, padding)


def sampling_config(rollout: Any, meta: Mapping[str, Any], base: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """The RolloutConfig for a call: ``base`` with verl's sampling for it. Training uses
    ``rollout.temperature`` / ``top_p``; validation ``val_kwargs`` (agent_loop.py:427-440); a call
    with ``do_sample=False`` (REMAX's baseline, or ``val_kwargs.do_sample=False``) samples greedily."""
    config = dict(base or {})
    source = _get(rollout, "val_kwargs") if meta.get("validate") else rollout
    for key in ("temperature", "top_p"):
        value = _get(source, key)
        if value is not None:
            config.setdefault(key, float(value))
    if meta.get("do_sample") is False:
        config["temperature"] = 0.0
    return config


def _get(node: Any, key: str) -> Any:
    """``node.key`` or ``node[key]`` (an OmegaConf node, a dataclass, a dict), or None."""
    if node is None:
        return None
    if isinstance(node, Mapping):
        return node.get(key)
    return getattr(node, key, None)


def call_kind(meta: Mapping[str, Any]) -> str:
    """``val``, ``greedy`` (REMAX's baseline) or ``train``: part of the batch id and its mode."""
    if meta.get("validate"):
        return "val"
    return "greedy" if meta.get("do_sample") is False else "train"
