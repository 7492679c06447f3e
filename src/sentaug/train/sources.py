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
- `nli` (supervised SimCSE, AugCSE Tables 2 and 14): examples are NLI triplets (premise, entailed, contradicted
  hypothesis; `NliTrainingData`), not corpus lines; the anchor is the premise and the positive the hypothesis
  named by `positive.use` (entailment, or contradiction for AugCSE's "contradiction as pos" rows). The triplet
  file (`positive.triplets`, resolved per scale by `sentaug.config.train_spec`) is passed as the corpus.

Hard negatives per example (`negatives.source`, beside the in-batch negatives; `sentaug.train.method` adds them
as one extra column block, seen by every anchor or, with `shared: false`, by its own anchor only):
- `cache` (AugCSE Table 1, eq. 1): the example's cached augmentation. With `only_changed` (default true) the
  lines the augmentation left unchanged are dropped, as AugCSE removes data points without a successful
  negative augmentation.
- `nli`: the triplet's other hypothesis (`negatives.use`: contradiction, or entailment).

`positive.proportion` (SDA Figure 2a; default 1): the share of a batch's pairs whose positive comes from the
source; the other pairs use the anchor itself, i.e. SimCSE's dropout positive. Exactly round(p * B) pairs of a
batch of B are drawn, by (seed, step), so a resumed run draws what an uninterrupted one would. The paper fixes
x % of the *dataset's* sentences; drawing per batch gives every batch the same share (the same in expectation).

`positive.changed_only: true` (AugCSE appendix A.14, single augmentations as positives) trains only on the
lines the positive's augmentation changed.

`positive.changed_only: true` (AugCSE appendix A.14, single augmentations as positives) trains only on the
lines the positive's augmentation changed. Negative source `cache` (`negatives: {source: cache,
augmentation: X}`, AugCSE Section 3.1 / Figure 6) gives each example the cached augmentation as a hard
negative; lines that augmentation left unchanged are dropped, as AugCSE does ("we remove datapoints that do
not have a successful negative augmentation"): their negative would be the anchor itself.

The augmented view (`augmented_view: [augmentation, ...]`, AugCSE): each line gets one augmentation drawn
uniformly from the set, fixed for the run by (seed, line) (AugCSE samples once; resampling per epoch did
worse, its footnote 6). Its label is the augmentation's position + 1, or 0 ("unchanged") where that cache
left the line as it was; with `labels: bool` it is 1 if changed, else 0.

A cache may hold token-level positives (CARDS Table 5's re-tokenization and BPE-dropout:
`sentaug.augment.token_sequences`: TOKENS_PREFIX + the tokenizer's tokens); they pass through as such and
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
    negatives: list[str] = field(default_factory=list)   # one hard negative per example (cache / nli)


def negative_source(spec: dict) -> dict:
    """The method's `negatives` in dict form (`in_batch` -> {source: in_batch})."""
    value = spec.get("negatives", "in_batch")
    return {"source": value} if isinstance(value, str) else dict(value)


def discriminator_classes(spec: dict) -> int:
    """AugCSE's discriminator classes: one per augmentation plus "unchanged" (`labels: bool`: two)."""
    return 2 if spec.get("labels", "type") == "bool" else len(spec.get("augmented_view") or []) + 1


NLI_FIELDS = {"entailment": 1, "contradiction": 2}     # NLITriplet fields: anchor, positive, negative


def training_data(spec: dict, corpus: str | Path, caches: list[str] | None = None):
    """The examples of a run: NLI triplets for the `nli` positive source, else the corpus lines."""
    if spec["positive"]["source"] == "nli":
        if caches:
            raise ValueError(f"method '{spec['method']}': the nli source reads no augmentation cache")
        return NliTrainingData(spec, corpus)
    return TrainingData(spec, corpus, caches)


def _read_cache(path: str | Path):
    """A cache's columns, checked against its digest: a damaged one is named, with what to do."""
    from ..intermediates import cache_columns, read_cache

    columns = ["original", "augmented", "changed", "flag"]
    if "anchor" in cache_columns(path):
        columns.insert(1, "anchor")
    return read_cache(path, columns=columns)


def _lower(texts: list[str]) -> list[str]:
    """Lower-cased texts; token-level cache entries are left alone (their tokens are the tokenizer's own)."""
    from ..augment.token_sequences import TOKENS_PREFIX

    return [t if t.startswith(TOKENS_PREFIX) else t.lower() for t in texts]


def augmented_pairs(batch_size: int, proportion: float, seed: int, step: int) -> set[int]:
    """Positions in a batch whose pair keeps the source's positive: exactly round(proportion * batch_size)
    of them, drawn by (seed, step)."""
    n = round(proportion * batch_size)
    return set(random.Random(f"proportion:{seed}:{step}").sample(range(batch_size), n))


class TrainingData:
    """All texts a run trains on, indexed by example (non-empty corpus lines, in corpus order)."""

    def __init__(self, spec: dict, corpus: str | Path, caches: list[str] | None = None):
        from ..data.corpus import read_corpus

        self.spec, self.seed, self.corpus = spec, spec["seed"], corpus
        positive = spec["positive"]
        self.source = positive["source"]
        caches = list(caches or [])
        negative = negative_source(spec)
        if negative["source"] == "nli":
            raise ValueError(f"method '{spec['method']}': nli negatives need the nli positive source")
        negative_cache = negative["source"] == "cache"
        needed = ({"cache": 1, "two_views": 2}.get(self.source, 0) + len(spec.get("augmented_view") or [])
                  + negative_cache)
        if len(caches) != needed:
            what = f"positive source '{self.source}'" + (" and augmented_view" if spec.get("augmented_view") else "")
            what += " and cached negatives" if negative_cache else ""
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
        negative_table = tables.pop() if negative_cache else None     # the last cache (config.method_caches)
        required = {caches[-1]: negative_table} if negative_cache and negative.get("only_changed", True) else {}
        if positive.get("changed_only"):
            if self.source != "cache":
                raise ValueError(f"method '{spec['method']}': positive.changed_only needs positive source 'cache'")
            required[caches[0]] = tables[0]
        if required:        # only the lines every such augmentation changed
            changed = [t["changed"].to_numpy(dtype=bool) for t in required.values()]
            usable = len(self.lines)
            self.lines = [i for i in self.lines if all(c[i] for c in changed)]
            if usable and not self.lines:
                raise ValueError(f"method '{spec['method']}' trains only on lines its augmentations changed "
                                 f"(positive.changed_only, cached negatives), but {' and '.join(map(str, required))} "
                                 f"changed none of the {usable} lines of {corpus}")
            self.originals = [corpus_lines[i].text for i in self.lines]
        self.negatives = [negative_table["augmented"].iat[i] for i in self.lines] if negative_cache else None
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
        self.proportion = float(positive.get("proportion", 1.0))
        if not 0.0 <= self.proportion <= 1.0:
            raise ValueError(f"method '{spec['method']}': positive.proportion must lie in [0, 1], "
                             f"got {self.proportion}")
        if self.proportion != 1.0 and self.source in ("dropout", "two_views"):
            raise ValueError(f"method '{spec['method']}': positive.proportion mixes a source's positives with "
                             f"the dropout positive; it does not apply to source '{self.source}'")

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
        return discriminator_classes(self.spec)

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
        if self.proportion != 1.0:
            keep = augmented_pairs(len(idx), self.proportion, self.seed, step)
            positives = [p if j in keep else a for j, (a, p) in enumerate(zip(anchors, positives))]
        return Batch([self.lines[i] for i in idx], anchors, positives, originals,
                     [self.augmented[i] for i in idx] if self.augmented else [],
                     [self.labels[i] for i in idx] if self.labels else [],
                     [self.negatives[i] for i in idx] if self.negatives else [])


class NliTrainingData:
    """Supervised SimCSE's examples: the triplets of an NLI triplet file (nli_for_simcse.csv's layout)."""

    augmented: list[str] = []
    labels: list[int] = []
    n_classes = 0

    def __init__(self, spec: dict, triplets: str | Path):
        from ..data.nli import read_nli_triplets

        self.spec, self.seed, self.corpus = spec, spec["seed"], triplets
        positive, negative = spec["positive"], negative_source(spec)
        uses = [("positive.use", positive.get("use", "entailment"))]
        if negative["source"] == "nli":
            uses.append(("negatives.use", negative.get("use", "contradiction")))
        elif negative["source"] != "in_batch":
            raise ValueError(f"method '{spec['method']}': the nli source takes in_batch or nli negatives, "
                             f"not '{negative['source']}'")
        for key, use in uses:
            if use not in NLI_FIELDS:
                raise ValueError(f"method '{spec['method']}': {key} must be one of {', '.join(NLI_FIELDS)}")
        if spec.get("augmented_view"):
            raise ValueError(f"method '{spec['method']}': the nli source has no augmented view")
        rows = read_nli_triplets(triplets)
        self.originals = [t.anchor for t in rows]
        self.positives = [t[NLI_FIELDS[uses[0][1]]] for t in rows]
        self.negatives = [t[NLI_FIELDS[uses[1][1]]] for t in rows] if len(uses) > 1 else None
        self.lines = list(range(len(rows)))

    def __len__(self) -> int:
        return len(self.lines)

    def batch(self, idx: list[int], step: int) -> Batch:
        anchors = [self.originals[i] for i in idx]
        return Batch(list(idx), anchors, [self.positives[i] for i in idx], anchors,
                     negatives=[self.negatives[i] for i in idx] if self.negatives else [])
