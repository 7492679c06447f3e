"""STS evaluation with SimCSE's SentEval protocol, computed in one encoding pass.

Protocol (princeton-nlp/SimCSE `evaluation.py` + `SentEval/senteval/sts.py`): cosine similarity of the two
sentence embeddings against the gold score, Spearman x100. STS12-16 report the "all" setting (one Spearman
over every scored pair of a year, topics concatenated); `mean` and `wmean` (per-topic Spearman averaged,
plainly or weighted by pair count) are recorded too. STS-B and SICK-R report the test split, unsupervised
(no regressor); dev is recorded separately. No truncation.

Unlike SentEval, every sentence of every task is de-duplicated and embedded in a single `embed` call
(length-sorted batches, one forward pass for several poolers), and the train splits, which the STS numbers
never use, are not encoded. Scores do not depend on batching, so the numbers are SentEval's.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import torch

from ..correlation import average_ranks, correlations, cosine, pearson, spearman  # noqa: F401  (re-exported)
from ..data.senteval import STS_YEARS, Pairs, read_split, read_sts_year, task_folder
from ..models.encoder import embed

TASKS = (*STS_YEARS, "STSBenchmark", "SICKRelatedness")
EVAL_SPLITS = ("dev", "test")  # STS-B / SICK-R splits we score (SentEval also encodes train, unused here)


def load_suite(data_dir: str | os.PathLike) -> dict[str, dict[str, Pairs]]:
    """Every pair the suite scores: {STS12: {topic: Pairs}, ..., STSBenchmark: {dev, test}, SICKRelatedness: ...}.

    Checks every folder first so that a wrong `data_dir` fails with one clear message before any model loads.
    """
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise FileNotFoundError(f"{data_dir}: data folder not found")
    for task in TASKS:
        if not task_folder(data_dir, task).is_dir():
            raise FileNotFoundError(f"{task_folder(data_dir, task)}: {task} folder not found")
    suite = {y: read_sts_year(task_folder(data_dir, y)) for y in STS_YEARS}
    for task in ("STSBenchmark", "SICKRelatedness"):
        suite[task] = {s: read_split(data_dir, task, s) for s in EVAL_SPLITS}
    return suite


def lowercase_suite(suite: dict[str, dict[str, Pairs]]) -> dict[str, dict[str, Pairs]]:
    """The suite with every sentence lower-cased (CARDS Table 4: upper case ignored in evaluation). Of the
    SentEval files only SICK is cased; the STS12-16 and STS-B files ship lower-cased already."""
    return {task: {part: Pairs([x.lower() for x in p.s1], [x.lower() for x in p.s2], p.gold)
                   for part, p in parts.items()} for task, parts in suite.items()}


def _year_details(topics: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict:
    """SentEval's STSEval.run aggregation: per topic, concatenated ("all"), mean and pair-weighted mean."""
    per = {t: correlations(sys, gold) for t, (sys, gold) in topics.items()}
    weights = np.array([per[t]["n"] for t in per], dtype=np.float64)
    out = {"all": correlations(np.concatenate([s for s, _ in topics.values()]),
                               np.concatenate([g for _, g in topics.values()]))}
    out["all"].pop("n")
    for name, w in (("mean", None), ("wmean", weights)):
        out[name] = {k: float(np.average([per[t][k] for t in per], weights=w)) for k in ("spearman", "pearson")}
    out["topics"] = per
    return out


def score_suite(suite: dict[str, dict[str, Pairs]], vectors) -> dict:
    """Scores of one pooler. `vectors(sentences) -> array` returns that pooler's embeddings, row-aligned."""
    def sys_scores(p: Pairs) -> np.ndarray:
        return cosine(vectors(p.s1), vectors(p.s2))

    res, details = {}, {}
    for year in STS_YEARS:
        details[year] = _year_details({t: (sys_scores(p), p.gold) for t, p in suite[year].items()})
        res[year] = details[year]["all"]["spearman"]
    for task in ("STSBenchmark", "SICKRelatedness"):
        details[task] = {s: correlations(sys_scores(p), p.gold) for s, p in suite[task].items()}
        res[task] = details[task]["test"]["spearman"]
    res["avg"] = float(np.mean([res[t] for t in TASKS]))
    res["STSBenchmark_dev"] = details["STSBenchmark"]["dev"]["spearman"]
    res["SICKRelatedness_dev"] = details["SICKRelatedness"]["dev"]["spearman"]
    res["details"] = details
    return res


