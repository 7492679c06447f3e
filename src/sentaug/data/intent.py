"""Readers for the few-shot intent sets (SNIPS, BANKING77, CLINC150, HWU64, ATIS) in the DNNC
`fewshot_intent_format` layout: per split folder, `seq.in` (one utterance a line) and `label` (its intent)."""
from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import NamedTuple

DATASETS = {"SNIPS": "snips", "BANKING77": "banking77", "CLINC150": "clinc150", "HWU64": "hwu64", "ATIS": "atis"}
SPLITS = ("train", "valid", "test")
# VaSCL appendix C: ATIS classes with fewer than 40 examples in merged train+valid are dropped (8 remain).
MIN_CLASS_SIZE = {"ATIS": 40}


class Utterances(NamedTuple):
    texts: list[str]
    labels: list[str]


class IntentSet(NamedTuple):
    pool: Utterances   # train + valid merged (few-shot train/validation examples are drawn from it)
    test: Utterances
    classes: list[str]  # sorted; the classes kept (both pool and test are restricted to them)


def split_files(data_dir: str | os.PathLike, name: str, split: str) -> tuple[Path, Path]:
    folder = Path(data_dir) / "intent" / DATASETS[name] / "fewshot_intent_format" / split
    return folder / "seq.in", folder / "label"


def read_split(data_dir: str | os.PathLike, name: str, split: str) -> Utterances:
    seq, lab = split_files(data_dir, name, split)
    for p in (seq, lab):
        if not p.is_file():
            raise FileNotFoundError(f"{p}: file not found")
    texts = seq.read_text(encoding="utf-8").splitlines()
    labels = [x.strip() for x in lab.read_text(encoding="utf-8").splitlines()]
    if len(texts) != len(labels):
        raise ValueError(f"{seq} has {len(texts)} lines but {lab} has {len(labels)}")
    for i, y in enumerate(labels, start=1):
        if not y:
            raise ValueError(f"{lab}:{i}: empty label")
    return Utterances([" ".join(t.split()) for t in texts], labels)


def _keep(u: Utterances, classes: set[str]) -> Utterances:
    rows = [(t, y) for t, y in zip(u.texts, u.labels) if y in classes]
    return Utterances([t for t, _ in rows], [y for _, y in rows])


def read_intent(data_dir: str | os.PathLike, name: str, min_class_size: int | None = None) -> IntentSet:
    """Merged train+valid pool and the test split, restricted to classes with >= `min_class_size` pool
    examples (default: MIN_CLASS_SIZE for ATIS, none otherwise)."""
    if name not in DATASETS:
        raise ValueError(f"unknown intent set {name}; known: {', '.join(DATASETS)}")
    train, valid, test = (read_split(data_dir, name, s) for s in SPLITS)
    pool = Utterances(train.texts + valid.texts, train.labels + valid.labels)
    minimum = MIN_CLASS_SIZE.get(name, 0) if min_class_size is None else min_class_size
    counts = Counter(pool.labels)
    classes = sorted(c for c, n in counts.items() if n >= minimum)
    kept = set(classes)
    return IntentSet(_keep(pool, kept), _keep(test, kept), classes)


def load_intent(data_dir: str | os.PathLike, datasets=tuple(DATASETS)) -> dict[str, IntentSet]:
    unknown = [d for d in datasets if d not in DATASETS]
    if unknown:
        raise ValueError(f"unknown intent set(s) {', '.join(unknown)}; known: {', '.join(DATASETS)}")
    for d in datasets:
        for s in SPLITS:
            for p in split_files(data_dir, d, s):
                if not p.is_file():
                    raise FileNotFoundError(f"{p}: {d} file not found")
    return {d: read_intent(data_dir, d) for d in datasets}
