"""Where each batch's texts come from: the examples of a run, and what its parts read of them (`sentaug.parts`).

The examples are the corpus's non-empty lines (`TrainingData`) or, for a positive source that gives NLI triplets,
the triplets of the file passed as the corpus (`NliTrainingData`). Each part keeps what it needs per example
(`Part.load`: a cached positive, a hard negative); a batch of examples gives anchors and positives (the positive
source's `pair`), the original sentences (MLM input), the hard negatives and the augmented views.

The caches a run reads (`sentaug train --positives`) come in the order `Composition.caches` gives: the positive
source's, the augmented view's, then the other parts'. A part may restrict the run to the lines its cache changed
(`Part.changed_only`: a cached positive's `changed_only`, AugCSE appendix A.14; a cached negative's
`changed_only` too, AugCSE Section 3.1, which removes data points without a successful negative augmentation).

`positive.proportion` (SDA Figure 2a; default 1): the share of a batch's pairs whose positive comes from the
source; the other pairs use the anchor itself, i.e. SimCSE's dropout positive. Exactly round(p * B) pairs of a
batch of B are drawn, by (seed, step), so a resumed run draws what an uninterrupted one would. The paper fixes
x % of the *dataset's* sentences; drawing per batch gives every batch the same share (the same in expectation).

The augmented view (`augmented_view: [augmentation, ...]`, AugCSE): each line gets one augmentation drawn
uniformly from the set, fixed for the run by (seed, line) (AugCSE samples once; resampling per epoch did
worse, its footnote 6). Its label is the augmentation's position + 1, or 0 ("unchanged") where that cache
left the line as it was; with `labels: bool` it is 1 if changed, else 0.

A cache may hold token-level positives (CARDS Table 5's re-tokenization and BPE-dropout:
`sentaug.models.token_sequences`: TOKENS_PREFIX + the tokenizer's tokens); they pass through as such and
`Method` encodes them as tokens.

`train.lowercase` (CARDS Table 4, upper case ignored in training): every text the run trains on is
lower-cased (anchors, positives, augmented views; token-level positives are left as they are).

Lines the corpus reader flagged as empty are never trained on. Line ids are kept: retrieval looks
negatives up by corpus line.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from ..parts import CORPUS_LINES, KINDS, compose


@dataclass
class Batch:
    lines: list[int]                   # corpus line of each example
    anchors: list[str]
    positives: list[str]
    originals: list[str]               # the sentence as in the corpus (MLM input)
    augmented: list[str] = field(default_factory=list)   # AugCSE's discriminator input
    labels: list[int] = field(default_factory=list)      # class of each augmented text
    negatives: list[str] = field(default_factory=list)   # one hard negative per example (cache / nli)


def training_data(spec: dict, corpus: str | Path, caches: list[str] | None = None):
    """The examples of a run: NLI triplets for a positive source that gives them, else the corpus lines."""
    return (TrainingData if compose(spec).positive.examples == CORPUS_LINES else NliTrainingData)(spec, corpus, caches)


def _read_cache(path: str | Path):
    """A cache's columns, checked against its digest: a damaged one is named, with what to do."""
    from ..intermediates import cache_columns, read_cache

    columns = ["original", "augmented", "changed", "flag"]
    if "anchor" in cache_columns(path):
        columns.insert(1, "anchor")
    return read_cache(path, columns=columns)


def augmented_pairs(batch_size: int, proportion: float, seed: int, step: int) -> set[int]:
    """Positions in a batch whose pair keeps the source's positive: exactly round(proportion * batch_size)
    of them, drawn by (seed, step)."""
    n = round(proportion * batch_size)
    return set(random.Random(f"proportion:{seed}:{step}").sample(range(batch_size), n))


class _Examples:
    """What both kinds of examples share: the method's parts, the run's caches checked against them."""

    def __init__(self, spec: dict, corpus: str | Path, caches: list[str] | None):
        self.spec, self.seed, self.corpus = spec, spec["seed"], corpus
        self.method = compose(spec)
        self.caches = list(caches or [])
        planned = self.method.caches(self.seed)
        if len(self.caches) != len(planned):
            readers = [f"positive source '{self.method.positive.name}'"] + (["augmented_view"] if self.method
                                                                              .augmented_view else [])
            readers += [f"{KINDS[part.kind].noun} '{part.name}'" for part in self.method.parts[1:]
                        if part.caches(self.seed)]
            raise ValueError(f"method '{spec['method']}': {' and '.join(readers)} needs --positives with "
                             f"{len(planned)} cache file(s) (got {len(self.caches)})")

    def lowercase(self, texts: list[str]) -> list[str]:
        """`texts` lower-cased when the run trains on lower case (`train.lowercase`), token-level cache entries
        left alone (their tokens are the tokenizer's own)."""
        if not self.spec.get("lowercase"):
            return texts
        from ..models.token_sequences import TOKENS_PREFIX

        return [t if t.startswith(TOKENS_PREFIX) else t.lower() for t in texts]

    def __len__(self) -> int:
        return len(self.lines)


