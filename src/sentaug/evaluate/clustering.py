"""Short-text clustering (VaSCL Tables 2 and 4): K-means on frozen embeddings, k = number of classes.

Per data set, K-means (scikit-learn, k-means++ init, `n_init` restarts) runs once for each of `seeds`
(10 independent runs). Each run is scored by clustering accuracy under the best one-to-one matching of
clusters to classes (Hungarian algorithm, `scipy.optimize.linear_sum_assignment`), NMI and ARI; the JSON
reports mean and sd (numpy's population sd) over the runs, x100. Embeddings are clustered as the encoder
gives them (no normalisation), as SCCL/VaSCL's evaluation does. `avg` is the mean accuracy over the six
VaSCL columns (GoogleNews = its title+snippet version, TS).
"""
from __future__ import annotations

import time

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from ..data.clustering import DATASETS, load_clustering

SEEDS = tuple(range(10))
PAPER_COLUMNS = ("AgNews", "SearchSnippets", "StackOverflow", "Biomedical", "Tweet", "GoogleNews-TS")


def contingency(y_true, y_pred) -> np.ndarray:
    """counts[cluster, class] over integer-coded labels."""
    _, t = np.unique(np.asarray(y_true), return_inverse=True)
    _, p = np.unique(np.asarray(y_pred), return_inverse=True)
    counts = np.zeros((p.max() + 1, t.max() + 1), dtype=np.int64)
    np.add.at(counts, (p, t), 1)
    return counts


def hungarian_accuracy(y_true, y_pred) -> float:
    """Fraction of examples correct under the best one-to-one map of clusters to classes."""
    if len(y_true) != len(y_pred) or len(y_true) == 0:
        raise ValueError(f"need equally long, non-empty label arrays, got {len(y_true)} and {len(y_pred)}")
    counts = contingency(y_true, y_pred)
    rows, cols = linear_sum_assignment(counts, maximize=True)
    return float(counts[rows, cols].sum() / len(y_true))


def cluster_scores(y_true, y_pred) -> dict:
    return {"acc": hungarian_accuracy(y_true, y_pred), "nmi": float(normalized_mutual_info_score(y_true, y_pred)),
            "ari": float(adjusted_rand_score(y_true, y_pred))}


def kmeans_runs(X: np.ndarray, y: np.ndarray, k: int, seeds=SEEDS, n_init: int = 1) -> dict:
    """K-means once per seed; {metric: {mean, sd, runs}} with metrics x100."""
    runs = []
    X = np.asarray(X, dtype=np.float64)
    for seed in seeds:
        pred = KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit_predict(X)
        runs.append(cluster_scores(y, pred))
    out = {}
    for m in ("acc", "nmi", "ari"):
        vals = np.array([100 * r[m] for r in runs])
        out[m] = {"mean": round(float(vals.mean()), 2), "sd": round(float(vals.std()), 2),
                  "runs": [round(float(v), 4) for v in vals]}
    return out


def score_clustering(data: dict, vectors, seeds=SEEDS, n_init: int = 1, progress: bool = False) -> dict:
    """Scores of one embedding function over loaded sets. `vectors(texts) -> array`, row-aligned."""
    names = list(data)
    if progress:
        from tqdm.auto import tqdm

        names = tqdm(names, desc="k-means", unit="set")
    res, details = {}, {}
    for name in names:
        d = data[name]
        details[name] = {**kmeans_runs(vectors(d.texts), d.labels, d.n_classes, seeds, n_init),
                         "n": len(d.texts), "k": d.n_classes}
        res[name] = details[name]["acc"]["mean"]
    cols = [c for c in PAPER_COLUMNS if c in data]
    res["avg"] = round(float(np.mean([res[c] for c in cols])), 2) if cols else float("nan")
    for name in data:
        res[f"{name}_nmi"] = details[name]["nmi"]["mean"]
        res[f"{name}_ari"] = details[name]["ari"]["mean"]
    res["details"] = details
    return res


def evaluate_clustering_cli(model, pooler, data, out, datasets=None, seeds=SEEDS, n_init=1, batch_size=128,
                            device=None, scale=None, normalize=False) -> dict:
    """`sentaug evaluate clustering`: load the sets (fail fast), then the model; write one JSON atomically."""
    from ..io import write_json
    from .embeddings import embed_lookup, load_model, run_metadata

    start = time.perf_counter()
    loaded = load_clustering(data, tuple(datasets) if datasets else tuple(DATASETS))
    net, tokenizer = load_model(model, device)
    texts = [t for d in loaded.values() for t in d.texts]
    vectors = embed_lookup(net, tokenizer, texts, pooler, batch_size, progress=True, normalize=normalize)
    res = score_clustering(loaded, vectors, seeds, n_init, progress=True)
    record = {**run_metadata(model, pooler, data, scale, start, normalize), "suite": "clustering", "seeds": list(seeds),
              "n_init": n_init, "avg_over": [c for c in PAPER_COLUMNS if c in loaded], **res}
    write_json(out, record)
    print(f"{model} [{pooler}] clustering (accuracy x100, mean over {len(seeds)} seeds)")
    print(" ".join(n[:14].rjust(14) for n in [*loaded, "avg"]))
    print(" ".join(f"{res[n]:.2f}".rjust(14) for n in [*loaded, "avg"]))
    return record
