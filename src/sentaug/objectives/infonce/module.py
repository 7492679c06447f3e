"""Contrastive objectives over cosine similarities: SimCSE's InfoNCE and the symmetric NT-Xent.

Both take the two views of a batch, z1 (anchors) and z2 (positives), row i of one being the positive of row
i of the other. Logits are computed in float32 whatever the autocast dtype.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def cosine_matrix(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.normalize(a.float(), dim=-1) @ F.normalize(b.float(), dim=-1).T


class InfoNCE(nn.Module):
    """SimCSE's loss: cross-entropy over cos(z1_i, z2_j) / tau with target j = i, in one direction.

    Every other positive in the batch is a negative for anchor i. Extra negatives (`negatives`, e.g. CARDS's
    retrieved sentences) add a column block shared by the whole batch; `negative_mask` (bool, [B, N], True =
    drop) removes columns that are the anchor's own sentence. `symmetric=True` averages the loss of both
    directions (rows and columns), as CLIP and AugCSE's "positive" variant do.
    """

    def __init__(self, temperature: float = 0.05, symmetric: bool = False):
        super().__init__()
        self.temperature = temperature
        self.symmetric = symmetric

    def logits(self, z1: torch.Tensor, z2: torch.Tensor, negatives: torch.Tensor | None = None,
               negative_mask: torch.Tensor | None = None) -> torch.Tensor:
        sim = cosine_matrix(z1, z2)
        if negatives is not None:
            extra = cosine_matrix(z1, negatives)
            if negative_mask is not None:
                extra = extra.masked_fill(negative_mask, float("-inf"))
            sim = torch.cat([sim, extra], dim=1)
        return sim / self.temperature

    def forward(self, z1: torch.Tensor, z2: torch.Tensor, negatives: torch.Tensor | None = None,
                negative_mask: torch.Tensor | None = None) -> torch.Tensor:
        logits = self.logits(z1, z2, negatives, negative_mask)
        target = torch.arange(len(z1), device=logits.device)
        loss = F.cross_entropy(logits, target)
        if self.symmetric:
            loss = (loss + F.cross_entropy(logits[:, :len(z2)].T, target)) / 2
        return loss


class NTXent(nn.Module):
    """SimCLR's NT-Xent over the 2M views (VaSCL eq. 1, CLEAR eq. 1-2): each view's positive is its twin;
    the other 2M - 2 views, of either side, are negatives; averaged over all 2M anchors (both directions)."""

    def __init__(self, temperature: float = 0.05):
        super().__init__()
        self.temperature = temperature

    def forward(self, z1: torch.Tensor, z2: torch.Tensor) -> torch.Tensor:
        z = torch.cat([z1, z2])
        m = len(z1)
        sim = cosine_matrix(z, z) / self.temperature
        sim = sim.masked_fill(torch.eye(2 * m, dtype=torch.bool, device=sim.device), float("-inf"))
        target = torch.cat([torch.arange(m, 2 * m, device=sim.device), torch.arange(0, m, device=sim.device)])
        return F.cross_entropy(sim, target)