class TrainingData(_Examples):
    """All texts a run trains on, indexed by example (non-empty corpus lines, in corpus order)."""

    def __init__(self, spec: dict, corpus: str | Path, caches: list[str] | None = None):
        from ..data.corpus import read_corpus

        super().__init__(spec, corpus, caches)
        corpus_lines = read_corpus(corpus)
        self.lines = [i for i, ln in enumerate(corpus_lines) if ln.flag != "empty"]
        self.originals = [corpus_lines[i].text for i in self.lines]
        tables = [_read_cache(c) for c in self.caches]
        for path, t in zip(self.caches, tables):
            if len(t) != len(corpus_lines) or (self.lines and t["original"].iat[self.lines[0]] != self.originals[0]):
                raise ValueError(f"cache {path} does not match the corpus {corpus} ({len(t)} rows for "
                                 f"{len(corpus_lines)} lines): it was built from another corpus")
        owners = self.method.cache_owners(self.seed)
        own = {id(part): [(p, t) for p, t, o in zip(self.caches, tables, owners) if o is part]
               for part in self.method.parts}
        required = dict(own[id(part)][i] for part in self.method.parts for i in part.changed_only())
        if required:        # only the lines every such augmentation changed
            changed = [t["changed"].to_numpy(dtype=bool) for t in required.values()]
            usable = len(self.lines)
            self.lines = [i for i in self.lines if all(c[i] for c in changed)]
            if usable and not self.lines:
                raise ValueError(f"method '{spec['method']}' trains only on lines its augmentations changed "
                                 f"(positive.changed_only, cached negatives), but {' and '.join(map(str, required))} "
                                 f"changed none of the {usable} lines of {corpus}")
            self.originals = [corpus_lines[i].text for i in self.lines]
        self.augmented, self.labels = self._augmented_view([t for t, o in zip(tables, owners) if o is None])
        self.originals, self.augmented = self.lowercase(self.originals), self.lowercase(self.augmented)
        loaded = {id(part): part.load(self, [t for _, t in own[id(part)]]) for part in self.method.parts}
        self.negatives = loaded[id(self.method.negatives)]       # one hard negative per example, or None
        self.proportion = self.method.positive.settings.get("proportion", 1.0)

    def _augmented_view(self, tables) -> tuple[list[str], list[int]]:
        if not tables:
            return [], []
        boolean = self.spec.get("labels", "type") == "bool"
        texts = [t["augmented"].tolist() for t in tables]
        changed = [t["changed"].tolist() for t in tables]
        augmented, labels = [], []
        for line in self.lines:
            j = random.Random(f"augmented_view:{self.seed}:{line}").randrange(len(tables))
            augmented.append(texts[j][line])
            labels.append(int(changed[j][line]) if boolean else (j + 1 if changed[j][line] else 0))
        return augmented, labels

    def batch(self, idx: list[int], step: int) -> Batch:
        originals = [self.originals[i] for i in idx]
        anchors, positives = self.method.positive.pair(self, idx, step)
        if self.proportion != 1.0:
            keep = augmented_pairs(len(idx), self.proportion, self.seed, step)
            positives = [p if j in keep else a for j, (a, p) in enumerate(zip(anchors, positives))]
        return Batch([self.lines[i] for i in idx], anchors, positives, originals,
                     [self.augmented[i] for i in idx] if self.augmented else [],
                     [self.labels[i] for i in idx] if self.labels else [],
                     [self.negatives[i] for i in idx] if self.negatives else [])


class NliTrainingData(_Examples):
    """Supervised SimCSE's examples: the triplets of an NLI triplet file (nli_for_simcse.csv's layout)."""

    augmented: list[str] = []
    labels: list[int] = []

    def __init__(self, spec: dict, triplets: str | Path, caches: list[str] | None = None):
        from ..data.nli import read_nli_triplets

        super().__init__(spec, triplets, caches)
        self.rows = read_nli_triplets(triplets)
        self.originals = [t.anchor for t in self.rows]
        self.lines = list(range(len(self.rows)))
        loaded = {id(part): part.load(self, []) for part in self.method.parts}
        self.negatives = loaded[id(self.method.negatives)]       # one hard negative per example, or None

    def batch(self, idx: list[int], step: int) -> Batch:
        anchors, positives = self.method.positive.pair(self, idx, step)
        return Batch(list(idx), anchors, positives, anchors,
                     negatives=[self.negatives[i] for i in idx] if self.negatives else [])
