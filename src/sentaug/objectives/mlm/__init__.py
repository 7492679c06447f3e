"""Masked language modelling as an objective (`objectives: [{name: mlm, ...}]`: CLEAR; SimCSE "w/ MLM"; AugCSE
Table 5). The part says which sentences are masked and draws the masks on the host; the masking and the loss are
the torch module of `module`, imported where the part builds it.
"""
from __future__ import annotations

from ...parts import Objective, Param, register


@register("mlm", description="masked language modelling of the original sentences (BERT's 80/10/10 recipe)",
          probability=Param(0.15, "share of the tokens predicted", minimum=0, maximum=1),
          copies=Param(1, "masked copies per sentence, their losses summed (CLEAR's Double MLM: 2)", minimum=1),
          of=Param("originals", "what is masked: originals (a copy of each original sentence: AugCSE's code, CLEAR) "
                                "or views (the step's anchors and positives, one loss over all their masked tokens: "
                                "SimCSE's code)", choices=("originals", "views")),
          lm_head=Param("tied", "tied (the checkpoint's head, its decoder the input embeddings) or copy (a copy of it "
                                "trained on its own: SimCSE's and AugCSE's code)", choices=("tied", "copy")))
class MaskedLMObjective(Objective):
    overhead = "mlm"
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

        from .module import MaskedLM

        if context.lm_head is None:
            raise self.error("the mlm objective needs the backbone's masked-LM head")
        # copy: SimCSE and AugCSE load the checkpoint's head into a module of their own (lm_head), no longer tied
        head = copy.deepcopy(context.lm_head) if self.settings["lm_head"] == "copy" else context.lm_head
        return MaskedLM(head, context.tokenizer, probability=self.settings["probability"],
                        copies=self.settings["copies"])

    def positions_room(self, batch_size, width):
        from .module import mlm_capacity

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
