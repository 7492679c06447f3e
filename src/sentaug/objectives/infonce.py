"""InfoNCE over cosine similarities: the contrastive objective shared by every method."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class InfoNCE(nn.Module):
    """SimCSE's loss: cross-entropy over cos(z1_i, z2_j) / tau with target j = i, in one direction.

    Every other positive in the batch is a negative for anchor i. Extra negatives (`negatives`: one vector
    per anchor, e.g. a retrieved hard negative, or a shared bank) add a column block, as in SimCSE's
    supervised variant.
    """

    def __init__(self, temperature: float = 0.05):
        super().__init__()
        self.temperature = temperature

    def logits(self, z1: torch.Tensor, z2: torch.Tensor, negatives: torch.Tensor | None = None) -> torch.Tensor:
        a = F.normalize(z1.float(), dim=-1)
        sim = a @ F.normalize(z2.float(), dim=-1).T
        if negatives is not None:
            sim = torch.cat([sim, a @ F.normalize(negatives.float(), dim=-1).T], dim=1)
        return sim / self.temperature

    def forward(self, z1: torch.Tensor, z2: torch.Tensor, negatives: torch.Tensor | None = None) -> torch.Tensor:
        logits = self.logits(z1, z2, negatives)
        return F.cross_entropy(logits, torch.arange(len(z1), device=logits.device))
