"""Reader for GLUE's task files (`<data>/glue/<TASK>/<split>.tsv`, the layout of GLUE's download_glue_data.py),
and GLUE's own construction of MRPC's train/dev split.

Files are read with CSV quoting off (`csv.QUOTE_NONE`): some GLUE sentences start with a bare `"`, and with
default quoting the csv module merges rows (STS-B train would read as 5,712 rows instead of 5,749, QNLI dev
as 5,268 instead of 5,463). A UTF-8 BOM (MRPC) is ignored. A malformed row is a ValueError naming the file
and line; QQP's train file alone has a few rows with missing fields, skipped as GLUE's reference processors
do.
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np


@dataclass(frozen=True)
class GlueTask:
    folder: str                       # folder under <data>/glue/
    text_columns: tuple               # header names of the sentence column(s)
    label_column: str
    labels: tuple | None              # class names in label order; None = regression
    eval_splits: tuple = ("dev",)
    header: bool = True
    positional: dict | None = None    # for header-less files: column name -> index


TASKS: dict[str, GlueTask] = {
    # CoLA has no header: source, label, original label (empty), sentence.
    "CoLA": GlueTask("CoLA", ("sentence",), "label", ("0", "1"), header=False,
                     positional={"label": 1, "sentence": 3}),
    "SST-2": GlueTask("SST-2", ("sentence",), "label", ("0", "1")),
    "MRPC": GlueTask("MRPC", ("#1 String", "#2 String"), "Quality", ("0", "1")),
    "RTE": GlueTask("RTE", ("sentence1", "sentence2"), "label", ("entailment", "not_entailment")),
    "STS-B": GlueTask("STS-B", ("sentence1", "sentence2"), "score", None),
    "QQP": GlueTask("QQP", ("question1", "question2"), "is_duplicate", ("0", "1")),
    "QNLI": GlueTask("QNLI", ("question", "sentence"), "label", ("entailment", "not_entailment")),
    "MNLI": GlueTask("MNLI", ("sentence1", "sentence2"), "gold_label", ("contradiction", "entailment", "neutral"),
                     eval_splits=("dev_matched", "dev_mismatched")),
}
ALIASES = {"SST": "SST-2", "SST2": "SST-2", "STS": "STS-B", "STSB": "STS-B"}


def task_spec(task: str) -> GlueTask:
    name = ALIASES.get(task, task)
    if name not in TASKS:
        raise ValueError(f"unknown GLUE task {task!r}; choose from {', '.join(TASKS)}")
    return TASKS[name]


class GlueSplit(NamedTuple):
    text_a: list[str]
    text_b: list[str] | None
    labels: np.ndarray  # int64 class ids, or float64 scores for STS-B


def task_dir(data_dir: str | os.PathLike, task: str) -> Path:
    """A task's folder in a data root laid out like ../shared/data (`<data>/glue/<TASK>`)."""
    return Path(data_dir) / "glue" / task_spec(task).folder


def read_glue(task_dir: str | os.PathLike, split: str, task: str | None = None) -> GlueSplit:
    """One split (`train`, `dev`, `dev_matched`, ...) of the GLUE task whose folder is `task_dir`; the task is
    the folder's name (`.../glue/SST-2`) unless `task` names it."""
    task_dir = Path(task_dir)
    spec = task_spec(task or task_dir.name)
    path = task_dir / f"{split}.tsv"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: GLUE {spec.folder} {split} split not found")
    rows = []  # (line number, fields)
    with open(path, encoding="utf-8-sig", newline="") as f:  # -sig drops MRPC's BOM
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        for fields in reader:
            rows.append((reader.line_num, fields))
    if spec.header:
        if not rows:
            raise ValueError(f"{path}: empty file (expected a header line)")
        header = rows[0][1]
        missing = [c for c in (*spec.text_columns, spec.label_column) if c not in header]
        if missing:
            raise ValueError(f"{path}: header lacks column(s) {', '.join(missing)} (has: {', '.join(header)})")
        cols = {c: header.index(c) for c in (*spec.text_columns, spec.label_column)}
        body = rows[1:]
    else:
        cols, body = spec.positional, rows
    need = max(cols.values()) + 1
    texts = [[] for _ in spec.text_columns]
    labels = []
    for lineno, fields in body:
        if len(fields) < need:
            if spec.folder == "QQP":
                continue
            raise ValueError(f"{path}:{lineno}: {len(fields)} tab-separated fields, expected at least {need}")
        raw = fields[cols[spec.label_column]].strip()
        if spec.labels is None:
            try:
                value = float(raw)
            except ValueError:
                raise ValueError(f"{path}:{lineno}: score {raw!r} is not a number") from None
        else:
            if raw not in spec.labels:
                raise ValueError(f"{path}:{lineno}: label {raw!r} is not one of {', '.join(spec.labels)}")
            value = spec.labels.index(raw)
        labels.append(value)
        for t, c in zip(texts, spec.text_columns):
            t.append(fields[cols[c]])
    if not labels:
        raise ValueError(f"{path}: no examples")
    dtype = np.float64 if spec.labels is None else np.int64
    return GlueSplit(texts[0], texts[1] if len(texts) > 1 else None, np.asarray(labels, dtype=dtype))


def mrpc_split(msr_train: bytes, dev_ids: bytes) -> tuple[bytes, bytes]:
    """GLUE's MRPC train.tsv and dev.tsv, made as download_glue_data.py makes them: from SentEval's
    `msr_paraphrase_train.txt` and GLUE's `mrpc_dev_ids.tsv` (one `id1<TAB>id2` pair a line). Both outputs
    keep the source's header line (with its BOM); every other line is stripped and split on tabs into its 5
    fields, goes to dev when its (#1 ID, #2 ID) pair is listed, else to train, and is written back as the 5
    fields joined by tabs plus `\\n`."""
    ids = {tuple(line.strip().split("\t")) for line in _text_lines(dev_ids) if line.strip()}
    header, *lines = _text_lines(msr_train.removeprefix(b"\xef\xbb\xbf"))
    bom = "\ufeff" if msr_train.startswith(b"\xef\xbb\xbf") else ""
    train, dev = [bom + header + "\n"], [bom + header + "\n"]
    for lineno, line in enumerate(lines, start=2):
        fields = line.strip().split("\t")
        if len(fields) != 5:
            raise ValueError(f"msr_paraphrase_train.txt:{lineno}: {len(fields)} tab-separated fields, expected 5")
        (dev if (fields[1], fields[2]) in ids else train).append("\t".join(fields) + "\n")
    return "".join(train).encode("utf-8"), "".join(dev).encode("utf-8")


def _text_lines(data: bytes) -> list[str]:
    """Lines as Python's text mode reads them (universal newlines; no split on form feeds and the like)."""
    text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
