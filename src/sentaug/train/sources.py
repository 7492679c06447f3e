"""Where each batch's texts come from: the positive source, the augmented view and the negative source.

Positive sources (`positive.source`), each giving the anchor and positive text of corpus line i:
- `dropout` (unsupervised SimCSE): the positive is the anchor itself; two dropout masks make the views.
- `cache`: the cached augmentation of the anchor (SDA and friends); unchanged lines pair with themselves. A
  cache with an ``anchor`` column (an anchored augmentation: SDA's released code trains on the spaCy-tokenised
  sentence) gives the anchor too.
- `switch_case` (CARDS): the positive is a switch-cased copy drawn on the fly, per (seed, step, line),
  as CARDS's collator does; the cache of the same augmentation only serves analysis.
- `two_views` (CLEAR): both sides are augmented, by the same augmentation with two different seeds (two
  caches); the original sentence is kept for the MLM objective.
- `augmented_view` (AugCSE "positive" / "no discriminator"): the positive is the example's augmented view.

The augmented view (`augmented_view: [augmentation, ...]`, AugCSE): each line gets one augmentation drawn
uniformly from the set, fixed for the run by (seed, line) (AugCSE samples once; resampling per epoch did
worse, its footnote 6). Its label is the augmentation's position + 1, or 0 ("unchanged") where that cache
left the line as it was; with `labels: bool` it is 1 if changed, else 0.

A cache may hold token-level positives (CARDS Table 5's re-tokenization and BPE-dropout:
`sentaug.augment.cards.TOKENS_PREFIX` + the tokenizer's tokens); they pass through as such and
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


@dataclass
class Batch:
    lines: list[int]                   # corpus line of each example
    anchors: list[str]
    positives: list[str]
    originals: list[str]               # the sentence as in the corpus (MLM input)
    augmented: list[str] = field(default_factory=list)   # AugCSE's discriminator input
    labels: list[int] = field(default_factory=list)      # class of each augmented text


def _read_cache(path: str | Path):
    import pandas as pd
    import pyarrow.parquet as pq

    columns = ["original", "augmented", "changed", "flag"]
    if "anchor" in pq.read_schema(path).names:
        columns.insert(1, "anchor")
    return pd.read_parquet(path, columns=columns)


def _lower(texts: list[str]) -> list[str]:
    """Lower-cased texts; token-level cache entries are left alone (their tokens are the tokenizer's own)."""
    from ..augment.cards import TOKENS_PREFIX

    return [t if t.startswith(TOKENS_PREFIX) else t.lower() for t in texts]


class TrainingData:
    """All texts a run trains on, indexed by example (non-empty corpus lines, in corpus order)."""

    def __init__(self, spec: dict, corpus: str | Path, caches: list[str] | None = None):
        from ..data.corpus import read_corpus

        self.spec, self.seed, self.corpus = spec, spec["seed"], corpus
        positive = spec["positive"]
        self.source = positive["source"]
        caches = list(caches or [])
        needed = {"cache": 1, "two_views": 2}.get(self.source, 0) + len(spec.get("augmented_view") or [])
        if len(caches) != needed:
            what = f"positive source '{self.source}'" + (" and augmented_view" if spec.get("augmented_view") else "")
            raise ValueError(f"method '{spec['method']}': {what} needs --positives with {needed} cache file(s) "
                             f"(got {len(caches)})")
        corpus_lines = read_corpus(corpus)
        self.lines = [i for i, ln in enumerate(corpus_lines) if ln.flag != "empty"]
        self.originals = [corpus_lines[i].text for i in self.lines]
        tables = [_read_cache(c) for c in caches]
        for path, t in zip(caches, tables):
            if len(t) != len(corpus_lines) or (self.lines and t["original"].iat[self.lines[0]] != self.originals[0]):
                raise ValueError(f"cache {path} does not match the corpus {corpus} ({len(t)} rows for "
                                 f"{len(corpus_lines)} lines): it was built from another corpus")
        if self.source not in ("dropout", "cache", "two_views", "switch_case", "augmented_view"):
            raise ValueError(f"unknown positive source '{self.source}'")
        n_positive = {"cache": 1, "two_views": 2}.get(self.source, 0)
        views = [[t["augmented"].iat[i] for i in self.lines] for t in tables[:n_positive]]
        self.anchors = None             # the cache's own anchors (anchored augmentations), else the corpus lines
        if self.source == "cache" and "anchor" in tables[0].columns:
            self.anchors = [tables[0]["anchor"].iat[i] for i in self.lines]
        self.view_a = views[0] if views else None
        self.view_b = views[1] if len(views) > 1 else None
        tables = tables[n_positive:]
        self.augmented, self.labels = self._augmented_view(tables)
        if self.source == "augmented_view" and not self.augmented:
            raise ValueError(f"method '{spec['method']}': positive source 'augmented_view' needs augmented_view")
        if spec.get("lowercase"):
            self.originals, self.augmented = _lower(self.originals), _lower(self.augmented)
            self.view_a = _lower(self.view_a) if self.view_a is not None else None
            self.view_b = _lower(self.view_b) if self.view_b is not None else None

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

    @property
    def n_classes(self) -> int:
        return 2 if self.spec.get("labels", "type") == "bool" else len(self.spec.get("augmented_view") or []) + 1

    def __len__(self) -> int:
        return len(self.lines)

    def batch(self, idx: list[int], step: int) -> Batch:
        originals = [self.originals[i] for i in idx]
        if self.source == "dropout":
            anchors, positives = originals, originals
        elif self.source == "cache":
            anchors = [self.anchors[i] for i in idx] if self.anchors is not None else originals
            positives = [self.view_a[i] for i in idx]
        elif self.source == "two_views":
            anchors, positives = [self.view_a[i] for i in idx], [self.view_b[i] for i in idx]
        elif self.source == "augmented_view":
            anchors, positives = originals, [self.augmented[i] for i in idx]
        else:  # switch_case, drawn per (seed, step, line): reproducible, and fresh at every step
            from ..augment.cards import switch_case

            p = self.spec["positive"]
            anchors = originals
            positives = [switch_case(t, random.Random(f"{self.seed}:{step}:{self.lines[i]}"), p.get("p", 0.05),
                                     p.get("version", "v1"), p.get("normalize", "none"))
                         for t, i in zip(originals, idx)]
        return Batch([self.lines[i] for i in idx], anchors, positives, originals,
                     [self.augmented[i] for i in idx] if self.augmented else [],
                     [self.labels[i] for i in idx] if self.labels else [])
