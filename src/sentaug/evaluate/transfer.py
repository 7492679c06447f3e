"""SentEval transfer tasks on frozen embeddings: MR, CR, SUBJ, MPQA, SST-2, TREC, MRPC.

Protocol (SentEval `senteval/tools/validation.py`, with SimCSE's evaluation.py settings), accuracy x100:
- MR, CR, SUBJ, MPQA: nested k-fold (InnerKFoldClassifier). Outer StratifiedKFold(k, shuffle, seed 1111);
  on each outer train part an inner StratifiedKFold (same settings) picks l2 from REGS by mean inner accuracy
  (rounded to 0.01 like SentEval; ties go to the smaller l2), then a fit on the whole outer train part
  (5% held out for early stopping with the SentEval solver) is scored on the outer test part. Reported:
  mean outer test accuracy, and mean best inner accuracy as `dev`.
- TREC, MRPC: k-fold on the train set picks l2 (KFoldClassifier), then a fit on the whole train set is scored
  on the official test set. MRPC features are [|u - v|, u * v]; its test F1 is recorded too.
- SST-2: l2 picked on the official dev set, scored on the official test set (SplitClassifier).
- `mode`: `test` uses k = 10, `fast` k = 5 (SimCSE's `test` / `fasttest`); it also selects the SentEval
  solver's optimiser settings.

Examples are ordered as SentEval orders them (see sentaug.data.transfer), so folds hold the same examples.
The default classifier is SentEval's early-stopped PyTorch LogReg (`logreg.SentEvalLogReg`, vectorised over
the l2 values); `solver="lbfgs"` solves the same objective to convergence (`logreg.LbfgsLogReg`).
"""
from __future__ import annotations

import time

import numpy as np
from sklearn.metrics import f1_score
from sklearn.model_selection import StratifiedKFold

from ..data.transfer import TASKS, load_transfer
from .logreg import make_classifier

REGS = (1e-5, 1e-4, 1e-3, 1e-2)
KFOLD = {"fast": 5, "test": 10}
SEED = 1111
N_CLASSES = {"TREC": 6}


def _r(x: float) -> float:
    return round(float(x), 2)


def _scan(new_clf, regs, fits) -> list[float]:
    """Mean accuracy x100 (rounded to 0.01) of each l2 in `regs` over `fits` = [(Xtr, ytr, Xval, yval)]
    (each solver's `scan` runs the whole l2 path of one split at once)."""
    acc = np.array([new_clf(regs[-1]).scan(regs, *fit) for fit in fits])      # (splits, regs)
    return [_r(100 * a) for a in acc.mean(0)]


def inner_kfold(X, y, k: int, new_clf, regs=REGS, seed: int = SEED) -> dict:
    """SentEval's InnerKFoldClassifier: nested stratified k-fold; returns dev, test and per-fold details."""
    skf = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    dev, test, chosen = [], [], []
    for tr, te in skf.split(X, y):
        xtr, ytr = X[tr], y[tr]
        fits = [(xtr[a], ytr[a], xtr[b], ytr[b]) for a, b in skf.split(xtr, ytr)]
        scores = _scan(new_clf, regs, fits)
        best = int(np.argmax(scores))
        clf = new_clf(regs[best]).fit(xtr, ytr, validation_split=0.05)
        dev.append(scores[best])
        test.append(_r(100 * clf.score(X[te], y[te])))
        chosen.append(regs[best])
    return {"dev": _r(np.mean(dev)), "test": _r(np.mean(test)), "fold_dev": dev, "fold_test": test,
            "l2": chosen, "n": len(y)}


def kfold_then_test(xtr, ytr, xte, yte, k: int, new_clf, regs=REGS, seed: int = SEED) -> dict:
    """SentEval's KFoldClassifier: stratified k-fold on train picks l2; refit on all of train; score test."""
    skf = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    scores = _scan(new_clf, regs, [(xtr[a], ytr[a], xtr[b], ytr[b]) for a, b in skf.split(xtr, ytr)])
    best = int(np.argmax(scores))
    clf = new_clf(regs[best]).fit(xtr, ytr, validation_split=0.05)
    pred = clf.predict(xte)
    return {"dev": scores[best], "test": _r(100 * np.mean(pred == yte)), "dev_by_l2": scores,
            "l2": regs[best], "pred": pred, "n_train": len(ytr), "n_test": len(yte)}


