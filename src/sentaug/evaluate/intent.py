"""Few-shot intent classification (VaSCL Tables 3 and 5) with a linear softmax layer on frozen embeddings.

Protocol (VaSCL section 4.1 and appendix C): train and validation sets are merged into a pool; for each
K in (5, 10, 20) and each of 5 splits, K training and K validation examples per class are drawn from it.
Splits depend only on the data, K, the split index and a fixed seed, never on the model, so every model is
scored on identical splits (the K-shot training set of a split is also contained in its larger-K ones).
A linear layer (nn.Linear, softmax cross-entropy, Adam, lr 1e-4, batch 32, reshuffled every pass) is trained
for 1000 iterations and evaluated on the validation examples every 100 iterations; the reported number is
the test accuracy at the first checkpoint with the best validation accuracy. Mean and sd (numpy's
population sd) over the 5 splits, x100. ATIS keeps its 8 classes with at least 40 pool examples
(sentaug.data.intent). `avg_Kshot` is the mean over VaSCL Table 3's four sets (ATIS is reported apart).
"""
from __future__ import annotations

import contextlib
import time

import numpy as np
import torch
from torch import nn

from ..data.intent import DATASETS, IntentSet, load_intent

@contextlib.contextmanager
def one_thread():
    """Run torch single-threaded inside the block: tiny matmuls, where extra threads only synchronise."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


KS = (5, 10, 20)
N_SPLITS = 5
SPLIT_SEED = 20211  # fixed for every model: the splits are part of the benchmark, not of a run
TABLE3 = ("SNIPS", "BANKING77", "CLINC150", "HWU64")
TRAIN = {"lr": 1e-4, "batch_size": 32, "iterations": 1000, "eval_every": 100}


def fewshot_split(labels: list[str], classes: list[str], k: int, split: int,
                  seed: int = SPLIT_SEED) -> tuple[np.ndarray, np.ndarray]:
    """Pool indices of K training and K validation examples per class for split number `split`.

    Per class (in sorted order) the class's pool indices are permuted by a generator seeded with
    (seed, split); the first K are training, the next K validation. A class with fewer than 2K examples
    gives all its remaining examples to validation (HWU64's `iot_hue_lighton` has 36, so its 20-shot
    validation holds 16); one with K or fewer is a ValueError.
    """
    labels = np.asarray(labels)
    rng = np.random.default_rng([seed, split])
    train, val = [], []
    for c in sorted(classes):
        idx = np.flatnonzero(labels == c)
        if len(idx) <= k:
            raise ValueError(f"class {c!r} has {len(idx)} pool examples, need more than K = {k}")
        perm = rng.permutation(idx)
        train.append(perm[:k])
        val.append(perm[k:2 * k])
    return np.concatenate(train), np.concatenate(val)


def train_linear(xtr, ytr, xval, yval, xte, yte, n_classes: int, seed: int, lr: float = 1e-4,
                 batch_size: int = 32, iterations: int = 1000, eval_every: int = 100) -> dict:
    """Linear softmax classifier; returns validation and test accuracy at each checkpoint and the test
    accuracy at the first best validation checkpoint."""
    with one_thread():
        return _train_linear(xtr, ytr, xval, yval, xte, yte, n_classes, seed, lr, batch_size, iterations, eval_every)


def _train_linear(xtr, ytr, xval, yval, xte, yte, n_classes, seed, lr, batch_size, iterations, eval_every):
    gen = torch.Generator().manual_seed(seed)
    xtr, xval, xte = (torch.as_tensor(np.asarray(a, dtype=np.float32)) for a in (xtr, xval, xte))
    ytr, yval, yte = (torch.as_tensor(np.asarray(a, dtype=np.int64)) for a in (ytr, yval, yte))
    layer = nn.Linear(xtr.shape[1], n_classes)
    with torch.no_grad():
        bound = 1.0 / np.sqrt(xtr.shape[1])
        layer.weight.uniform_(-bound, bound, generator=gen)
        layer.bias.uniform_(-bound, bound, generator=gen)
    opt = torch.optim.Adam(layer.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    val_acc, test_acc, steps = [], [], []
    perm, pos = torch.randperm(len(xtr), generator=gen), 0
    for step in range(1, iterations + 1):
        if pos >= len(perm):
            perm, pos = torch.randperm(len(xtr), generator=gen), 0
        idx = perm[pos:pos + batch_size]
        pos += batch_size
        loss = loss_fn(layer(xtr[idx]), ytr[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % eval_every == 0:
            with torch.no_grad():
                val_acc.append(float((layer(xval).argmax(1) == yval).float().mean()))
                test_acc.append(float((layer(xte).argmax(1) == yte).float().mean()))
            steps.append(step)
    best = int(np.argmax(val_acc))
    return {"steps": steps, "val": val_acc, "test": test_acc, "best_step": steps[best], "test_at_best": test_acc[best]}


def score_intent_set(d: IntentSet, vectors, ks=KS, n_splits: int = N_SPLITS, seed: int = SPLIT_SEED,
                     train=TRAIN) -> dict:
    """{K: {mean, sd, runs, best_steps}} (x100) for one data set."""
    class_id = {c: i for i, c in enumerate(d.classes)}
    xpool, xte = vectors(d.pool.texts), vectors(d.test.texts)
    ypool = np.array([class_id[c] for c in d.pool.labels])
    yte = np.array([class_id[c] for c in d.test.labels])
    out = {}
    for k in ks:
        runs, best_steps = [], []
        for split in range(n_splits):
            tr, va = fewshot_split(d.pool.labels, d.classes, k, split, seed)
            r = train_linear(xpool[tr], ypool[tr], xpool[va], ypool[va], xte, yte, len(d.classes),
                             seed=seed + split, **train)
            runs.append(100 * r["test_at_best"])
            best_steps.append(r["best_step"])
        out[k] = {"mean": round(float(np.mean(runs)), 2), "sd": round(float(np.std(runs)), 2),
                  "runs": [round(x, 4) for x in runs], "best_steps": best_steps}
    return out


def score_intent(data: dict, vectors, ks=KS, n_splits: int = N_SPLITS, progress: bool = False, train=TRAIN) -> dict:
    names = list(data)
    if progress:
        from tqdm.auto import tqdm

        names = tqdm(names, desc="few-shot intent", unit="set")
    res, details = {}, {}
    for name in names:
        details[name] = score_intent_set(data[name], vectors, ks, n_splits, train=train)
        details[name]["n_classes"] = len(data[name].classes)
        details[name]["n_pool"] = len(data[name].pool.texts)
        details[name]["n_test"] = len(data[name].test.texts)
        for k in ks:
            res[f"{name}_{k}shot"] = details[name][k]["mean"]
            res[f"{name}_{k}shot_sd"] = details[name][k]["sd"]
    cols = [c for c in TABLE3 if c in data]
    for k in ks:
        res[f"avg_{k}shot"] = round(float(np.mean([res[f"{c}_{k}shot"] for c in cols])), 2) if cols else float("nan")
    res["details"] = {n: {str(k): v for k, v in d.items()} for n, d in details.items()}
    return res


def evaluate_intent_cli(model, pooler, data, out, datasets=None, ks=KS, n_splits=N_SPLITS, batch_size=128,
                        device=None, scale=None, iterations: int = TRAIN["iterations"], normalize=False) -> dict:
    """`sentaug evaluate intent`: load the sets (fail fast), then the model; write one JSON atomically.
    `iterations` below VaSCL's 1000 is for the demo scale only (the record says how many were run)."""
    from ..io import write_json
    from .embeddings import embed_lookup, load_model, run_metadata

    start = time.perf_counter()
    loaded = load_intent(data, tuple(datasets) if datasets else tuple(DATASETS))
    net, tokenizer = load_model(model, device)
    texts = [t for d in loaded.values() for t in (*d.pool.texts, *d.test.texts)]
    vectors = embed_lookup(net, tokenizer, texts, pooler, batch_size, progress=True, normalize=normalize)
    train = {**TRAIN, "iterations": iterations}
    res = score_intent(loaded, vectors, ks, n_splits, progress=True, train=train)
    record = {**run_metadata(model, pooler, data, scale, start, normalize), "suite": "intent", "ks": list(ks),
              "n_splits": n_splits, "split_seed": SPLIT_SEED, "train": train, **res}
    write_json(out, record)
    print(f"{model} [{pooler}] few-shot intent (test accuracy x100, mean ± sd over {n_splits} splits)")
    for name in loaded:
        print(f"{name:>10} " + "  ".join(f"{k}-shot {res[f'{name}_{k}shot']:.2f} ± {res[f'{name}_{k}shot_sd']:.2f}"
                                         for k in ks))
    return record
