"""VaSCL's neighbourhood-constrained instance discrimination with virtual augmentation (eq. 2-6).

For a batch of sentence representations e (before the head h):
1. N(i): the K nearest in-batch neighbours of e_i (cosine, self excluded; the official code ranks by raw
   inner product: `similarity="dot"`).
2. delta_i* = argmax_{||delta|| <= Delta} l_N(i)(h(e_i + delta), h(e_i))  (eq. 2-3), by `steps` normalised
   gradient steps from isotropic Gaussian noise (one step: delta* = Delta * g / ||g||, as the official code;
   more steps: projected ascent with step 2.5 * Delta / steps). The search itself never updates the model.
3. e_i* = e_i + delta_i* (eq. 4), delta* held constant, and the loss of eq. 5 over the augmented
   neighbourhood N_A(i) = {k, k*}: l(z_i*, z_i) + l(z_i, z_i*), each with negatives z_k and z_k*.
Returned: the mean of those 2M terms, i.e. eq. 6 minus its NT-Xent part (the trainer adds NT-Xent).

VaSCL's released code (amazon-research/sentence-representations, VaSCL/learners/vat_utils.py and
contrastive_utils.py) differs in three ways, each a setting (`vascl_official_code` sets all three, with
`similarity="dot"` and the bias-free head `vascl`):
- `detach_representation=True`: e is detached before the perturbation, so this loss trains only the head,
  never the encoder;
- `detach_clean=True`: the unperturbed view's head output h(e_i) enters eq. 5 without gradient (the code
  computes it under no_grad), so only the perturbed view's output trains the head;
- `probe="released"`: the search starts at Delta times the unit direction of a U(-0.5, 0.5)^d draw (not at
  small Gaussian noise) and takes its one step from the gradient of the batch-mean loss divided by its norm
  plus 1e-8, as the code does (steps must be 1).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

PROBES = ("gaussian", "released")


def neighbours(e: torch.Tensor, k: int, similarity: str = "cosine") -> torch.Tensor:
    """Indices [M, K] of each row's K most similar other rows (self excluded)."""
    e = e.detach().float()
    sim = F.normalize(e, dim=-1) @ F.normalize(e, dim=-1).T if similarity == "cosine" else e @ e.T
    sim.fill_diagonal_(float("-inf"))
    return sim.topk(min(k, len(e) - 1), dim=1).indices


def _cos(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Row-wise cosine of a [M, d] with b [M, ..., d] broadcast over the middle axes."""
    return F.cosine_similarity(a.float().unsqueeze(1), b.float(), dim=-1)


def neighbourhood_loss(anchor: torch.Tensor, positive: torch.Tensor, negatives: torch.Tensor,
                       temperature: float) -> torch.Tensor:
    """Eq. 2 per row: -log softmax of the positive against [M, n, d] negatives; returns [M]."""
    logits = torch.cat([_cos(anchor, positive.unsqueeze(1)), _cos(anchor, negatives)], dim=1) / temperature
    return -F.log_softmax(logits, dim=1)[:, 0]


class VirtualAugmentation(nn.Module):
    def __init__(self, temperature: float = 0.05, delta: float = 15.0, neighbours: int = 16, steps: int = 1,
                 init_std: float = 1e-3, similarity: str = "cosine", detach_representation: bool = False,
                 detach_clean: bool = False, probe: str = "gaussian"):
        super().__init__()
        if similarity not in ("cosine", "dot"):
            raise ValueError(f"virtual_augmentation: similarity must be 'cosine' or 'dot', got {similarity!r}")
        if probe not in PROBES:
            raise ValueError(f"virtual_augmentation: probe must be one of {', '.join(PROBES)}, got {probe!r}")
        if probe == "released" and steps != 1:
            raise ValueError("virtual_augmentation: probe 'released' (VaSCL's code) takes one step (steps: 1)")
        self.temperature, self.delta, self.k, self.steps = temperature, delta, neighbours, steps
        self.init_std, self.similarity, self.detach = init_std, similarity, detach_representation
        self.detach_clean, self.probe = detach_clean, probe

    def draw_noise(self, shape, generator: torch.Generator | None = None) -> torch.Tensor:
        """The search's starting noise (float32, on the host: drawn before the step runs): N(0, I) for the
        Gaussian probe, U(-0.5, 0.5) for the released code's."""
        if self.probe == "released":
            return torch.rand(shape, generator=generator, dtype=torch.float32) - 0.5
        return torch.randn(shape, generator=generator, dtype=torch.float32)

    def start(self, noise: torch.Tensor) -> torch.Tensor:
        """The probe's starting perturbation from its noise: init_std x noise, or (released) Delta times the noise's
        unit direction, normalised as VaSCL's `_l2_normalize` does (norm + 1e-8)."""
        if self.probe == "released":
            return self.delta * noise / (noise.norm(dim=-1, keepdim=True) + 1e-8)
        return self.init_std * noise

    def perturbation(self, e: torch.Tensor, head: nn.Module, nbr: torch.Tensor,
                     generator: torch.Generator | None = None, noise: torch.Tensor | None = None) -> torch.Tensor:
        """delta* of eq. 3 for every row (no gradient reaches the model from this search). `noise`: the starting
        noise, drawn by `draw_noise` (from `generator` when not given)."""
        e = e.detach()
        noise = (self.draw_noise(e.shape, generator) if noise is None else noise).to(e.device)
        delta = self.start(noise.float()).to(e.dtype)
        with torch.enable_grad():
            z = head(e).detach()
            for _ in range(self.steps):
                delta = delta.detach().requires_grad_(True)
                zd = head(e + delta)
                loss = neighbourhood_loss(zd, z, z[nbr], self.temperature).sum()  # rows are independent
                (g,) = torch.autograd.grad(loss, delta)
                if self.probe == "released":    # d/dd of the batch mean at e + Delta d, / (norm + 1e-8), as VaSCL's
                    g = g * (self.delta / len(e))
                    g = g / (g.norm(dim=-1, keepdim=True) + 1e-8)
                else:
                    g = g / g.norm(dim=-1, keepdim=True).clamp_min(1e-12)
                if self.steps == 1:
                    delta = self.delta * g
                else:
                    delta = delta + 2.5 * self.delta / self.steps * g
                    delta = delta * (self.delta / delta.norm(dim=-1, keepdim=True).clamp_min(self.delta))
        return delta.detach()

    def forward(self, e: torch.Tensor, head: nn.Module, generator: torch.Generator | None = None,
                noise: torch.Tensor | None = None) -> torch.Tensor:
        if self.detach:
            e = e.detach()
        nbr = neighbours(e, self.k, self.similarity)
        z, z_star = head(e), head(e + self.perturbation(e, head, nbr, generator, noise))
        if self.detach_clean:
            z = z.detach()
        negatives = torch.cat([z[nbr], z_star[nbr]], dim=1)          # N_A(i): {z_k, z_k*}, k in N(i)
        terms = (neighbourhood_loss(z, z_star, negatives, self.temperature)
                 + neighbourhood_loss(z_star, z, negatives, self.temperature))
        return terms.sum() / (2 * len(e))
