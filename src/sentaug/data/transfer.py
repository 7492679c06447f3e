"""Readers for SentEval's transfer tasks (MR, CR, SUBJ, MPQA, SST-2, TREC, MRPC) in its `downstream/` layout.

They return the examples SentEval classifies, in SentEval's order and with its normalisation, so that the
k-fold splits (StratifiedKFold, shuffle, seed 1111) fall on the same examples as in SentEval:
- tokens are whitespace-split and re-joined with single spaces (SimCSE's batcher joins with ' ');
- MR/CR/SUBJ/MPQA and TREC are read as latin-1, SST-2 and MRPC as UTF-8 (as SentEval does);
- each split is sorted by (token count, label) as SentEval sorts before encoding (MRPC: by the two token
  counts, then label). The sort is stable, so ties keep file order.
Bad input raises FileNotFoundError / ValueError naming the file and line.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import numpy as np

TASKS = ("MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC")
# label 1 file, label 0 file (SentEval's BinaryClassifierEval(pos, neg); SUBJ: objective is label 1)
BINARY_FILES = {
    "MR": ("MR/rt-polarity.pos", "MR/rt-polarity.neg"),
    "CR": ("CR/custrev.pos", "CR/custrev.neg"),
    "SUBJ": ("SUBJ/subj.objective", "SUBJ/subj.subjective"),
    "MPQA": ("MPQA/mpqa.pos", "MPQA/mpqa.neg"),
}
SST_FILES = {"train": "SST/binary/sentiment-train", "dev": "SST/binary/sentiment-dev",
             "test": "SST/binary/sentiment-test"}
TREC_FILES = {"train": "TREC/train_5500.label", "test": "TREC/TREC_10.label"}
TREC_CLASSES = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")
MRPC_FILES = {"train": "MRPC/msr_paraphrase_train.txt", "test": "MRPC/msr_paraphrase_test.txt"}


class Labelled(NamedTuple):
    sentences: list[str]
    labels: np.ndarray  # int64


class PairLabelled(NamedTuple):
    s1: list[str]
    s2: list[str]
    labels: np.ndarray  # int64


def task_files(task: str) -> list[str]:
    """Every file (relative to the transfer folder) that `task` reads."""
    if task in BINARY_FILES:
        return list(BINARY_FILES[task])
    return list({"SST2": SST_FILES, "TREC": TREC_FILES, "MRPC": MRPC_FILES}[task].values())


def _lines(path: Path, encoding: str) -> list[str]:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: file not found")
    with open(path, encoding=encoding) as f:
        return f.read().splitlines()


def _tokens(text: str) -> list[str]:
    return text.split()


def _sorted(tokens: list[list[str]], labels: list[int]) -> Labelled:
    order = sorted(zip(tokens, labels), key=lambda z: (len(z[0]), z[1]))
    return Labelled([" ".join(t) for t, _ in order], np.array([y for _, y in order], dtype=np.int64))


def read_binary(root: str | os.PathLike, task: str) -> Labelled:
    """MR, CR, SUBJ or MPQA: one sentence a line in a label-1 file and a label-0 file."""
    pos, neg = (Path(root) / f for f in BINARY_FILES[task])
    pos_lines, neg_lines = _lines(pos, "latin-1"), _lines(neg, "latin-1")
    return _sorted([_tokens(x) for x in pos_lines + neg_lines], [1] * len(pos_lines) + [0] * len(neg_lines))


def read_sst2(root: str | os.PathLike) -> dict[str, Labelled]:
    """SST-2 train/dev/test: `sentence<TAB>label` a line."""
    def parse(line: str):
        fields = line.strip().split("\t")
        return (fields[0], int(fields[1])) if len(fields) == 2 and fields[1] in ("0", "1") else None

    return _labelled_splits(root, SST_FILES, "utf-8", parse, "'sentence<TAB>0|1'")


def read_trec(root: str | os.PathLike) -> dict[str, Labelled]:
    """TREC train/test: `COARSE:fine question tokens` a line; the 6 coarse classes are the labels."""
    def parse(line: str):
        target, _, rest = line.strip().partition(":")
        return (rest.split(" ", 1)[1], TREC_CLASSES.index(target)) if target in TREC_CLASSES and " " in rest \
            else None

    return _labelled_splits(root, TREC_FILES, "latin-1", parse, "'COARSE:fine question'")


def _labelled_splits(root: str | os.PathLike, files: dict[str, str], encoding: str, parse,
                     expected: str) -> dict[str, Labelled]:
    """Each split of `files` (split -> path under `root`), a (sentence, label) a line as `parse` reads it (None:
    a line not in the format, named with the `expected` one)."""
    out = {}
    for split, rel in files.items():
        path = Path(root) / rel
        toks, labels = [], []
        for i, line in enumerate(_lines(path, encoding), start=1):
            parsed = parse(line)
            if parsed is None:
                raise ValueError(f"{path}:{i}: expected {expected}, got {line[:60]!r}")
            toks.append(_tokens(parsed[0]))
            labels.append(parsed[1])
        out[split] = _sorted(toks, labels)
    return out


def read_mrpc(root: str | os.PathLike) -> dict[str, PairLabelled]:
    """MRPC train/test: tab-separated `Quality, #1 ID, #2 ID, #1 String, #2 String` after a header line."""
    out = {}
    for split, rel in MRPC_FILES.items():
        path = Path(root) / rel
        rows = []
        for i, line in enumerate(_lines(path, "utf-8")[1:], start=2):
            fields = line.strip().split("\t")
            if len(fields) != 5 or fields[0] not in ("0", "1"):
                raise ValueError(f"{path}:{i}: expected 5 tab-separated fields starting with 0|1")
            rows.append((_tokens(fields[3]), _tokens(fields[4]), int(fields[0])))
        rows.sort(key=lambda z: (len(z[0]), len(z[1]), z[2]))
        out[split] = PairLabelled([" ".join(a) for a, _, _ in rows], [" ".join(b) for _, b, _ in rows],
                                  np.array([y for _, _, y in rows], dtype=np.int64))
    return out


def transfer_folder(data_dir: str | os.PathLike) -> Path:
    """The transfer root inside a data folder laid out like ../shared/data (`<data>/transfer`)."""
    return Path(data_dir) / "transfer"


def load_transfer(data_dir: str | os.PathLike, tasks=TASKS) -> dict:
    """{task: data} for the selected tasks; checks every file first so a wrong folder fails before any model loads."""
    root = transfer_folder(data_dir)
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        raise ValueError(f"unknown transfer task(s) {', '.join(unknown)}; known: {', '.join(TASKS)}")
    for task in tasks:
        for rel in task_files(task):
            if not (root / rel).is_file():
                raise FileNotFoundError(f"{root / rel}: {task} file not found")
    readers = {"SST2": read_sst2, "TREC": read_trec, "MRPC": read_mrpc}
    return {t: readers[t](root) if t in readers else read_binary(root, t) for t in tasks}