def split_classifier(xtr, ytr, xdev, ydev, xte, yte, new_clf, regs=REGS) -> dict:
    """SentEval's SplitClassifier: l2 picked on the dev split, then scored on test."""
    scores = _scan(new_clf, regs, [(xtr, ytr, xdev, ydev)])
    best = int(np.argmax(scores))
    clf = new_clf(regs[best]).fit(xtr, ytr, validation_data=(xdev, ydev))
    return {"dev": scores[best], "test": _r(100 * clf.score(xte, yte)), "dev_by_l2": scores, "l2": regs[best],
            "n_train": len(ytr), "n_dev": len(ydev), "n_test": len(yte)}


def mrpc_features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.c_[np.abs(u - v), u * v]


def score_transfer(data: dict, vectors, mode: str = "fast", solver: str = "senteval", progress: bool = False) -> dict:
    """Scores of one embedding function over loaded tasks. `vectors(sentences) -> array`, row-aligned."""
    if mode not in KFOLD:
        raise ValueError(f"mode must be one of {', '.join(KFOLD)}, got {mode!r}")
    k = KFOLD[mode]
    res, details = {}, {}
    tasks = list(data)
    if progress:
        from tqdm.auto import tqdm

        tasks = tqdm(tasks, desc=f"transfer ({mode}, {solver})", unit="task")
    for task in tasks:
        d = data[task]

        def new_clf(l2, n=N_CLASSES.get(task, 2)):
            return make_classifier(solver, l2, n, seed=SEED, mode=mode)

        if task == "SST2":
            det = split_classifier(vectors(d["train"].sentences), d["train"].labels,
                                   vectors(d["dev"].sentences), d["dev"].labels,
                                   vectors(d["test"].sentences), d["test"].labels, new_clf)
        elif task == "TREC":
            det = kfold_then_test(vectors(d["train"].sentences), d["train"].labels,
                                  vectors(d["test"].sentences), d["test"].labels, k, new_clf)
        elif task == "MRPC":
            tr, te = d["train"], d["test"]
            det = kfold_then_test(mrpc_features(vectors(tr.s1), vectors(tr.s2)), tr.labels,
                                  mrpc_features(vectors(te.s1), vectors(te.s2)), te.labels, k, new_clf)
            det["f1"] = _r(100 * f1_score(te.labels, det["pred"]))
        else:
            det = inner_kfold(vectors(d.sentences), d.labels, k, new_clf)
        det.pop("pred", None)
        details[task] = det
        res[task] = det["test"]
    res["avg"] = _r(np.mean([res[t] for t in data]))
    for task in data:
        res[f"{task}_dev"] = details[task]["dev"]
    if "MRPC" in data:
        res["MRPC_f1"] = details["MRPC"]["f1"]
    res["details"] = details
    return res


def all_sentences(data: dict) -> list[str]:
    out = []
    for task, d in data.items():
        for part in (d.values() if isinstance(d, dict) else [d]):
            out += part.s1 + part.s2 if hasattr(part, "s1") else part.sentences
    return list(dict.fromkeys(out))


def evaluate_transfer(model, tokenizer, data: dict, pooler: str, mode: str = "fast", solver: str = "senteval",
                      batch_size: int = 128, progress: bool = False, normalize: bool = False) -> dict:
    """Embed every distinct sentence of the loaded tasks once, then run the protocol."""
    from .embeddings import embed_lookup

    vectors = embed_lookup(model, tokenizer, all_sentences(data), pooler, batch_size, progress, normalize)
    return score_transfer(data, vectors, mode, solver, progress)


def evaluate_transfer_cli(model, pooler, data, out, mode="fast", tasks=None, solver="senteval", batch_size=128,
                          device=None, scale=None, normalize=False) -> dict:
    """`sentaug evaluate transfer`: load the tasks (fail fast), then the model; write one JSON atomically."""
    from ..io import write_json
    from .embeddings import load_model, run_metadata

    start = time.perf_counter()
    loaded = load_transfer(data, tuple(tasks) if tasks else TASKS)
    net, tokenizer = load_model(model, device)
    res = evaluate_transfer(net, tokenizer, loaded, pooler, mode, solver, batch_size, progress=True,
                            normalize=normalize)
    record = {**run_metadata(model, pooler, data, scale, start, normalize), "suite": "transfer", "mode": mode,
              "solver": solver, "kfold": KFOLD[mode], "regs": list(REGS), **res}
    write_json(out, record)
    names = [*loaded, "avg"]
    print(f"{model} [{pooler}] transfer ({mode}, {solver}; test accuracy x100)")
    print(" ".join(n.rjust(7) for n in names))
    print(" ".join(f"{res[n]:.2f}".rjust(7) for n in names))
    return record
