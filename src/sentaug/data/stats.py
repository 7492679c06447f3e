"""Statistics of the evaluation data, computed from the files through the package's own readers (SDA Table 2,
VaSCL Table 4). `sentaug data-stats <what> --data DIR --out FILE.json` writes one JSON atomically.

- `sts`: pairs per split of STS12-16 (test only: the scored pairs of the "all" setting, as evaluated), STS-B,
  SICK-R and the Chinese STS-B (CNSD). A split a task does not have counts 0, as SDA's table prints it.
- `clustering`: per short-text clustering set, N (texts), mean words per text (whitespace tokens), classes and
  the imbalance number (largest class / smallest class).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

STATS = ("sts", "clustering")
SPLITS = ("train", "dev", "test")
# The data folders each statistic reads under a data root (they are the inputs of the rule that writes it).
STATS_DATA = {"sts": ["sts", "sick", "cnsd"], "clustering": ["clustering"]}


def sts_stats(data_dir: str | os.PathLike) -> dict:
    """{task: {split: pairs}} for STS12-16, STSBenchmark, SICKRelatedness and CNSD."""
    from .cnsd import read_cnsd_split
    from .senteval import STS_YEARS, read_split, read_sts_year, task_folder

    out = {}
    for year in STS_YEARS:
        pairs = read_sts_year(task_folder(data_dir, year))
        out[year] = {"train": 0, "dev": 0, "test": sum(len(p.gold) for p in pairs.values())}
    for task in ("STSBenchmark", "SICKRelatedness"):
        out[task] = {split: len(read_split(data_dir, task, split).gold) for split in SPLITS}
    out["CNSD"] = {split: len(read_cnsd_split(data_dir, split).gold) for split in SPLITS}
    return out


def clustering_stats(data_dir: str | os.PathLike) -> dict:
    """{data set: {N, mean_words, classes, imbalance}} for the eight clustering sets."""
    from .clustering import load_clustering

    out = {}
    for name, s in load_clustering(data_dir).items():
        sizes = np.bincount(s.labels)
        out[name] = {"N": len(s.texts), "mean_words": float(np.mean([len(t.split()) for t in s.texts])),
                     "classes": s.n_classes, "imbalance": float(sizes.max() / sizes.min())}
    return out


def data_stats_cli(what: str, data: str | os.PathLike, out: str | os.PathLike) -> dict:
    from ..io import write_json

    if what not in STATS:
        raise ValueError(f"unknown statistic {what!r}; choose from {', '.join(STATS)}")
    if not Path(data).is_dir():
        raise FileNotFoundError(f"{data}: data folder not found")
    record = {"stats": what, "data": str(data),
              **(sts_stats(data) if what == "sts" else clustering_stats(data))}
    write_json(out, record)
    return record
