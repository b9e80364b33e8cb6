"""The policy: a small causal transformer over Qwen3's token ids, restricted to the ids its task needs.

Inputs are any Qwen3 ids (hashed into ``buckets`` embedding rows); outputs are logits over
``out_ids`` only, so its distribution is exactly zero elsewhere and the log-probs it reports are
exact for that distribution. The engine and the trainer both call ``forward`` on left-padded
batches with ``position_ids = cumsum(attention_mask) - 1`` (what verl's actor feeds
``compute_log_prob``), in fp32 with one torch thread, so the same weights give the same numbers.
Attention is written out (no fused kernels) so that inference and training take one code path.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

import torch
from torch import nn


@dataclass(frozen=True)
class PolicyConfig:
    """The architecture; a checkpoint carries it and a reload must match it."""

    out_ids: tuple[int, ...]
    dim: int = 64
    layers: int = 2
    heads: int = 4
    buckets: int = 8192
    max_positions: int = 2048

    def to_dict(self) -> dict:
        data = asdict(self)
        data["out_ids"] = list(self.out_ids)
        return data

    @staticmethod
    def from_dict(data: dict) -> "PolicyConfig":
        return PolicyConfig(**{**data, "out_ids": tuple(int(i) for i in data["out_ids"])})


class _Block(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        b, length, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(dim, dim=-1)
        shape = (b, length, self.heads, dim // self.heads)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-1, -2) / math.sqrt(dim // self.heads) + bias
        attended = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, length, dim)
        x = x + self.proj(attended)
        return x + self.mlp(self.norm2(x))


class TinyPolicy(nn.Module):
    """The causal LM; ``forward`` answers logits over ``config.out_ids`` at every position."""

    def __init__(self, config: PolicyConfig):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.buckets, config.dim)
        self.position = nn.Embedding(config.max_positions, config.dim)
        self.blocks = nn.ModuleList(_Block(config.dim, config.heads) for _ in range(config.layers))
        self.norm = nn.LayerNorm(config.dim)
        self.head = nn.Linear(config.dim, len(config.out_ids))
        self.register_buffer("out_ids", torch.tensor(config.out_ids, dtype=torch.long), persistent=False)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(input_ids % self.config.buckets) + self.position(position_ids.clamp(min=0))
        length = input_ids.shape[1]
        causal = torch.ones(length, length, dtype=torch.bool).tril()
        allowed = causal[None, None] & attention_mask.bool()[:, None, None, :]
        # A large negative, not -inf: a padding row with nothing to attend to stays finite (it is never read).
        bias = torch.zeros(allowed.shape, dtype=x.dtype).masked_fill(~allowed, -1e9)
        for block in self.blocks:
            x = block(x, bias)
        return self.head(self.norm(x))

    def out_index(self, token_ids: torch.Tensor) -> torch.Tensor:
        """Each id's column in the logits (-1 where the policy cannot emit it)."""
        table = torch.full((int(self.out_ids.max()) + 1,), -1, dtype=torch.long)
        table[self.out_ids] = torch.arange(len(self.out_ids))
        inside = token_ids <= table.shape[0] - 1
        return torch.where(inside, table[token_ids.clamp(max=table.shape[0] - 1)], torch.full_like(token_ids, -1))


def left_pad(sequences: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``input_ids``, ``attention_mask`` and ``position_ids`` of sequences left-padded to one length."""
    length = max(len(s) for s in sequences)
    ids = torch.zeros(len(sequences), length, dtype=torch.long)
    mask = torch.zeros(len(sequences), length, dtype=torch.long)
    for row, sequence in enumerate(sequences):
        if sequence:
            ids[row, length - len(sequence):] = torch.tensor(list(sequence), dtype=torch.long)
            mask[row, length - len(sequence):] = 1
    return ids, mask, positions_of(mask)


def positions_of(attention_mask: torch.Tensor) -> torch.Tensor:
    """verl's positions for a left-padded batch: the cumulative mask minus one (0 under padding)."""
    return (attention_mask.cumsum(-1) - 1).clamp(min=0)


def set_one_thread() -> None:
    """One torch thread: the engine and trainer share 2 cores with workerd, and results must not depend on threading."""
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # set already, or parallel work has started: the intra-op threads are what matter
        pass


def create_policy(out_ids: Sequence[int], seed: int = 0, **sizes: int) -> TinyPolicy:
    """A freshly initialised policy (seeded: the same seed gives the same weights)."""
    torch.manual_seed(seed)
    return TinyPolicy(PolicyConfig(out_ids=tuple(int(i) for i in out_ids), **sizes)).eval()
