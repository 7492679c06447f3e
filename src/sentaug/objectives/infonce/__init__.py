"""The contrastive losses (a method's `contrastive:`): `infonce` (SimCSE; `symmetric`: both directions, as CLIP and
AugCSE's "positive" variant), `nt_xent` (SimCLR's, over both views: VaSCL, CLEAR) and `none` (the objectives
alone: CLEAR's MLM-only baselines). The parts say what each reads from a step; the losses themselves are the torch
modules of `module`, imported where a part builds one (the workflow imports the parts without torch).
"""
from __future__ import annotations

from ...parts import ContrastiveLoss, Param, register


@register("infonce", description="SimCSE: cross-entropy over cos/tau, anchors against positives (and extra negatives)",
          symmetric=Param(False, "the mean of both directions (rows and columns)"))
class InfoNCELoss(ContrastiveLoss):
    takes_negatives = True
    simcse_step = True
    step_work = None            # SimCSE's own loss: the measured settings' baseline

    def build(self, context):
        from .module import InfoNCE

        return InfoNCE(context.temperature, symmetric=self.settings["symmetric"])

    def compute(self, step):
        if step.negatives is None:
            return self.module(step.z1, step.z2), {}
        return self.module(step.z1, step.z2, *step.negatives), {}


@register("nt_xent", description="SimCLR's NT-Xent over both views (VaSCL eq. 1, CLEAR eq. 1-2)")
class NTXentLoss(ContrastiveLoss):
    def build(self, context):
        from .module import NTXent

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
