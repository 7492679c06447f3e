"""The negative sources: what each anchor is contrasted with beside the other positives of the batch
(`negatives: {source: ...}`, or `negatives: in_batch`, the default).

- `in_batch` (SimCSE): the batch's other positives alone.
- `retrieved` (CARDS): sentences retrieved from the corpus around each anchor (`sentaug.index.sampling`: `mode`,
  `k`, `s` per anchor), one extra column per sentence, shared by the batch; a column that is the anchor's own
  sentence is dropped. Reads the retrieval index of the run's corpus, backbone and pooler with `k` neighbours.
- `cache` (AugCSE Table 1, eq. 1): each example's cached augmentation as its hard negative. With `only_changed`
  (default true) the lines the augmentation left unchanged are dropped, as AugCSE removes data points without a
  successful negative augmentation (their negative would be the anchor itself).
- `nli`: the NLI triplet's other hypothesis (`use`: contradiction, or entailment).

A hard negative per example (cache, nli) adds one column block: every anchor sees all of them (SimCSE's supervised
loss) or, with `shared: false`, its own only (AugCSE eq. 1).
"""
from __future__ import annotations

from ..params import Param
from .base import CORPUS_LINES, HARD_NEGATIVE, NLI_TRIPLETS, NegativeSource
from .positives import HYPOTHESES, NLI_FIELDS
from .registry import register

SHARED = Param(True, "every anchor sees every hard negative; false: its own only (AugCSE eq. 1)")


@register("in_batch", description="SimCSE: the batch's other positives alone")
class InBatch(NegativeSource):
    simcse_step = True


class _HardNegatives(NegativeSource):
    """One hard negative per example (`load` returns them), encoded after the positives: a column block."""
    overhead = HARD_NEGATIVE
    feature = "a hard negative"
    step_work = "hard_negative"       # a third sentence per example, wherever it comes from
    needs_views = True
    adds_columns = True

    def prepare(self, step):
        step.encode("negatives", step.batch.negatives[step.mine])

    def compute(self, step):
        import torch

        negatives = step.gathered("negatives")
        own_only = None if self.settings["shared"] else \
            ~torch.eye(len(step.z1), dtype=torch.bool, device=step.z.device)   # True = column dropped
        step.negatives = (negatives, own_only)
        return None, {}


@register("cache", description="AugCSE: each example's cached augmentation as its hard negative",
          augmentation=Param(None, "the declared augmentation used as hard negative", type=str, required=True),
          changed_only=Param(True, "train on the lines it changed only"), shared=SHARED)
class CachedNegatives(_HardNegatives):
    examples = CORPUS_LINES
    renamed = {"only_changed": "changed_only"}      # as a cached positive names it

    @classmethod
    def carried(cls, entry):
        return {"settings"}

    def caches(self, seed):
        return [(self.settings["augmentation"], seed)]

    def augmentations(self):
        return [("augmentation", self.settings["augmentation"])]

    def resolve(self, declared, config, scale):
        # its augmentation's settings ride along, so that changing them retrains
        return {**declared, "settings": dict(config["augmentations"][declared["augmentation"]])}

    def changed_only(self):
        return [0] if self.settings["changed_only"] else []

    def load(self, data, tables):
        (table,) = tables
        return [table["augmented"].iat[i] for i in data.lines]


@register("nli", description="supervised SimCSE: the NLI triplet's other hypothesis as the hard negative",
          use=Param("contradiction", "the hypothesis used as hard negative", choices=HYPOTHESES), shared=SHARED)
class NliNegatives(_HardNegatives):
    examples = NLI_TRIPLETS

    def load(self, data, tables):
        return [t[NLI_FIELDS[self.settings["use"]]] for t in data.rows]


@register("retrieved", description="CARDS: sentences retrieved around each anchor, one extra column each",
          mode=Param("top_k_uniform", "how the retrieved sentences are drawn (sentaug.index.sampling)",
                     choices=("top_k_uniform", "r_top", "d_uniform")),
          k=Param(None, "neighbours the index holds per line (default: 64)", type=int, minimum=1),
          s=Param(1, "sentences drawn per anchor", minimum=1))
class RetrievedNegatives(NegativeSource):
    overhead = HARD_NEGATIVE
    feature = "a hard negative"
    needs_views = True
    adds_columns = True

    @property
    def step_work(self):
        return f"retrieved{int(self.settings['s'])}"      # s more sentences encoded per anchor
    examples = CORPUS_LINES

    def index(self):
        return {"k": self.settings["k"] or 64}

    def build(self, context):
        from ..index.sampling import NegativeSampler, check_corpus, load_index

        if not context.index_path:
            raise self.error("retrieved negatives need --index FILE.npz")
        index = load_index(context.index_path)
        check_corpus(index, context.data.corpus)  # anchors are looked up by line: it must be the same file
        self.sampler = NegativeSampler(index, mode=self.settings["mode"], s=self.settings["s"], k=self.settings["k"])

    def prepare(self, step):
        """One extra column per retrieved sentence, shared by the batch."""
        from ..index.sampling import same_id_mask

        negative_rows = self.sampler.sample(step.batch.lines, step.generator)       # [B, s] for the global batch
        step.encode("negatives", self.sampler.sentences(negative_rows[step.mine]))
        step.tensors["negative_mask"] = same_id_mask(self.sampler.rows(step.batch.lines), negative_rows.reshape(-1))

    def compute(self, step):
        step.negatives = (step.gathered("negatives"), step.tensors["negative_mask"])
        return None, {}
