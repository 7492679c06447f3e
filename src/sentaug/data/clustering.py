"""Readers for the short-text clustering sets (SCCL / VaSCL / PairSupCon): `clustering/<name>.csv`, columns
`text,label`, in the names amazon-science/sentence-representations' eval_cluster.py expects."""
from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import NamedTuple

import numpy as np

DATASETS = {
    "AgNews": "agnews.csv",
    "SearchSnippets": "searchsnippets.csv",
    "StackOverflow": "stackoverflow.csv",
    "Biomedical": "biomedical.csv",
    "Tweet": "tweet89.csv",
    "GoogleNews-TS": "googlenews_TS.csv",
    "GoogleNews-T": "googlenews_T.csv",
    "GoogleNews-S": "googlenews_S.csv",
}


class ClusterSet(NamedTuple):
    texts: list[str]
    labels: np.ndarray  # int64 class ids 0..C-1 in order of first appearance of each label value
    n_classes: int


def read_cluster_csv(path: str | os.PathLike) -> ClusterSet:
    """One `text,label` CSV (csv-module quoting, UTF-8); labels may be any strings."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: file not found")
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header != ["text", "label"]:
            raise ValueError(f"{path}: header is {header}, expected ['text', 'label']")
        texts, raw = [], []
        for i, row in enumerate(reader, start=2):
            if len(row) != 2:
                raise ValueError(f"{path}:{i}: {len(row)} fields, expected 2 (text,label)")
            texts.append(row[0])
            raw.append(row[1].strip())
    ids = {v: i for i, v in enumerate(dict.fromkeys(raw))}
    return ClusterSet(texts, np.array([ids[v] for v in raw], dtype=np.int64), len(ids))


def load_clustering(data_dir: str | os.PathLike, datasets=tuple(DATASETS)) -> dict[str, ClusterSet]:
    """{name: ClusterSet}; every file is checked before any is read."""
    root = Path(data_dir) / "clustering"
    unknown = [d for d in datasets if d not in DATASETS]
    if unknown:
        raise ValueError(f"unknown clustering set(s) {', '.join(unknown)}; known: {', '.join(DATASETS)}")
    for d in datasets:
        if not (root / DATASETS[d]).is_file():
            raise FileNotFoundError(f"{root / DATASETS[d]}: {d} file not found")
    return {d: read_cluster_csv(root / DATASETS[d]) for d in datasets}
