"""2-D projections of sentence embeddings, originals beside their augmentations (AugCSE Figures 2-4).

`sentaug project` embeds a sample of corpus lines and of what each augmentation cache made of them, projects
all the vectors together to two dimensions and writes the coordinates with one label per point ("original"
or the augmentation's name) to a JSON, which a figure panel draws (`sentaug.report.panels_embedding`).

- PCA: scikit-learn's `PCA` (AugCSE: "We use sklearn PCA module for all PCA results").
- t-SNE: scikit-learn's `TSNE` (Barnes-Hut). AugCSE used Multicore-TSNE, another implementation of the same
  algorithm; layouts of two implementations differ in detail (and t-SNE's axes carry no meaning).

Sampling: each augmentation contributes up to `sample` of the rows it changed (AugCSE drops unchanged rows),
drawn with `seed`. The originals are the same rows when there is one augmentation (Figure 3: each sentence and
its augmentation), otherwise `sample` rows drawn from those that at least one augmentation changed.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from .analysis import read_cache_rows

ORIGINAL = "original"
METHODS = ("pca", "tsne")


def pca_2d(x, seed: int = 0) -> tuple[np.ndarray, list[float]]:
    """Coordinates on the first two principal components (centred, unscaled) and their explained variance
    ratios."""
    from sklearn.decomposition import PCA

    pca = PCA(n_components=2, random_state=seed)
    coords = pca.fit_transform(np.asarray(x, dtype=np.float64))
    return coords, [float(v) for v in pca.explained_variance_ratio_]


def tsne_2d(x, seed: int = 0, perplexity: float = 30.0) -> np.ndarray:
    """t-SNE to two dimensions (PCA initialisation, Barnes-Hut); the perplexity is capped below n / 3, as
    scikit-learn requires perplexity < n."""
    from sklearn.manifold import TSNE

    x = np.asarray(x, dtype=np.float64)
    perplexity = min(perplexity, max(2.0, (len(x) - 1) / 3))
    return TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed).fit_transform(x)


def sample_texts(caches: dict[str, str], sample: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """(texts, labels): up to `sample` changed rows of each cache (`{label: path}`) and the originals (above)."""
    rng = np.random.default_rng(seed)
    texts, labels, first, union = [], [], None, None
    originals = None
    for label, path in caches.items():
        df, ok = read_cache_rows(path)
        if originals is None:
            originals, union = df["original"].tolist(), np.zeros(len(df), dtype=bool)
        elif len(df) != len(originals):
            raise ValueError(f"{path}: {len(df)} rows, but the first cache has {len(originals)}: another corpus")
        rows = np.flatnonzero(ok)
        rows = np.sort(rng.choice(rows, min(sample, len(rows)), replace=False))
        first = rows if first is None else first
        union |= ok
        texts += df["augmented"].to_numpy()[rows].tolist()
        labels += [label] * len(rows)
    if originals is None:
        raise ValueError("sample_texts: no augmentation cache given")
    if len(caches) == 1:
        rows = first
    else:
        rows = np.flatnonzero(union)
        rows = np.sort(rng.choice(rows, min(sample, len(rows)), replace=False))
    return [originals[i] for i in rows] + texts, [ORIGINAL] * len(rows) + labels


def project_cli(model: str, pooler: str, caches: list[str], labels: list[str] | None, method: str, out: str,
                sample: int = 200, seed: int = 0, batch_size: int = 128, device=None, scale=None) -> dict:
    """`sentaug project`: embed the sample with `model` under `pooler`, project, write one JSON atomically."""
    import torch
    import transformers

    import sentaug

    from ..io import write_json
    from ..models.encoder import embed, load_pretrained

    if method not in METHODS:
        raise ValueError(f"unknown projection '{method}' (choose from {', '.join(METHODS)})")
    labels = list(labels or [Path(c).parent.name for c in caches])   # results/augment/<corpus>/<aug>/seed<S>
    if len(labels) != len(caches) or len(set(labels)) != len(labels):
        raise ValueError(f"project: {len(caches)} caches need as many distinct labels, got {labels}")
    start = time.perf_counter()
    texts, point_labels = sample_texts(dict(zip(labels, caches)), sample, seed)
    if len(texts) < 3:
        raise ValueError(f"project: only {len(texts)} sentences to project (the caches changed too few rows)")
    net, tokenizer = load_pretrained(model, device)
    x = embed(net, tokenizer, texts, poolers=(pooler,), batch_size=batch_size, progress=True)[pooler]
    record = {"model": str(model), "pooler": pooler, "method": method, "seed": seed, "sample": sample,
              "scale": scale, "caches": dict(zip(labels, map(str, caches)))}
    if method == "pca":
        coords, ratio = pca_2d(x, seed)
        record["explained_variance_ratio"] = ratio
    else:
        coords = tsne_2d(x, seed)
    record.update({"labels": point_labels, "n": {lab: point_labels.count(lab) for lab in dict.fromkeys(point_labels)},
                   "x": [round(float(v), 6) for v in coords[:, 0]], "y": [round(float(v), 6) for v in coords[:, 1]],
                   "seconds": round(time.perf_counter() - start, 2),
                   "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                                "sentaug": sentaug.__version__}})
    write_json(out, record)
    return record
