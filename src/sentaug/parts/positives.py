"""The positive sources: where each example's anchor and positive text come from (`positive: {source: ...}`).

- `dropout` (unsupervised SimCSE): the positive is the anchor itself; two dropout masks make the views.
- `cache`: the cached augmentation of the anchor (SDA and friends); unchanged lines pair with themselves. A
  cache with an ``anchor`` column (an anchored augmentation: SDA's released code trains on the spaCy-tokenised
  sentence) gives the anchor too. `changed_only: true` (AugCSE appendix A.14) trains on the lines it changed only.
- `switch_case` (CARDS): a switch-cased copy drawn on the fly, per (seed, step, line), as CARDS's collator does;
  the cache of the same augmentation only serves analysis.
- `two_views` (CLEAR): both sides augmented, by the same augmentation under two seeds (two caches: the run's seed
  and seed + 100); the original sentence is kept for the MLM objective.
- `augmented_view` (AugCSE "positive" / "no discriminator"): the example's augmented view (`augmented_view:`).
- `nli` (supervised SimCSE, AugCSE Tables 2 and 14): examples are NLI triplets (premise, entailed, contradicted
  hypothesis), not corpus lines; the anchor is the premise and the positive the hypothesis named by `use`. The
  triplet file (`triplets`, the scale's `nli_sets` entry for `data`) is what the run trains on.

`proportion` (SDA Figure 2a; default 1): the share of a batch's pairs whose positive comes from the source; the
other pairs use the anchor itself, i.e. SimCSE's dropout positive (`sentaug.train.sources`).
"""
from __future__ import annotations

import random

from ..params import Param
from .base import HARD_NEGATIVE, NLI_TRIPLETS, PositiveSource
from .registry import register

PROPORTION = Param(1.0, "share of a batch's pairs using this positive, the rest the dropout one", minimum=0, maximum=1)
AUGMENTATION = Param(None, "the declared augmentation (config key augmentations)", type=str, required=True)
NLI_FIELDS = {"entailment": 1, "contradiction": 2}     # NLITriplet fields: anchor, positive, negative
HYPOTHESES = tuple(NLI_FIELDS)


@register("dropout", description="unsupervised SimCSE: the anchor itself, two dropout masks make the views")
class DropoutPositive(PositiveSource):
    simcse_step = True
    def pair(self, data, idx, step):
        originals = [data.originals[i] for i in idx]
        return originals, originals


class _Cached(PositiveSource):
    """A source reading caches of its declared augmentation; the resolved spec carries the augmentation's
    declaration beside its own settings, so that changing it retrains."""

    @classmethod
    def carried(cls, entry: dict) -> set[str]:
        return {k for k in entry if k not in cls.params and k != "source"}

    def augmentations(self):
        return [("augmentation", self.settings["augmentation"])]

    def resolve(self, declared, config, scale):
        return {**declared, **config["augmentations"][declared["augmentation"]]}


@register("cache", description="the cached augmentation of the anchor (an anchored augmentation's anchor too)",
          augmentation=AUGMENTATION, proportion=PROPORTION,
          changed_only=Param(False, "train only on the lines the augmentation changed"))
class CachedPositive(_Cached):
    def caches(self, seed):
        return [(self.settings["augmentation"], seed)]

    def changed_only(self):
        return [0] if self.settings["changed_only"] else []

    def load(self, data, tables):
        (table,) = tables
        self.positives = data.lowercase([table["augmented"].iat[i] for i in data.lines])
        # the cache's own anchors (anchored augmentations), else the corpus lines
        self.anchors = [table["anchor"].iat[i] for i in data.lines] if "anchor" in table.columns else None

    def pair(self, data, idx, step):
        originals = [data.originals[i] for i in idx]
        anchors = [self.anchors[i] for i in idx] if self.anchors is not None else originals
        return anchors, [self.positives[i] for i in idx]


@register("two_views", description="CLEAR: both sides augmented, one augmentation under two seeds (seed, seed + 100)",
          augmentation=AUGMENTATION)
class TwoViews(_Cached):
    def caches(self, seed):
        return [(self.settings["augmentation"], seed), (self.settings["augmentation"], seed + 100)]

    def load(self, data, tables):
        self.views = [data.lowercase([t["augmented"].iat[i] for i in data.lines]) for t in tables]

    def pair(self, data, idx, step):
        return [self.views[0][i] for i in idx], [self.views[1][i] for i in idx]


@register("augmented_view", description="AugCSE: the example's augmented view (augmented_view:) is its positive",
          proportion=PROPORTION)
class AugmentedViewPositive(PositiveSource):
    def check(self, composition):
        if not composition.augmented_view:
            raise self.error("positive source 'augmented_view' needs augmented_view")

    def pair(self, data, idx, step):
        return [data.originals[i] for i in idx], [data.augmented[i] for i in idx]


@register("switch_case", description="CARDS: a switch-cased copy drawn per (seed, step, line), as its collator does",
          p=Param(0.05, "switch probability (CARDS: 0.05 roberta-base, 0.1 roberta-large)", minimum=0, maximum=1),
          version=Param("v1", "v1: max(1, round(p*n)) switches among the eligible words; v2: each token with "
                              "probability p", choices=("v1", "v2")),
          normalize=Param("none", "none: the line as written; collator: first as CARDS's collator decodes it",
                          choices=("none", "collator")),
          proportion=PROPORTION)
class SwitchCasePositive(PositiveSource):
    overhead = "switch_case"
    overhead_with = (HARD_NEGATIVE,)    # timed on CARDS: CARDS = switch-case x retrieved negatives
    feature = "switch-case positives"

    def pair(self, data, idx, step):
        from ..augment.cards import switch_case

        s = self.settings
        originals = [data.originals[i] for i in idx]
        return originals, [switch_case(t, random.Random(f"{data.seed}:{step}:{data.lines[i]}"), s["p"], s["version"],
                                       s["normalize"]) for t, i in zip(originals, idx)]


@register("nli", description="supervised SimCSE: NLI triplets, the premise and the hypothesis named by `use`",
          data=Param("nli", "the scale's nli_sets entry: nli (SNLI + MNLI) or anli", choices=("nli", "anli")),
          use=Param("entailment", "the hypothesis used as the positive", choices=HYPOTHESES),
          sample_as=Param(None, "sampled down to that set's size", type=str, choices=("nli", "anli")))
class NliPositive(PositiveSource):
    examples = NLI_TRIPLETS

    @classmethod
    def carried(cls, entry):
        return {"triplets"}

    def resolve(self, declared, config, scale):
        """`triplets`: the triplet file (its name under results/nli/<origin>/) at this scale: the scale's `nli_sets`
        entry for `data`, sampled down to the size of the `sample_as` set when one is named (`<set>.as_<other>`)."""
        sets = config["scales"][scale].get("nli_sets") or {}
        wanted = [("data", declared.get("data", "nli"))]
        if declared.get("sample_as"):
            wanted.append(("sample_as", declared["sample_as"]))
        for key, data in wanted:
            if data not in sets:
                raise ValueError(f"config key 'scales.{scale}.nli_sets' has no '{data}' (positive.{key} of an nli "
                                 f"method)")
        return {**declared, "triplets": ".as_".join(sets[data] for _, data in wanted)}

    def corpus(self, resolved, corpus):
        return resolved["triplets"]

    def load(self, data, tables):
        self.positives = [t[NLI_FIELDS[self.settings["use"]]] for t in data.rows]

    def pair(self, data, idx, step):
        return [data.originals[i] for i in idx], [self.positives[i] for i in idx]
