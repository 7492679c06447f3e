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
          detach_representation=Param(False, "train the head only, as the official code"),
          detach_clean=Param(False, "the unperturbed view's head output without gradient in eq. 5 (official code)"),
          probe=Param("gaussian", "the search's start: gaussian (init_std x N(0, I), the paper) or released (Delta x "
                                  "the unit direction of U(-0.5, 0.5)^d, the official code)",
                      choices=("gaussian", "released")))
class VirtualAugmentationObjective(Objective):
    overhead = "vascl"
    needs_views = True

    def check(self, composition):
        if self.settings["probe"] == "released" and self.settings["steps"] != 1:
            raise self.error("virtual_augmentation: probe 'released' (VaSCL's code) takes one step (steps: 1)")

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
          alpha=Param(1.0, "the gradient reversal's scale"), dropout=Param(0.2, "the classifier's dropout"),
          width=Param(1, "the hidden layer's width in units of its input [e_orig; e_aug] (2h): 1 (2h, A.5's "
                         "ProjectionMLP) or 2 (4h, AugCSE's code)", choices=(1, 2)),
          final_tanh=Param(False, "tanh after the output layer too, as AugCSE's code (logits in [-1, 1])"),
          inputs=Param("pooled", "what it reads: pooled (the sentence vectors) or projected (after the head, "
                                 "batch-normed: AugCSE's code)", choices=("pooled", "projected")),
          unchanged=Param("first", "the class of an unchanged line: first (0) or last (AugCSE's code)",
                          choices=("first", "last")))
class DiscriminatorObjective(Objective):
    overhead = "augcse"
    needs_views = True

    def check(self, composition):
        if not composition.augmented_view:
            raise self.error("the discriminator needs augmented_view")

    def build(self, context):
        from ..objectives.discriminator import AugmentationDiscriminator

        s = self.settings
        return AugmentationDiscriminator(context.hidden_size, discriminator_classes(context.spec), alpha=s["alpha"],
                                         dropout=s["dropout"], width=s["width"], final_tanh=s["final_tanh"])

    def prepare(self, step):
        import torch

        step.encode("augmented", step.batch.augmented[step.mine])
        labels = torch.tensor(step.batch.labels[step.mine])
        if self.settings["unchanged"] == "last":    # the batch's labels: 0 unchanged, k the k-th augmentation
            labels = (labels - 1) % self.module.n_classes
        step.tensors["labels"] = labels

    def compute(self, step):
        vectors = step.z if self.settings["inputs"] == "projected" else step.e
        anchors, augmented = vectors[step.blocks["anchors"]], vectors[step.blocks["augmented"]]
        value, accuracy = self.module.loss_and_accuracy(anchors, augmented, step.tensors["labels"])
        return value, {"discriminator_accuracy": accuracy.detach()}   # logged like a loss part (AugCSE Fig. 5)


@register("mlm", description="masked language modelling of the original sentences (BERT's 80/10/10 recipe)",
          probability=Param(0.15, "share of the tokens predicted", minimum=0, maximum=1),
          copies=Param(1, "masked copies per sentence, their losses summed (CLEAR's Double MLM: 2)", minimum=1),
          of=Param("originals", "what is masked: originals (a copy of each original sentence: AugCSE's code, CLEAR) "
                                "or views (the step's anchors and positives, one loss over all their masked tokens: "
                                "SimCSE's code)", choices=("originals", "views")),
          lm_head=Param("tied", "tied (the checkpoint's head, its decoder the input embeddings) or copy (a copy of it "
                                "trained on its own: SimCSE's and AugCSE's code)", choices=("tied", "copy")))
class MaskedLMObjective(Objective):
    overhead = "simcse_mlm"
    needs_lm_head = True

    @property
    def masked_rows(self) -> int:
        """Masked sentences per example, each another forward and LM head: its copies, or (views) two."""
        return 2 if self.settings["of"] == "views" else int(self.settings["copies"])

    def step_overhead(self, times):
        measured = times.overhead(self.overhead)      # one masked copy's
        return None if measured is None else 1 + self.masked_rows * (measured - 1)

    @property
    def step_work(self):
        return f"mlmx{self.masked_rows}"

    def check(self, composition):
        if self.settings["of"] == "views" and self.settings["copies"] != 1:
            raise self.error("mlm: of 'views' masks each view once (copies: 1)")

    def build(self, context):
        import copy

        from ..objectives.mlm import MaskedLM

        if context.lm_head is None:
            raise self.error("the mlm objective needs the backbone's masked-LM head")
        # copy: SimCSE and AugCSE load the checkpoint's head into a module of their own (lm_head), no longer tied
        head = copy.deepcopy(context.lm_head) if self.settings["lm_head"] == "copy" else context.lm_head
        return MaskedLM(head, context.tokenizer, probability=self.settings["probability"],
                        copies=self.settings["copies"])

    def positions_room(self, batch_size, width):
        from ..objectives.mlm import mlm_capacity

        rows = 2 * batch_size if self.settings["of"] == "views" else batch_size
        return mlm_capacity(rows, width, self.settings["probability"])

    def masked_texts(self, step) -> list[str]:
        """The sentences masked: the originals, or (views) the anchors then the positives."""
        if self.settings["of"] == "views":
            return step.batch.anchors[step.mine] + step.batch.positives[step.mine]
        return step.batch.originals[step.mine]

    def prepare(self, step):
        """The masked copies of the original sentences or views (masks drawn on the host, see `MaskedLM`)."""
        orig = step.tokenize(self.masked_texts(step))
        copies = self.module.draw(orig["input_ids"], orig["attention_mask"], step.generator,
                                  step.shape.mlm_positions if step.shape else None)
        for i, copy in enumerate(copies):
            step.tensors.update({f"mlm{i}_{k}": v for k, v in copy.items()})

    def compute(self, step):
        t = step.tensors
        copies = [{k: t[f"mlm{i}_{k}"] for k in ("input_ids", "attention_mask", "positions", "targets")}
                  for i in range(self.module.copies)]
        return self.module.loss(step.encoder.run_backbone, copies), {}