def _all_sentences(suite) -> list[str]:
    return list(dict.fromkeys(s for task in suite.values() for p in task.values() for s in (*p.s1, *p.s2)))


def evaluate_suite(model, tokenizer, suite, poolers=("cls_before_pooler",), batch_size: int = 128,
                   progress: bool = False, normalize: bool = False) -> dict[str, dict]:
    """Embed every distinct sentence of a loaded suite once (all poolers per forward pass), then score."""
    sentences = _all_sentences(suite)
    row = {s: i for i, s in enumerate(sentences)}
    emb = embed(model, tokenizer, sentences, poolers=tuple(poolers), batch_size=batch_size, progress=progress,
                normalize=normalize)
    return {p: score_suite(suite, lambda ss, m=emb[p]: m[[row[s] for s in ss]]) for p in poolers}


def evaluate_sts(model, tokenizer, data_dir: str | os.PathLike, poolers=("cls_before_pooler",),
                 batch_size: int = 128, progress: bool = False) -> dict[str, dict]:
    """STS12-16, STS-B and SICK-R for each pooler: {pooler: {STS12, ..., avg, *_dev, details}} (x100)."""
    return evaluate_suite(model, tokenizer, load_suite(data_dir), poolers, batch_size, progress)


def n_pairs(suite) -> dict[str, int]:
    out = {y: sum(len(p.gold) for p in suite[y].values()) for y in STS_YEARS}
    for task in ("STSBenchmark", "SICKRelatedness"):
        out[task] = len(suite[task]["test"].gold)
        out[f"{task}_dev"] = len(suite[task]["dev"].gold)
    return out


def format_table(res: dict) -> str:
    names = [*TASKS, "avg"]
    heads = ["STS-B" if n == "STSBenchmark" else "SICK-R" if n == "SICKRelatedness" else n for n in names]
    width = [max(7, len(h)) for h in heads]
    return "\n".join([" ".join(h.rjust(w) for h, w in zip(heads, width)),
                      " ".join(f"{res[n]:.2f}".rjust(w) for n, w in zip(names, width))])


def evaluate_sts_cli(model, pooler, data, out, batch_size=128, device=None, scale=None, lowercase=False,
                     normalize=False) -> dict:
    """`sentaug evaluate sts`: load data (fail fast), then the model; evaluate; write one JSON atomically.
    `lowercase`: every sentence lower-cased first (recorded in the JSON)."""
    import torch
    import transformers

    import sentaug

    from ..io import write_json
    from ..models.encoder import load_pretrained

    start = time.perf_counter()
    suite = load_suite(data)
    if lowercase:
        suite = lowercase_suite(suite)
    net, tokenizer = load_pretrained(model, device)
    res = evaluate_suite(net, tokenizer, suite, (pooler,), batch_size, progress=True, normalize=normalize)[pooler]
    from ..models.hub import model_source

    record = {"model": str(model), "model_source": model_source(model), "pooler": pooler, "normalize": normalize,
              "data": str(data), "scale": scale, "lowercase": bool(lowercase),
              **{k: res[k] for k in (*TASKS, "avg", "STSBenchmark_dev", "SICKRelatedness_dev")},
              "n_pairs": n_pairs(suite), "seconds": round(time.perf_counter() - start, 2),
              "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                           "sentaug": sentaug.__version__},
              "details": res["details"]}
    write_json(out, record)
    print(f"{model} [{pooler}] (Spearman x100; STS-B dev {res['STSBenchmark_dev']:.2f})")
    print(format_table(res))
    return record
