"""Saving and loading the policy's weights, with every check a reload needs.

A checkpoint is one ``torch.save`` file: ``{"format": 1, "config": PolicyConfig, "state_dict": ...}``,
read back with ``weights_only=True``. ``load_checkpoint`` refuses (``CheckpointError``, naming what is
wrong) a file that is missing, truncated or not a checkpoint, one whose architecture or tensor
shapes differ from the expected config, or one holding a non-finite weight; it builds a fresh model,
so a refused load never touches the model being served.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import torch

from .policy import PolicyConfig, TinyPolicy

FORMAT = 1


class CheckpointError(ValueError):
    """A checkpoint that cannot be loaded; the message says why."""


def save_checkpoint(model: TinyPolicy, path: str | os.PathLike) -> None:
    """Writes ``model``'s weights to ``path`` atomically (a temporary file renamed into place)."""
    target = Path(path)
    partial = target.with_name(target.name + ".partial")
    torch.save({"format": FORMAT, "config": model.config.to_dict(), "state_dict": model.state_dict()}, partial)
    os.replace(partial, target)


def load_checkpoint(path: str | os.PathLike, expected: Optional[PolicyConfig] = None) -> TinyPolicy:
    """A new model with the weights at ``path``; ``expected`` (the served model's config) must match."""
    file = Path(path)
    if not file.is_file():
        raise CheckpointError(f"no checkpoint at {file}")
    try:
        data = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as error:  # a truncated or foreign file fails inside torch's unpickler
        raise CheckpointError(f"{file} is not a readable checkpoint ({type(error).__name__}: {error})") from error
    if not isinstance(data, dict) or data.get("format") != FORMAT or "state_dict" not in data:
        raise CheckpointError(f"{file} is not a checkpoint of format {FORMAT}")
    try:
        config = PolicyConfig.from_dict(data["config"])
    except (TypeError, KeyError, ValueError) as error:
        raise CheckpointError(f"{file} has no valid config: {error}") from error
    if expected is not None and config != expected:
        raise CheckpointError(f"{file} holds another architecture: {config.to_dict()} (serving {expected.to_dict()})")
    model = TinyPolicy(config)
    own = model.state_dict()
    state = data["state_dict"]
    missing = sorted(set(own) - set(state))
    extra = sorted(set(state) - set(own))
    if missing or extra:
        raise CheckpointError(f"{file}: missing tensors {missing[:5]}, unexpected tensors {extra[:5]}")
    for name, tensor in state.items():
        if not isinstance(tensor, torch.Tensor) or tensor.shape != own[name].shape:
            shape = tuple(tensor.shape) if isinstance(tensor, torch.Tensor) else type(tensor).__name__
            raise CheckpointError(f"{file}: {name} has shape {shape}, expected {tuple(own[name].shape)}")
        if not torch.isfinite(tensor).all():
            raise CheckpointError(f"{file}: {name} holds a non-finite value")
    model.load_state_dict(state, strict=True)
    model.eval()
    return model
