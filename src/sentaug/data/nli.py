"""Readers for natural-language-inference data in the three layouts the workflow meets:

- NLI pairs in SentEval's layout (SNLI dev/test as SentEval ships them): `s1.<split>` (premises),
  `s2.<split>` (hypotheses) and `labels.<split>` (entailment / neutral / contradiction), line i of the three
  files forming pair i; tokens are whitespace-split and re-joined with single spaces, as SentEval does.
- NLI triplets (SimCSE's supervised training file `nli_for_simcse.csv`): a CSV with the header
  `sent0,sent1,hard_neg` (anchor, entailed positive, contradicted hard negative), csv-module quoting.
- ANLI's jsonl release (`R1/dev.jsonl`, ...): one JSON object a line with `context`, `hypothesis` and
  `label` e / n / c.

Pairs come back as `NLIPair(premise, hypothesis, label)` with the label spelled out, so that SNLI and ANLI
records are interchangeable. Bad input is a FileNotFoundError / ValueError naming the file and line.
"""
from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import NamedTuple

LABELS = ("entailment", "neutral", "contradiction")
ANLI_LABELS = {"e": "entailment", "n": "neutral", "c": "contradiction"}
TRIPLET_HEADER = ["sent0", "sent1", "hard_neg"]


class NLIPair(NamedTuple):
    premise: str
    hypothesis: str
    label: str  # one of LABELS


class NLITriplet(NamedTuple):
    anchor: str     # sent0
    positive: str   # sent1 (entailed)
    negative: str   # hard_neg (contradiction)


def _lines(path: Path) -> list[str]:
    """Lines without their terminators (universal newlines); a missing final newline is fine."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: file not found")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def read_nli_pairs(folder: str | os.PathLike, split: str) -> list[NLIPair]:
    """One split (`train`, `dev`, `test`) of NLI pairs in SentEval's layout under `folder`."""
    folder = Path(folder)
    paths = [folder / f"{name}.{split}" for name in ("s1", "s2", "labels")]
    s1, s2, labels = (_lines(p) for p in paths)
    if not len(s1) == len(s2) == len(labels):
        raise ValueError(f"{folder}: {split} files differ in length: {paths[0].name} {len(s1)}, "
                         f"{paths[1].name} {len(s2)}, {paths[2].name} {len(labels)} lines")
    pairs = []
    for i, (a, b, y) in enumerate(zip(s1, s2, labels), start=1):
        for path, text in ((paths[0], a), (paths[1], b)):
            if not text.strip():
                raise ValueError(f"{path}:{i}: empty sentence")
        if y.strip() not in LABELS:
            raise ValueError(f"{paths[2]}:{i}: label {y.strip()!r} is not one of {', '.join(LABELS)}")
        pairs.append(NLIPair(" ".join(a.split()), " ".join(b.split()), y.strip()))
    if not pairs:
        raise ValueError(f"{folder}: no {split} pairs")
    return pairs


def read_nli_triplets(csv_path: str | os.PathLike) -> list[NLITriplet]:
    """SimCSE's `nli_for_simcse.csv`: header `sent0,sent1,hard_neg`, then one triplet a row (a quoted field
    may span lines; the line named in an error is the one the row ends on)."""
    path = Path(csv_path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: file not found")
    triplets = []
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        try:
            header = next(reader, None)
            if header != TRIPLET_HEADER:
                raise ValueError(f"{path}:1: header is {header}, expected {TRIPLET_HEADER}")
            for row in reader:
                if len(row) != 3:
                    raise ValueError(f"{path}:{reader.line_num}: {len(row)} fields, expected 3 "
                                     f"({','.join(TRIPLET_HEADER)})")
                empty = [name for name, text in zip(TRIPLET_HEADER, row) if not text.strip()]
                if empty:
                    raise ValueError(f"{path}:{reader.line_num}: empty {empty[0]}")
                triplets.append(NLITriplet(*row))
        except csv.Error as e:
            raise ValueError(f"{path}:{reader.line_num}: {e}") from None
    if not triplets:
        raise ValueError(f"{path}: no triplets")
    return triplets


def read_anli(path: str | os.PathLike) -> list[NLIPair]:
    """One ANLI jsonl file (e.g. `anli/R1/dev.jsonl`): premise = `context`, label e/n/c spelled out."""
    path = Path(path)
    pairs = []
    for i, line in enumerate(_lines(path), start=1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}:{i}: not a JSON object ({e.msg})") from None
        if not isinstance(record, dict):
            raise ValueError(f"{path}:{i}: not a JSON object")
        missing = [k for k in ("context", "hypothesis", "label") if not isinstance(record.get(k), str)]
        if missing:
            raise ValueError(f"{path}:{i}: no string field {missing[0]!r}")
        if record["label"] not in ANLI_LABELS:
            raise ValueError(f"{path}:{i}: label {record['label']!r} is not one of e, n, c")
        for key in ("context", "hypothesis"):
            if not record[key].strip():
                raise ValueError(f"{path}:{i}: empty {key}")
        pairs.append(NLIPair(record["context"], record["hypothesis"], ANLI_LABELS[record["label"]]))
    if not pairs:
        raise ValueError(f"{path}: no examples")
    return pairs
