"""VaSCL's objective (`objectives: [{name: virtual_augmentation, ...}]`): neighbourhood-constrained discrimination
of virtual augmentations. The part says what it reads from a step and draws for it; the loss is the torch module
of `module` (eq. 2-6 and the released code's differences), imported where the part builds it.
"""
from __future__ import annotations

from ...parts import Objective, Param, register


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
    overhead = "virtual_augmentation"
    needs_views = True

    def check(self, composition):
        if self.settings["probe"] == "released" and self.settings["steps"] != 1:
            raise self.error("virtual_augmentation: probe 'released' (VaSCL's code) takes one step (steps: 1)")

    def build(self, context):
        from .module import VirtualAugmentation

        own = {k: v for k, v in self.settings.items() if k != "weight"}
        return VirtualAugmentation(temperature=context.temperature, **own)

    def prepare(self, step):
        step.tensors["noise"] = self.module.draw_noise((step.size, step.hidden_size), step.generator)

    def compute(self, step):
        from torch import nn

        anchors = step.e[step.blocks["anchors"]]
        return self.module(anchors, step.encoder.head or nn.Identity(), noise=step.tensors["noise"]), {}
