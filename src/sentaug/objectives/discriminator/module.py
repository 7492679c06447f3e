"""AugCSE's antagonistic augmentation discriminator (section 3, appendix A.4-A.5).

The discriminator sees [z_orig; z_aug] through a gradient reversal layer and predicts which augmentation
produced z_aug ("unchanged" is a class of its own: a cache row the augmentation left as it was), with binary
cross-entropy against one-hot labels (eq. 2). The layer is the identity forward and multiplies the gradient
by -alpha backward, so one backward pass trains the discriminator to tell augmentations apart and the
encoder to make them indistinguishable (alpha > 0: antagonistic; alpha < 0: collaborative, Table 7).
The caller weights the returned loss by lambda (eq. 3).

Variants (Table 6): `labels="type"` (AugCSE), `labels="bool"` (augmented or not: two classes).

AugCSE's released code (PootieT/AugCSE, training/discriminator.py, training/train_text_classification.py) builds
it as `width=2` (2h -> 4h -> classes) with `final_tanh=True` (tanh after every layer, the last included, so the
"logits" BCE reads lie in [-1, 1]); the part feeds it the projected, batch-normed vectors and puts "unchanged"
last (`sentaug.objectives.discriminator`, settings `inputs` and `unchanged`).

`loss_and_accuracy` also returns the discriminator's accuracy on the batch (its arg-max class against the
label; AugCSE Figure 5 plots it over training), as a detached tensor so that the trainer can accumulate it
with the loss parts without a device synchronisation per step.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha: float):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return -ctx.alpha * grad, None


def grad_reverse(x: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
    return GradReverse.apply(x, alpha)


class AugmentationDiscriminator(nn.Module):
    """GRL -> dropout -> linear(2d, w 2d) -> tanh -> dropout -> linear(w 2d, classes) [-> tanh] (w = `width`: 1 is
    A.5's ProjectionMLP shape, with its output read as one logit per class; 2 with `final_tanh` is AugCSE's code)."""

    def __init__(self, hidden_size: int, n_classes: int, alpha: float = 1.0, dropout: float = 0.2, width: int = 1,
                 final_tanh: bool = False):
        super().__init__()
        self.alpha, self.n_classes = alpha, n_classes
        inner = 2 * hidden_size * width
        self.net = nn.Sequential(nn.Dropout(dropout), nn.Linear(2 * hidden_size, inner), nn.Tanh(),
                                 nn.Dropout(dropout), nn.Linear(inner, n_classes),
                                 *([nn.Tanh()] if final_tanh else []))

    def logits(self, z_orig: torch.Tensor, z_aug: torch.Tensor) -> torch.Tensor:
        return self.net(grad_reverse(torch.cat([z_orig, z_aug], dim=-1), self.alpha))

    def forward(self, z_orig: torch.Tensor, z_aug: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """Eq. 2: BCE between sigmoid(logits) and one-hot `labels` (class ids), averaged over classes and rows."""
        return self.loss_and_accuracy(z_orig, z_aug, labels)[0]

    def loss_and_accuracy(self, z_orig: torch.Tensor, z_aug: torch.Tensor,
                          labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(eq. 2 loss, share of rows whose highest logit is their label's class; detached)."""
        logits = self.logits(z_orig, z_aug).float()
        target = F.one_hot(labels, logits.shape[-1]).float()
        accuracy = (logits.detach().argmax(-1) == labels).float().mean()
        return F.binary_cross_entropy_with_logits(logits, target), accuracy
