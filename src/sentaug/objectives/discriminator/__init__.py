"""AugCSE's objective (`objectives: [{name: discriminator, ...}]`, with the method's `augmented_view`): which
augmentation made the augmented view, through gradient reversal. The part says what it reads from a step and
draws for it; the classifier is the torch module of `module`, imported where the part builds it.
"""
from __future__ import annotations

from ...parts import Objective, Param, register


def discriminator_classes(spec: dict) -> int:
    """AugCSE's discriminator classes: one per augmentation plus "unchanged" (`labels: bool`: two)."""
    return 2 if spec.get("labels", "type") == "bool" else len(spec.get("augmented_view") or []) + 1


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
    overhead = "discriminator"
    needs_views = True

    def check(self, composition):
        if not composition.augmented_view:
            raise self.error("the discriminator needs augmented_view")

    def build(self, context):
        from .module import AugmentationDiscriminator

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
