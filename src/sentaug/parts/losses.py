"""The losses of a method: its contrastive loss (`contrastive:`) and the objectives added to it with their weights
(`objectives: [{name: ..., weight: w, ...}]`). The losses themselves live in `sentaug.objectives`; these parts
say what each reads from a step and draws for it.

Contrastive losses: `infonce` (SimCSE; `symmetric`: both directions, as CLIP and AugCSE's "positive" variant),
`nt_xent` (SimCLR's, over both views: VaSCL, CLEAR), `none` (the objectives alone: CLEAR's MLM-only baselines).
Objectives: `virtual_augmentation` (VaSCL), `discriminator` (AugCSE's augmentation discriminator, over the
augmented view), `mlm` (masked language modelling: CLEAR; SimCSE "w/ MLM").
"""
from __future__ import annotations

from ..augment.registry import Param
from .base import ContrastiveLoss, Objective
from .registry import register


@register("infonce", description="SimCSE: cross-entropy over cos/tau, anchors against positives (and extra negatives)",
          symmetric=Param(False, "the mean of both directions (rows and columns)"))
class InfoNCELoss(ContrastiveLoss):
    takes_negatives = True
    step_work = None            # SimCSE's own loss: the measured settings' baseline


    def build(self, context):
        from ..objectives import InfoNCE

        return InfoNCE(context.temperature, symmetric=self.settings["symmetric"])

    def compute(self, step):
        if step.negatives is None:
            return self.module(step.z1, step.z2), {}
        return self.module(step.z1, step.z2, *step.negatives), {}


@register("nt_xent", description="SimCLR's NT-Xent over both views (VaSCL eq. 1, CLEAR eq. 1-2)")
class NTXentLoss(ContrastiveLoss):
    def build(self, context):
        from ..objectives import NTXent

        return NTXent(context.temperature)

    def compute(self, step):
        return self.module(step.z1, step.z2), {}


@register("none", description="no contrastive loss: the objectives alone (CLEAR's MLM-only baselines)")
class NoContrastive(ContrastiveLoss):
    needs_views = False

    def check(self, composition):
        if not composition.objectives:
            raise self.error("contrastive none needs an objective (objectives: [{name: ...}])")

    def compute(self, step):
        return None, {}


def discriminator_classes(spec: dict) -> int:
    """AugCSE's discriminator classes: one per augmentation plus "unchanged" (`labels: bool`: two)."""
    return 2 if spec.get("labels", "type") == "bool" else len(spec.get("augmented_view") or []) + 1


@register("virtual_augmentation",
          description="VaSCL: neighbourhood-constrained discrimination of virtual augmentations",
          delta=Param(15.0, "the perturbation's norm bound"), neighbours=Param(16, "in-batch neighbours", minimum=1),
          steps=Param(1, "gradient steps of the perturbation search", minimum=1),
          init_std=Param(1e-3, "the search's starting noise"),
          similarity=Param("cosine", "how neighbours are ranked (dot: the official code)", choices=("cosine", "dot")),
          detach_representation=Param(False, "train the head only, as the official code"))
class VirtualAugmentationObjective(Objective):
    overhead = "vascl"
    needs_views = True

    def build(self, context):
        from ..objectives.virtual_augmentation import VirtualAugmentation

        own = {k: v for k, v in self.settings.items() if k != "weight"}
        return VirtualAugmentation(temperature=context.temperature, **own)

    def prepare(self, step):
        step.tensors["noise"] = self.module.draw_noise((step.size, step.hidden_size), step.generator)

    def compute(self, step):
        from torch import nn

        anchors = step.e[step.blocks["anchors"]]
        return self.module(anchors, step.encoder.head or nn.Identity(), noise=step.tensors["noise"]), {}


@register("discriminator", description="AugCSE: which augmentation made the augmented view, through gradient reversal",
          alpha=Param(1.0, "the gradient reversal's scale"), dropout=Param(0.2, "the classifier's dropout"))
class DiscriminatorObjective(Objective):
    overhead = "augcse"
    needs_views = True

    def check(self, composition):
        if not composition.augmented_view:
            raise self.error("the discriminator needs augmented_view")

    def build(self, context):
        from ..objectives.discriminator import AugmentationDiscriminator

        return AugmentationDiscriminator(context.hidden_size, discriminator_classes(context.spec),
                                         alpha=self.settings["alpha"], dropout=self.settings["dropout"])

    def prepare(self, step):
        import torch

        step.encode("augmented", step.batch.augmented[step.mine])
        step.tensors["labels"] = torch.tensor(step.batch.labels[step.mine])

    def compute(self, step):
        anchors, augmented = step.e[step.blocks["anchors"]], step.e[step.blocks["augmented"]]
        value, accuracy = self.module.loss_and_accuracy(anchors, augmented, step.tensors["labels"])
        return value, {"discriminator_accuracy": accuracy.detach()}   # logged like a loss part (AugCSE Fig. 5)


@register("mlm", description="masked language modelling of the original sentences (BERT's 80/10/10 recipe)",
          probability=Param(0.15, "share of the tokens predicted", minimum=0, maximum=1),
          copies=Param(1, "masked copies per sentence, their losses summed (CLEAR's Double MLM: 2)", minimum=1))
class MaskedLMObjective(Objective):
    overhead = "simcse_mlm"
    needs_lm_head = True

    def step_overhead(self, times):
        measured = times.overhead(self.overhead)      # one masked copy's
        return None if measured is None else 1 + self.settings["copies"] * (measured - 1)

    @property
    def step_work(self):
        return f"mlmx{int(self.settings['copies'])}"      # each masked copy is another forward and LM head

    def build(self, context):
        from ..objectives.mlm import MaskedLM

        if context.lm_head is None:
            raise self.error("the mlm objective needs the backbone's masked-LM head")
        return MaskedLM(context.lm_head, context.tokenizer, probability=self.settings["probability"],
                        copies=self.settings["copies"])

    def positions_room(self, batch_size, width):
        from ..train.inputs import mlm_capacity

        return mlm_capacity(batch_size, width, self.settings["probability"])

    def prepare(self, step):
        """The masked copies of the original sentences (masks drawn on the host, see `MaskedLM`)."""
        orig = step.tokenize(step.batch.originals[step.mine])
        copies = self.module.draw(orig["input_ids"], orig["attention_mask"], step.generator,
                                  step.shape.mlm_positions if step.shape else None)
        for i, copy in enumerate(copies):
            step.tensors.update({f"mlm{i}_{k}": v for k, v in copy.items()})

    def compute(self, step):
        t = step.tensors
        copies = [{k: t[f"mlm{i}_{k}"] for k in ("input_ids", "attention_mask", "positions", "targets")}
                  for i in range(self.module.copies)]
        return self.module.loss(step.encoder.run_backbone, copies), {}
