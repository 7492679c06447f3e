"""Positive sources: which sentence each anchor is contrasted with.

- `dropout` (unsupervised SimCSE): the positive is the anchor itself; the two dropout masks make the views.
- `cache`: the positive is the cached augmentation of the anchor (SDA and friends). Sentences the
  augmentation left unchanged are paired with themselves, i.e. fall back to dropout, as SDA does.
Lines the corpus reader flagged as empty are not trained on.
"""
from __future__ import annotations

from pathlib import Path


def load_pairs(positive: dict, corpus: str | Path, positives: str | Path | None = None) -> tuple[list[str], list[str]]:
    source = positive["source"]
    if source == "dropout":
        from ..data.corpus import read_corpus

        texts = [line.text for line in read_corpus(corpus) if line.flag != "empty"]
        return texts, list(texts)
    if source == "cache":
        import pandas as pd

        if not positives:
            raise ValueError(f"positive source 'cache' ({positive.get('augmentation')}) needs --positives FILE.parquet")
        table = pd.read_parquet(positives, columns=["original", "augmented", "flag"])
        table = table[table["flag"] != "empty"]
        return table["original"].tolist(), table["augmented"].tolist()
    raise ValueError(f"unknown positive source '{source}'")
