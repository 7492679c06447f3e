"""Readers for the short-text clustering sets (SCCL / VaSCL / PairSupCon): `clustering/<name>.csv`, columns
`text,label`, in the names amazon-science/sentence-representations' eval_cluster.py expects; and the
conversion of the official `label<TAB>text` files into those CSVs (`raw_to_csv`)."""
from __future__ import annotations

import csv
import io
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


# The official files (rashadulrakib/short-text-clustering-enhancement, data/) each CSV is converted from.
RAW_FILES = {
    "agnews.csv": "agnewsdataraw-8000",
    "searchsnippets.csv": "search_snippets/search_snippets_true_text",
    "stackoverflow.csv": "stackoverflow/stackoverflow_true_text",
    "biomedical.csv": "biomedical/biomedical_true_text",
    "tweet89.csv": "tweet-original-order.txt",
    "googlenews_TS.csv": "TS",
    "googlenews_T.csv": "T",
    "googlenews_S.csv": "S",
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


def raw_to_csv(raw: bytes, name: str = "raw file") -> bytes:
    """An official `label<TAB>text` file (UTF-8, LF or CRLF endings) as a `text,label` CSV (csv-module quoting,
    LF endings): CR characters dropped, label and text stripped of surrounding whitespace, the text split off at
    the first tab (a later tab stays in the text), row order kept."""
    lines = raw.decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["text", "label"])
    for i, line in enumerate(lines, start=1):
        label, tab, text = line.replace("\r", "").partition("\t")
        if not tab or not label.strip():
            raise ValueError(f"{name}:{i}: expected 'label<TAB>text'")
        writer.writerow([text.strip(), label.strip()])
    return buf.getvalue().encode("utf-8")
