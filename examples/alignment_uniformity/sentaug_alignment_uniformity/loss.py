"""Alignment and uniformity (Wang & Isola, ICML 2020) as a training objective.

Wang & Isola show that the contrastive loss asymptotically optimises two properties of the L2-normalised
embeddings f: positive pairs close together (alignment) and the embeddings spread over the sphere (uniformity),
and that optimising the two directly works as well. On the anchors x and positives y of a batch:

    L_align   = mean_i ||x_i - y_i||^alpha                                            (alpha = 2)
    L_uniform = ( log mean_{i<j} exp(-t ||x_i - x_j||^2) + the same over y ) / 2     (t = 2)
    loss      = L_align + lambda * L_uniform

SimCSE reports both quantities of its embeddings (sentaug's analysis suite computes them); no method sentaug
reproduces trains on them. As `contrastive: none` with this objective alone it is Wang & Isola's loss; beside
InfoNCE it adds an explicit push towards both. Each part is logged (`alignment`, `uniformity`).
"""
from sentaug.parts import Objective, Param, register


def alignment(x, y, alpha: float = 2.0):
    """mean_i ||x_i - y_i||^alpha of row-aligned, L2-normalised x and y."""
    return (x - y).pow(2).sum(dim=1).pow(alpha / 2).mean()


def uniformity(x, t: float = 2.0):
    """log mean_{i<j} exp(-t ||x_i - x_j||^2) of L2-normalised rows x (each unordered pair once)."""
    import torch

    i, j = torch.triu_indices(len(x), len(x), offset=1, device=x.device)
    squared = (x[i] - x[j]).pow(2).sum(dim=1)     # no square root: its gradient is infinite at 0
    return torch.logsumexp(-t * squared, dim=0) - torch.log(torch.tensor(float(len(squared)), device=x.device))


@register("alignment_uniformity", description="Wang & Isola 2020: positive pairs aligned, the batch spread uniformly "
                                              "on the sphere",
          alpha=Param(2.0, "the alignment's exponent", minimum=0),
          t=Param(2.0, "the uniformity's temperature", minimum=0),
          uniformity_weight=Param(1.0, "lambda: the uniformity's weight beside the alignment", minimum=0))
class AlignmentUniformity(Objective):
    needs_views = True       # the step encodes the anchors and positives (also with `contrastive: none`)

    def compute(self, step):
        import torch.nn.functional as F

        # this process's share of the batch (an objective's loss is per process), after the projection head
        x = F.normalize(step.z[step.blocks["anchors"]].float(), dim=-1)
        y = F.normalize(step.z[step.blocks["positives"]].float(), dim=-1)
        aligned = alignment(x, y, self.settings["alpha"])
        uniform = (uniformity(x, self.settings["t"]) + uniformity(y, self.settings["t"])) / 2
        loss = aligned + self.settings["uniformity_weight"] * uniform
        return loss, {"alignment": aligned.detach(), "uniformity": uniform.detach()}
