"""Readers for SentEval-layout STS data (`STS1x-en-test/`, `STSBenchmark/`, `SICK/`).

They return exactly the pairs SentEval scores, with its normalisation: each sentence is split on whitespace
and re-joined with single spaces (SentEval splits, SimCSE's batcher joins with ' '), gold lines that are
empty mark unscored pairs and are dropped, files are read as UTF-8 with universal newlines (SICK's test file
has CRLF endings). Bad input raises FileNotFoundError / ValueError naming the file (and line), which the CLI
reports in one line.
"""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import NamedTuple

import numpy as np

STS_YEARS = ("STS12", "STS13", "STS14", "STS15", "STS16")
SPLIT_FILES = {
    "STSBenchmark": {"train": "sts-train.csv", "dev": "sts-dev.csv", "test": "sts-test.csv"},
    "SICKRelatedness": {"train": "SICK_train.txt", "dev": "SICK_trial.txt", "test": "SICK_test_annotated.txt"},
}


class Pairs(NamedTuple):
    s1: list[str]
    s2: list[str]
    gold: np.ndarray  # float64, one score per pair


def _norm(sentence: str) -> str:
    return " ".join(sentence.split())


def _split_lines(path: Path) -> list[str]:
    """Lines of a text file without their terminators (\\n, \\r\\n); a missing final newline is fine."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: file not found")
    with open(path, encoding="utf-8") as f:  # universal newlines: \r\n -> \n
        text = f.read()
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def _score(text: str, path: Path, lineno: int) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{path}:{lineno}: gold score {text.strip()!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{path}:{lineno}: gold score {text.strip()!r} is not finite")
    return value


def _fields(line: str, path: Path, lineno: int, need: int) -> list[str]:
    fields = line.split("\t")
    if len(fields) < need:
        what = "no tab" if len(fields) == 1 else f"{len(fields)} tab-separated fields, expected at least {need}"
        raise ValueError(f"{path}:{lineno}: line has {what}")
    return fields


def read_sts_topic(folder: str | os.PathLike, topic: str) -> Pairs:
    """One topic of an STS12-16 folder: `STS.input.<topic>.txt` (two tab-separated sentences a line) and
    `STS.gs.<topic>.txt` (one gold score a line, empty = unscored pair, dropped as SentEval does)."""
    folder = Path(folder)
    inp, gs = folder / f"STS.input.{topic}.txt", folder / f"STS.gs.{topic}.txt"
    inputs, golds = _split_lines(inp), _split_lines(gs)
    if len(inputs) != len(golds):
        raise ValueError(f"{inp} has {len(inputs)} lines but {gs} has {len(golds)}")
    s1, s2, gold = [], [], []
    for i, (line, g) in enumerate(zip(inputs, golds), start=1):
        fields = _fields(line, inp, i, 2)
        if len(fields) != 2:
            raise ValueError(f"{inp}:{i}: line has {len(fields)} tab-separated fields, expected 2")
        if not g.strip():
            continue
        gold.append(_score(g, gs, i))
        s1.append(_norm(fields[0]))
        s2.append(_norm(fields[1]))
    return Pairs(s1, s2, np.asarray(gold, dtype=np.float64))


def sts_topics(folder: str | os.PathLike) -> list[str]:
    """Topics of an STS12-16 folder, discovered from its `STS.input.*.txt` files (STS13 has no SMT)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: STS folder not found")
    topics = sorted(p.name[len("STS.input."):-len(".txt")] for p in folder.glob("STS.input.*.txt"))
    if not topics:
        raise FileNotFoundError(f"{folder}: no STS.input.<topic>.txt files")
    return topics


def read_sts_year(folder: str | os.PathLike) -> dict[str, Pairs]:
    """All topics of one STS12-16 folder (e.g. `.../sts/STS12-en-test`): topic -> scored pairs."""
    return {t: read_sts_topic(folder, t) for t in sts_topics(folder)}


def read_stsb(folder: str | os.PathLike, split: str) -> Pairs:
    """STS Benchmark split in SentEval format: tab-separated, col 4 = score, cols 5 and 6 = sentences."""
    return _scored_pairs(Path(folder) / SPLIT_FILES["STSBenchmark"][split], header=False, n_fields=7, score=4,
                         first=5, second=6)


def read_sick(folder: str | os.PathLike, split: str) -> Pairs:
    """SICK split: a header line, then tab-separated pair_ID, sentence_A, sentence_B, relatedness, ..."""
    return _scored_pairs(Path(folder) / SPLIT_FILES["SICKRelatedness"][split], header=True, n_fields=4, score=3,
                         first=1, second=2)


def _scored_pairs(path: Path, header: bool, n_fields: int, score: int, first: int, second: int) -> Pairs:
    """Tab-separated sentence pairs with a gold score: the fields at `first`, `second` and `score` of each line
    (at least `n_fields`), after a header line if `header`."""
    s1, s2, gold = [], [], []
    for i, line in enumerate(_split_lines(path)[int(header):], start=1 + int(header)):
        fields = _fields(line.strip(), path, i, n_fields)
        gold.append(_score(fields[score], path, i))
        s1.append(_norm(fields[first]))
        s2.append(_norm(fields[second]))
    return Pairs(s1, s2, np.asarray(gold, dtype=np.float64))


def task_folder(data_dir: str | os.PathLike, task: str) -> Path:
    """Where a task lives in a folder laid out like ../shared/data (`sts/...`, `sick/`)."""
    data_dir = Path(data_dir)
    if task in STS_YEARS:
        return data_dir / "sts" / f"{task}-en-test"
    if task == "STSBenchmark":
        return data_dir / "sts" / "STSBenchmark"
    if task == "SICKRelatedness":
        return data_dir / "sick"
    raise ValueError(f"unknown STS task {task!r}")


def read_split(data_dir: str | os.PathLike, task: str, split: str) -> Pairs:
    """One split of STS-B or SICK-R from a data folder laid out like ../shared/data."""
    if task not in SPLIT_FILES or split not in SPLIT_FILES[task]:
        raise ValueError(f"unknown split {task}/{split}; tasks {sorted(SPLIT_FILES)}, splits train/dev/test")
    folder = task_folder(data_dir, task)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: {task} folder not found")
    return (read_stsb if task == "STSBenchmark" else read_sick)(folder, split)
