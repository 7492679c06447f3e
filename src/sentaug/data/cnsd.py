"""Reader for the Chinese STS-B of CNSD (`cnsd/cnsd-sts-{train,dev,test}.txt`, SDA Table 5).

One pair a line: `id||sentence1||sentence2||score`, an integer similarity score from 0 to 5. Sentences are
kept as they are (Chinese is not whitespace-tokenised). Bad input is a FileNotFoundError / ValueError naming
the file and line.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from .senteval import Pairs

SPLIT_FILES = {"train": "cnsd-sts-train.txt", "dev": "cnsd-sts-dev.txt", "test": "cnsd-sts-test.txt"}


def read_cnsd(path: str | os.PathLike) -> Pairs:
    """Every pair of one CNSD file, scores as float64."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: file not found")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    s1, s2, gold = [], [], []
    for i, line in enumerate(lines, start=1):
        fields = line.strip().split("||")
        if len(fields) != 4:
            raise ValueError(f"{path}:{i}: {len(fields)} '||'-separated fields, expected 4 (id||s1||s2||score)")
        _, a, b, score = fields
        try:
            value = float(score)
        except ValueError:
            raise ValueError(f"{path}:{i}: score {score!r} is not a number") from None
        if not (math.isfinite(value) and 0 <= value <= 5):
            raise ValueError(f"{path}:{i}: score {score!r} is outside 0-5")
        if not a.strip() or not b.strip():
            raise ValueError(f"{path}:{i}: empty sentence")
        s1.append(a.strip())
        s2.append(b.strip())
        gold.append(value)
    if not gold:
        raise ValueError(f"{path}: no pairs")
    return Pairs(s1, s2, np.asarray(gold, dtype=np.float64))


def read_cnsd_split(data_dir: str | os.PathLike, split: str) -> Pairs:
    """One split of CNSD in a data root laid out like ../shared/data (`<data>/cnsd/cnsd-sts-<split>.txt`)."""
    if split not in SPLIT_FILES:
        raise ValueError(f"unknown CNSD split {split!r}; splits: {', '.join(SPLIT_FILES)}")
    return read_cnsd(Path(data_dir) / "cnsd" / SPLIT_FILES[split])
