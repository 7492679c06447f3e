"""Projection heads between the pooled sentence vector and the contrastive loss (training only by default).

- `mlp`: SimCSE's MLPLayer, dense + tanh (d -> d). Saved into the backbone's pooler layer (BERT) so that
  `--pooler cls` evaluates with it, as SimCSE's released checkpoints do.
- `vascl`: VaSCL's head as its paper sizes it and its code builds it: d x d then d x 128 (ReLU between), no
  biases (amazon-research/sentence-representations, VaSCL/models/Transformers.py: `bias=False`).
- `two_layer`: the same shapes with biases (what `vascl` used before it was checked against VaSCL's code; kept
  for runs and configurations that name it).
- `batchnorm`: DiffCSE's projector used by AugCSE: linear(d, 2d) + BN + ReLU + linear(2d, d) + BN (no affine).
- `none`: the pooled vector itself.
"""
from __future__ import annotations

from torch import nn


class MLP(nn.Module):
    """SimCSE's MLPLayer: dense + tanh over the pooled vector."""

    def __init__(self, hidden_size: int):
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.activation = nn.Tanh()

    def forward(self, x):
        return self.activation(self.dense(x))


def two_layer(hidden_size: int, out_size: int = 128, bias: bool = True) -> nn.Module:
    return nn.Sequential(nn.Linear(hidden_size, hidden_size, bias=bias), nn.ReLU(),
                         nn.Linear(hidden_size, out_size, bias=bias))


def batchnorm_projector(hidden_size: int) -> nn.Module:
    return nn.Sequential(nn.Linear(hidden_size, 2 * hidden_size, bias=False), nn.BatchNorm1d(2 * hidden_size),
                         nn.ReLU(), nn.Linear(2 * hidden_size, hidden_size, bias=False),
                         nn.BatchNorm1d(hidden_size, affine=False))


HEADS = ("mlp", "vascl", "two_layer", "batchnorm", "none")


def build_head(name: str, hidden_size: int) -> nn.Module | None:
    if name == "mlp":
        return MLP(hidden_size)
    if name == "vascl":
        return two_layer(hidden_size, bias=False)
    if name == "two_layer":
        return two_layer(hidden_size)
    if name == "batchnorm":
        return batchnorm_projector(hidden_size)
    if name == "none":
        return None
    raise ValueError(f"unknown head '{name}'; choose from {', '.join(HEADS)}")
