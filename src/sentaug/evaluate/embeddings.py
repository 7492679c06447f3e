"""Shared plumbing of the downstream suites (transfer, clustering, intent): load a model, embed every
distinct sentence once, and the metadata each result JSON records."""
from __future__ import annotations

import os
import time

import numpy as np

from ..models.encoder import embed


def load_model(path: str | os.PathLike, device: str | None = None):
    from pathlib import Path

    from ..models.encoder import load_pretrained

    if not Path(path).exists():
        raise FileNotFoundError(f"{path}: model folder not found")
    return load_pretrained(path, device)


def embed_lookup(model, tokenizer, sentences: list[str], pooler: str, batch_size: int = 128,
                 progress: bool = False, normalize: bool = False):
    """Embed `sentences` (one pass, de-duplicated, length-sorted by `embed`; L2-normalised when `normalize`);
    returns `vectors(list) -> array`."""
    unique = list(dict.fromkeys(sentences))
    row = {s: i for i, s in enumerate(unique)}
    emb = embed(model, tokenizer, unique, poolers=(pooler,), batch_size=batch_size, progress=progress,
                normalize=normalize)[pooler]

    def vectors(ss: list[str]) -> np.ndarray:
        return emb[np.fromiter((row[s] for s in ss), dtype=np.int64, count=len(ss))]

    return vectors


def run_metadata(model, pooler, data, scale, start: float, normalize: bool = False) -> dict:
    import torch
    import transformers

    import sentaug

    from ..models.hub import model_source

    return {"model": str(model), "model_source": model_source(model), "pooler": pooler, "normalize": normalize,
            "data": str(data), "scale": scale,
            "seconds": round(time.perf_counter() - start, 2),
            "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                         "sentaug": sentaug.__version__}}
